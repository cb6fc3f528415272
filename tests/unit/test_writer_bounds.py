"""Bounds on a cloud writer's stream (issue 31; services/ask/bounded.py, services/ask/writers/fallback.py): the
whole answer path (``answer_question``) over the in-memory ports of test_answer_usecase.py, with
generator writers that are slow, endless, huge, stalled or answer while every stream slot is taken.
The budget's clock is a fake one that each piece moves on, so the deadline is met without waiting
for it; the stalled writer blocks for real, and the answer must not wait for it."""

from __future__ import annotations

import threading
import time

from services.ask import bounded
from services.ask.answer import AnswerConfig, AnswerRequest, answer_question
from services.ask.domain import Done
from services.ask.ports import AskPorts

from test_answer_usecase import A, HASHING, FakeIndex, FakeStore, embed  # the use case's in-memory ports

Q = "How does chaining resolve collisions?"
VALID = ("Chaining resolves collisions by keeping a linked list in each slot [S1 @ 0:41]. ",
         "Every key that hashes to a slot is appended to the linked list of that slot [S1 @ 0:48]. ")


class FakeClock:
    """Monotonic seconds that move only when told to."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class GenWriter:
    """A writer whose stream is ``pieces(clock)``; records how many pieces were read and when the
    stream was closed (``closed``: set by the generator's ``finally``)."""

    name = "groq"

    def __init__(self, pieces, clock: FakeClock):
        self.pieces, self.clock = pieces, clock
        self.read = 0
        self.started = False
        self.closed = threading.Event()

    def stream(self, question, passages, reason=None):
        def gen():
            self.started = True
            try:
                for piece in self.pieces(self.clock):
                    self.read += 1
                    yield piece
            finally:
                self.closed.set()
        return gen()

    def complete(self, system, user, max_tokens=120):
        raise AssertionError("not used")


def _answer(writer, clock, *, slots=None, still_wanted=lambda: True, deadline_s=4.0, max_chars=4000):
    store = FakeStore()
    ports = AskPorts(store=store, index=FakeIndex(), embed=embed, writers=[writer], clock=clock,
                     new_id=lambda: "30000000-0000-4000-8000-000000000001", writer_slots=slots)
    events = list(answer_question(AnswerRequest(A, None, Q), ports, AnswerConfig(writer_deadline_s=deadline_s,
                                                                                 writer_max_chars=max_chars),
                                  still_wanted=still_wanted))
    return events, store


def _extractive(done: Done, reason: str) -> None:
    assert not done.declined and done.writer == "extractive" and done.reason == reason
    assert done.sentences and all(s.cites for s in done.sentences)
    assert {c.lecture_id for s in done.sentences for c in s.cites} == {HASHING}


def test_an_endless_stream_is_given_up_at_the_deadline_for_the_extractive_answer():
    def endless(clock):
        while True:
            clock.now += 0.3  # "blah " every 0.3 s, no sentence end
            yield "blah "

    clock = FakeClock()
    writer = GenWriter(endless, clock)
    events, store = _answer(writer, clock)
    _extractive(events[-1], bounded.TOOK_TOO_LONG)
    assert writer.closed.wait(2) and 4.0 / 0.3 - 1 <= writer.read <= 4.0 / 0.3 + 3
    assert store.records[0].reason == bounded.TOOK_TOO_LONG


def test_a_huge_answer_with_no_full_stop_is_cut_at_max_chars_and_fails_that_writer():
    def huge(clock):
        for _ in range(40_000):  # 4 MB
            yield "blah " * 20

    clock = FakeClock()
    writer = GenWriter(huge, clock)
    t0 = time.perf_counter()
    events, _ = _answer(writer, clock)
    _extractive(events[-1], bounded.ANSWER_TOO_LONG)
    assert writer.closed.wait(2) and writer.read <= 4000 // 100 + 2
    assert time.perf_counter() - t0 < 5


def test_a_slow_answer_keeps_what_was_shown_by_the_deadline_and_says_it_was_cut_short():
    def slow(clock):
        for piece in (VALID[0], *VALID[1].split(" ")):  # the second sentence takes 10 s, a word each 0.5 s
            clock.now += 0.5
            yield piece + " "

    clock = FakeClock()
    writer = GenWriter(slow, clock)
    events, _ = _answer(writer, clock)
    done = events[-1]
    assert done.writer == "groq" and not done.declined and done.reason == bounded.TOOK_TOO_LONG
    assert [s.text for s in done.sentences] == ["Chaining resolves collisions by keeping a linked list in each slot."]
    assert writer.closed.wait(2)


def test_a_stalled_stream_does_not_hold_the_answer_past_the_deadline():
    release = threading.Event()

    def stalled(clock):
        yield "Chaining keeps "
        release.wait(30)  # no byte for longer than the deadline (a real stall: the HTTP read waits)
        yield "a linked list. "

    writer = GenWriter(stalled, time.perf_counter)
    t0 = time.perf_counter()
    events, _ = _answer(writer, time.perf_counter, deadline_s=0.6)
    took = time.perf_counter() - t0
    _extractive(events[-1], bounded.TOOK_TOO_LONG)
    assert took < 3, took
    assert not writer.closed.is_set()  # its reading thread still waits on the stalled read ...
    release.set()
    assert writer.closed.wait(2)  # ... and closes the stream at its next piece, not the garbage collector


def test_with_every_stream_slot_taken_the_extractive_writer_answers_at_once():
    slots = threading.BoundedSemaphore(1)
    slots.acquire()
    clock = FakeClock()
    writer = GenWriter(lambda clock: iter(VALID), clock)
    events, _ = _answer(writer, clock, slots=slots)
    _extractive(events[-1], bounded.BUSY)
    assert not writer.started
    slots.release()  # the slot taken above; the semaphore would refuse one more release
    events, _ = _answer(writer, clock, slots=slots)
    assert events[-1].writer == "groq" and events[-1].reason == ""
    assert writer.closed.wait(2)
    assert slots.acquire(blocking=False)  # the stream gave its slot back


def test_a_client_that_leaves_stops_the_reading_at_once():
    gone = threading.Event()

    def endless(clock):
        while True:
            if writer.read == 5:
                gone.set()
            clock.now += 0.01
            yield "blah "

    clock = FakeClock()
    writer = GenWriter(endless, clock)
    events, store = _answer(writer, clock, still_wanted=lambda: not gone.is_set())
    assert events == [] and store.records == []
    assert writer.closed.wait(2) and writer.read <= 5 + 3  # the reading thread runs at most a piece ahead
