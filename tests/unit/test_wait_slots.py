"""WaitSlots (lecturecopilot.waiting): threads one client holds waiting for its bytes, capped."""

import threading

from lecturecopilot.waiting import WaitSlots


def test_a_client_takes_up_to_its_share_and_others_are_not_counted_against_it():
    slots = WaitSlots(2)
    assert slots.take("10.0.0.1") and slots.take("10.0.0.1")
    assert not slots.take("10.0.0.1"), "a third thread was given to one client with a share of 2"
    assert slots.take("10.0.0.2"), "another client was refused for the first one's threads"
    slots.give("10.0.0.1")
    assert slots.held("10.0.0.1") == 1 and slots.take("10.0.0.1")
    for _ in range(2):
        slots.give("10.0.0.1")
    assert slots.held("10.0.0.1") == 0


def test_no_cap_when_the_share_is_zero():
    slots = WaitSlots(0)
    assert all(slots.take("10.0.0.1") for _ in range(100)) and slots.held("10.0.0.1") == 100


def test_concurrent_takes_never_exceed_the_share():
    slots, granted, lock = WaitSlots(3), [], threading.Lock()
    barrier = threading.Barrier(16)

    def go():
        barrier.wait()
        if slots.take("c"):
            with lock:
                granted.append(1)

    threads = [threading.Thread(target=go) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(granted) == 3 == slots.held("c")
