"""A slow or endless answer-writer stream stalls no one (issue 31): the real stack against the fake of
the writers' HTTP APIs (tests/fakes/llm_server.py) in the modes ``slow``, ``endless``, ``huge`` and
``stalled``. Each answer comes within the writers' deadline (``LC_WRITER_DEADLINE_S`` = 4 s in
tests/conftest.py) and a margin, is the extractive answer with valid citations, says why in
``reason``, and ask stops reading the stream. With more pathological streams open than ask keeps
(``LC_WRITER_STREAMS_MAX``, 6), another user's search and question are answered at once."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
import requests

pytestmark = pytest.mark.slow

DEADLINE_S = 4.0
MARGIN_S = 3.0  # retrieval, the extractive writer and the relays, on a loaded 2-core machine
Q = "How does merge sort combine the two sorted halves?"
VTT = """WEBVTT

00:00:01.000 --> 00:00:08.000
Merge sort is a divide and conquer algorithm.

00:00:08.000 --> 00:00:16.000
It splits the array into two halves and sorts each half recursively.

00:00:16.000 --> 00:00:26.000
Then it merges the two sorted halves with two pointers, always taking the smaller front element.

00:00:26.000 --> 00:00:32.000
Merge sort runs in order n log n time.
"""


@pytest.fixture(scope="module")
def course(stack):
    """A course of one captions-only lecture about merge sort."""
    course_id = stack.create_course("Algorithms (writer bounds)")
    r = requests.post(f"{stack.base}/api/courses/{course_id}/lectures", headers=stack.admin,
                      files={"captions": ("merge.vtt", VTT.encode(), "text/vtt")},
                      data={"title": "Merge sort", "number": "31"}, timeout=60)
    assert r.status_code == 202, r.text
    assert stack.wait_ready(r.json()["lecture_id"], timeout_s=300)["status"] == "ready"
    return course_id


def _ask(stack, course_id: str, question: str = Q) -> tuple[float, dict]:
    t0 = time.perf_counter()
    r = requests.post(f"{stack.base}/api/courses/{course_id}/ask", json={"question": question}, timeout=60)
    took = time.perf_counter() - t0
    assert r.status_code == 200, r.text
    return took, r.json()


def _assert_extractive(ans: dict, reason: str) -> None:
    assert ans["writer"] == "extractive" and not ans["declined"] and ans["reason"] == reason, ans
    for s in ans["sentences"]:
        assert s["citations"] and all(
            any(src["lecture_id"] == c["lecture_id"] and src["start_s"] - 0.01 <= c["t_s"] <= src["end_s"] + 0.01
                for src in ans["sources"]) for c in s["citations"]), (s, ans["sources"])
    assert ans["sentences"]


def _no_stream_open(fake_llm, within_s: float) -> bool:
    end = time.monotonic() + within_s
    while fake_llm.streams_open and time.monotonic() < end:
        time.sleep(0.1)
    return fake_llm.streams_open == 0


@pytest.mark.parametrize("provider,mode,reason", [
    ("groq", "slow", "writer_took_too_long"),  # the first sentence would end after the deadline
    ("groq", "endless", "writer_took_too_long"),
    ("gemini", "endless", "writer_took_too_long"),
    ("groq", "huge", "writer_answer_too_long"),
])
def test_a_pathological_stream_gives_the_extractive_answer_in_time_and_is_closed(stack, course, modes, fake_llm,
                                                                                provider, mode, reason):
    assert _no_stream_open(fake_llm, 10)  # left from an earlier test
    modes(**{provider: mode})
    took, ans = _ask(stack, course)
    assert took < DEADLINE_S + MARGIN_S, took
    _assert_extractive(ans, reason)
    asked = [r for r in fake_llm.requests if r["provider"] == provider]
    assert asked and all(r["max_tokens"] == 400 for r in asked)  # LC_WRITER_MAX_TOKENS reaches the API
    assert _no_stream_open(fake_llm, 3), "ask still reads the stream"


def test_a_stream_that_stalls_mid_answer_times_out_and_says_so(stack, course, modes, fake_llm):
    """The first words, then nothing: the stream's read time-out (LC_WRITER_TIMEOUT_S = 1.5 s) ends it,
    which the SDK raises as httpx's ReadTimeout mid-stream (it used to fail the whole answer)."""
    fake_llm.stall_s = 6.0  # the fake's thread then writes to a closed connection and ends
    modes(groq="stalled")
    took, ans = _ask(stack, course)
    assert took < DEADLINE_S + MARGIN_S, took
    _assert_extractive(ans, "writer_took_too_long")
    ask_log = (stack.settings.data_dir / "logs" / "ask.log").read_text()
    assert "ReadTimeout" in ask_log


def test_other_users_are_answered_at_once_while_eight_endless_streams_run(stack, course, modes, fake_llm):
    """Eight questions meet an endless writer: six hold ask's writer streams until the deadline, two
    (and any other question meanwhile) get the extractive answer at once (``writers_busy``); ask's
    other threads answer a search as fast as ever."""
    assert _no_stream_open(fake_llm, 10)
    modes(groq="endless")
    results: list[tuple[float, dict]] = []
    threads = [threading.Thread(target=lambda: results.append(_ask(stack, course))) for _ in range(8)]
    for t in threads:
        t.start()
    end = time.monotonic() + DEADLINE_S
    while fake_llm.streams_open < 6 and time.monotonic() < end:
        time.sleep(0.05)
    assert fake_llm.streams_open == 6  # LC_WRITER_STREAMS_MAX
    t0 = time.perf_counter()
    r = requests.post(f"{stack.base}/api/courses/{course}/search", json={"query": "merge two sorted halves"},
                      timeout=30)
    search_s = time.perf_counter() - t0
    assert r.status_code == 200 and r.json()["results"], r.text
    other_s, other = _ask(stack, course, "What does merge sort split the array into?")
    assert fake_llm.streams_open == 6  # all this happened while the six streams ran
    assert search_s < 1.5 and other_s < 1.5, (search_s, other_s)
    _assert_extractive(other, "writers_busy")
    for t in threads:
        t.join(60)
    assert len(results) == 8 and all(took < DEADLINE_S + MARGIN_S for took, _ in results), results
    assert Counter(ans["reason"] for _, ans in results) == {"writer_took_too_long": 6, "writers_busy": 2}
    for _, ans in results:
        _assert_extractive(ans, ans["reason"])
    assert _no_stream_open(fake_llm, 3), "ask still reads the streams"
