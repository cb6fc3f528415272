"""Live progress streams (SSE) hold a gateway thread each: they are capped per person and in total
(429 ``too_many_streams``, the page then polls), plain requests stay fast while the caps are
reached, and a stream's slot comes back when it ends."""

from __future__ import annotations

import time
import uuid

import pytest
import requests

from web_helpers import mint

pytestmark = pytest.mark.slow


def _open(base: str, lecture: str, headers=None):
    return requests.get(f"{base}/api/lectures/{lecture}/events", headers=headers or {}, stream=True, timeout=30)


def test_streams_are_capped_per_person_and_in_total_and_freed_when_they_end(stack):
    base, s = stack.base, stack.settings
    assert (s.max_event_streams, s.max_event_streams_person) == (6, 3)  # the defaults this test counts on
    course = stack.create_course("Live streams")
    lecture = str(uuid.uuid4())
    with stack.db() as conn:  # a lecture that stays queued: its stream stays open
        conn.execute("INSERT INTO lectures (id, course_id, number, title, status, stage) "
                     "VALUES (%s, %s, 1, 'Waiting', 'queued', 'queued')", (lecture, course))
    held = []
    try:
        held += [_open(base, lecture) for _ in range(3)]  # a visitor's three
        assert all(r.status_code == 200 for r in held)
        r = _open(base, lecture)
        assert r.status_code == 429 and r.json()["error"]["code"] == "too_many_streams", r.text
        assert r.headers["Retry-After"] == "5"
        people = [mint(stack, "student", f"stream-{i}@example.edu") for i in range(4)]
        for who in people[:3]:  # three more people: six streams in all
            held.append(_open(base, lecture, who))
            assert held[-1].status_code == 200
        r = _open(base, lecture, people[3])  # a fourth person meets the process's cap
        assert r.status_code == 429 and r.json()["error"]["code"] == "too_many_streams"
        # plain requests still have threads
        t0 = time.perf_counter()
        assert requests.get(f"{base}/api/courses/{course}", timeout=10).status_code == 200
        assert time.perf_counter() - t0 < 5
        # the lecture ends: every stream says so and closes, and the slots come back
        with stack.db() as conn:
            conn.execute("UPDATE lectures SET status='failed', stage='failed', error='test' WHERE id=%s", (lecture,))
        for r in held:
            assert '"status": "failed"' in r.text  # reads to the end of the stream
        deadline = time.time() + 10
        while (r := _open(base, lecture, people[3])).status_code == 429 and time.time() < deadline:
            time.sleep(0.5)
        assert r.status_code == 200 and '"status": "failed"' in r.text
    finally:
        for r in held:
            r.close()
        with stack.db() as conn:
            conn.execute("DELETE FROM lectures WHERE id=%s", (lecture,))
