"""The rerank step (issue 33, item 4; services/ask/rerank.py) against the fake of the OpenAI-compatible
APIs (tests/fakes/llm_server.py): the model's order is used when its reply names the listed passages;
a slow model, a failing one (500, 503), an over-quota one (429), a reply that does not parse, and one
naming passages that were never listed (another course's, made up) all leave the search order
unchanged, and the answer is never held up past the cap.

First the reranker as ask builds it from Settings, over HTTP (quick); then through the whole stack's
ask path (``POST /api/courses/{id}/ask``; ``LC_RERANK_TIMEOUT_S`` = 1.5 s in tests/conftest.py), where
the answer's ``sources`` are the passages it was written from, in the order the rerank left them."""

from __future__ import annotations

import json
import time

import pytest
import requests

from lecturecopilot.settings import Settings
from services.ask import rerank
from services.ask.retrieve import Passage
from services.ask.search_index import Hit

CAP_S = 1.5  # LC_RERANK_TIMEOUT_S in tests/conftest.py, and the cap of the quick tests
MARGIN_S = 3.0  # retrieval, the extractive writer and the relays, on a loaded 2-core machine (test_writer_bounds.py)


def _passages(n: int) -> list[Passage]:
    return [Passage(Hit(f"pt{i}", "lec", 1, i, 30.0 * i, 30.0 * i + 29, f"Passage number {i} about merging.", 1.0), 1.0)
            for i in range(n)]


def _set(fake_llm, **kw) -> None:
    requests.post(f"{fake_llm.url}/_mode", json={"groq": "down", "gemini": "down", **kw}, timeout=5).raise_for_status()


@pytest.fixture
def reranker(fake_llm):
    """The reranker ask builds for a Groq key whose API is the fake (cap ``CAP_S``)."""
    r = rerank.configured_reranker(Settings(_env_file=None, groq_api_key="gsk_test", groq_base_url=fake_llm.url,
                                            writer_order="groq,gemini", rerank_timeout_s=CAP_S))
    yield r
    r.close()
    _set(fake_llm)


def test_the_models_order_is_kept_over_http(reranker, fake_llm):
    _set(fake_llm, rerank="reverse")
    ps = _passages(12)
    out = rerank.reranked(reranker, "How are two halves merged?", lambda k: ps[:k])
    assert [p.hit.point_id for p in out] == [f"pt{i}" for i in (11, 10, 9, 8, 7, 6)]
    (req,) = fake_llm.rerank_requests
    assert "[P12]" in req["prompt"] and "Question: How are two halves merged?" in req["prompt"]
    assert req["max_tokens"] == rerank.MAX_TOKENS and not fake_llm.requests  # no writer was asked


def test_an_openai_compatible_server_reranks_too(fake_llm):
    """``LC_OPENAI_BASE_URL`` (Ollama, vLLM...) alone: the reranker is on that server, with ``rerank_model``."""
    r = rerank.configured_reranker(Settings(_env_file=None, groq_api_key=None, gemini_api_key=None,
                                            openai_base_url=f"{fake_llm.url}/v1", rerank_model="small-fast",
                                            rerank_timeout_s=CAP_S, writer_order="groq,gemini,openai"))
    assert r is not None  # the test stack's LC_WRITER_ORDER (tests/conftest.py) names no openai: set here
    try:
        _set(fake_llm, rerank="say", rerank_say='```json\n{"ids": ["P2"]}\n```')
        ps = _passages(4)
        assert [p.hit.point_id for p in rerank.reranked(r, "q", lambda k: ps[:k])] == ["pt1", "pt0", "pt2", "pt3"]
        assert [q["provider"] for q in fake_llm.rerank_requests] == ["openai"] and r.model == "small-fast"
    finally:
        r.close()
        _set(fake_llm)


@pytest.mark.parametrize("mode,say,outcome", [
    ("429", "", rerank.QUOTA), ("500", "", rerank.ERROR), ("down", "", rerank.ERROR),
    ("garbage", "", rerank.UNPARSABLE),
    ("say", json.dumps({"ids": ["P13", "P40", "3f1c9a52-5d7e-4c1b-9e0a-2b7d1e6f4a90", "S1"]}), rerank.UNPARSABLE),
    ("say", "", rerank.UNPARSABLE),
])
def test_a_failing_or_unreadable_reply_keeps_the_search_order(reranker, fake_llm, mode, say, outcome):
    _set(fake_llm, rerank=mode, rerank_say=say)
    ps = _passages(12)
    order, got = reranker.order("q", ps)
    assert (order, got) == (None, outcome)
    assert rerank.reranked(reranker, "q", lambda k: ps[:k]) == ps[:6]


def test_a_reply_naming_listed_and_foreign_passages_keeps_only_the_listed(reranker, fake_llm):
    _set(fake_llm, rerank="say", rerank_say='{"ids": ["P99", "P3", "course-B:P1"]}')
    ps = _passages(12)
    out = rerank.reranked(reranker, "q", lambda k: ps[:k])
    assert [p.hit.point_id for p in out] == ["pt2", "pt0", "pt1", "pt3", "pt4", "pt5"]


def test_a_slow_model_is_cut_at_the_cap(reranker, fake_llm):
    _set(fake_llm, rerank="timeout")
    fake_llm.sleep_s = 10.0
    try:
        ps = _passages(12)
        t0 = time.perf_counter()
        order, outcome = reranker.order("q", ps)
        took = time.perf_counter() - t0
    finally:
        fake_llm.sleep_s = 5.0
    assert (order, outcome) == (None, rerank.TIMEOUT)
    assert CAP_S - 0.1 <= took <= CAP_S + 0.5, took


# -- through the stack's ask path ------------------------------------------------------------------

Q = "How does merge sort merge the two sorted halves?"
LECTURES = [
    ("Merge sort", "Merge sort is a divide and conquer algorithm. It splits the array into two halves and sorts each "
                   "half recursively. Then it merges the two sorted halves with two pointers."),
    ("Merging", "To merge two sorted halves, merge sort compares the front elements of both halves. It always takes "
                "the smaller front element and moves that pointer forward."),
    ("Merge cost", "Merging the two sorted halves takes linear time, since each element is copied once. So merge sort "
                   "runs in order n log n time over all the levels of recursion."),
]


def _vtt(text: str) -> str:
    cues = [s.strip().rstrip(".") + "." for s in text.split(". ") if s.strip()]
    out = ["WEBVTT", ""]
    for i, cue in enumerate(cues):
        out += [f"00:00:{8 * i + 1:02d}.000 --> 00:00:{8 * i + 8:02d}.000", cue, ""]
    return "\n".join(out)


@pytest.fixture(scope="module")
def course(stack):
    """A course of three captions-only lectures about merging in merge sort."""
    course_id = stack.create_course("Algorithms (rerank)")
    ids = []
    for n, (title, text) in enumerate(LECTURES, start=41):
        r = requests.post(f"{stack.base}/api/courses/{course_id}/lectures", headers=stack.admin,
                          files={"captions": (f"l{n}.vtt", _vtt(text).encode(), "text/vtt")},
                          data={"title": title, "number": str(n)}, timeout=60)
        assert r.status_code == 202, r.text
        ids.append(r.json()["lecture_id"])
    for lid in ids:
        assert stack.wait_ready(lid, timeout_s=300)["status"] == "ready"
    return course_id


def _search(stack, course_id: str) -> list[tuple[str, float]]:
    r = requests.post(f"{stack.base}/api/courses/{course_id}/search", json={"query": Q, "k": 12}, timeout=30)
    assert r.status_code == 200, r.text
    return [(p["lecture_id"], p["start_s"]) for p in r.json()["results"]]


def _ask(stack, course_id: str) -> tuple[float, list[tuple[str, float]]]:
    t0 = time.perf_counter()
    r = requests.post(f"{stack.base}/api/courses/{course_id}/ask", json={"question": Q}, timeout=60)
    took = time.perf_counter() - t0
    assert r.status_code == 200, r.text
    ans = r.json()
    assert not ans["declined"] and ans["writer"] == "extractive", ans
    return took, [(s["lecture_id"], s["start_s"]) for s in ans["sources"]]


@pytest.mark.slow
def test_the_answer_is_written_from_the_passages_in_the_models_order(stack, course, fake_llm):
    searched = _search(stack, course)
    assert len(searched) >= 3, searched
    _set(fake_llm, rerank="reverse")
    _, sources = _ask(stack, course)
    assert sources == searched[::-1][:6]
    (req,) = fake_llm.rerank_requests
    assert req["provider"] == "groq" and f"[P{len(searched)}]" in req["prompt"] and Q in req["prompt"]
    span = _rerank_span(stack, rerank.RERANKED)
    assert span.service == "lecture-copilot-ask" and span.attributes["lc.rerank.candidates"] == len(searched)


def _rerank_span(stack, outcome: str):
    """The first ``rerank`` span the stack exported with ``outcome``."""
    return stack.otlp.wait_for(lambda spans: next(
        (s for s in spans if s.name == "rerank" and s.attributes.get("lc.rerank.outcome") == outcome), None))


@pytest.mark.slow
@pytest.mark.parametrize("mode,say", [
    ("429", ""), ("500", ""), ("garbage", ""),
    ("say", json.dumps({"ids": ["P13", "P77", "3f1c9a52-5d7e-4c1b-9e0a-2b7d1e6f4a90"]})),  # never listed: ignored
])
def test_a_failed_rerank_leaves_the_search_order(stack, course, fake_llm, mode, say):
    searched = _search(stack, course)
    _set(fake_llm, rerank=mode, rerank_say=say)
    _, sources = _ask(stack, course)
    assert sources == searched[:6]
    assert len(fake_llm.rerank_requests) == 1


@pytest.mark.slow
def test_a_slow_rerank_holds_the_answer_up_no_longer_than_its_cap(stack, course, fake_llm):
    searched = _search(stack, course)
    _set(fake_llm, rerank="timeout")
    fake_llm.sleep_s = 10.0
    try:
        took, sources = _ask(stack, course)
    finally:
        fake_llm.sleep_s = 5.0
    assert sources == searched[:6]
    assert took < CAP_S + MARGIN_S, took
    assert CAP_S - 0.1 <= _rerank_span(stack, rerank.TIMEOUT).attributes["lc.rerank.ms"] / 1000 <= CAP_S + 0.5
