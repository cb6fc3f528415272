"""Ratings, search budgets and budgets of refused requests on the real stack (hardening #12,
items 4–6): one rating per person per answer (the latest replaces the earlier) and a limit on
ratings; search has a budget of its own (429 with Retry-After); a question or search that is
refused (unknown lecture, ask unreachable) uses up nothing.

A second gateway runs with low limits, a secret of its own and one trusted proxy hop, so each test
is a different visitor (``X-Forwarded-For``) with fresh counters. A third one, on the same secret
and database, points at an ask address where nothing listens (every call to ask fails)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from web_helpers import Gateway, mint, upload_captions

pytestmark = pytest.mark.slow

LOW = {"LC_ASK_LIMIT_VISITOR": "3", "LC_ASK_LIMIT_USER": "4", "LC_ASK_LIMIT_VISITOR_TOTAL": "3",
       "LC_ASK_LIMIT_USER_TOTAL": "4", "LC_SEARCH_LIMIT_VISITOR": "3", "LC_SEARCH_LIMIT_USER": "5",
       "LC_FEEDBACK_LIMIT": "4", "LC_SECRET_KEY": "quota-test-secret-0123456789", "LC_PROXY_HOPS": "1"}
QUESTION = {"question": "What is at the root of a max heap?"}


def visitor(ip: str) -> dict:
    return {"X-Forwarded-For": ip}


@pytest.fixture(scope="module")
def courses(stack):
    """Two public courses, each with one ready captions lecture: ``{"a", "b", "lecture_a", "lecture_b"}``."""
    out = {}
    for name in ("a", "b"):
        course = stack.create_course(f"Quotas {name.upper()}")
        r = upload_captions(stack.base, course, headers=stack.admin)
        assert r.status_code == 202, r.text
        assert stack.wait_ready(r.json()["lecture_id"], timeout_s=120)["status"] == "ready"
        out[name], out[f"lecture_{name}"] = course, r.json()["lecture_id"]
    return out


@pytest.fixture(scope="module")
def gw(stack):
    g = Gateway(stack, LOW)
    yield g
    g.close()


@pytest.fixture(scope="module")
def no_ask(stack):
    """A gateway whose calls to ask all fail (UNAVAILABLE → 503), same secret and counters as ``gw``."""
    from lecturecopilot_ops.stack import _free_port

    g = Gateway(stack, {**LOW, "LC_ASK_TARGET_URI": f"ipv4:127.0.0.1:{_free_port()}"})
    yield g
    g.close()


def burst(n: int, fn) -> list[requests.Response]:
    with ThreadPoolExecutor(max_workers=min(n, 16)) as pool:
        return list(pool.map(lambda _: fn(), range(n)))


def codes(responses) -> list[int]:
    return [r.status_code for r in responses]


def _answer(base: str, course: str, headers: dict) -> str:
    r = requests.post(f"{base}/api/courses/{course}/ask", json=QUESTION, headers=headers, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()["answer_id"]


def _ratings(stack, answer_id: str) -> list[tuple]:
    with stack.db() as c:
        return c.execute("SELECT rating, comment FROM feedback WHERE answer_id=%s ORDER BY created_at",
                         (answer_id,)).fetchall()


def _thumbs_down(stack, course: str, answer: str) -> list[dict]:
    r = requests.get(f"{stack.base}/api/courses/{course}/insights", headers=stack.admin, timeout=120)
    assert r.status_code == 200, r.text
    return [d for d in r.json()["thumbs_down"] if d["answer"] == answer]


def test_one_rating_per_person_per_answer_the_latest_replaces_it(stack):
    course = stack.create_course("Rating flood")
    r = upload_captions(stack.base, course, headers=stack.admin)
    assert stack.wait_ready(r.json()["lecture_id"], timeout_s=120)["status"] == "ready"
    ask = requests.post(f"{stack.base}/api/courses/{course}/ask", json=QUESTION, timeout=60).json()
    url = f"{stack.base}/api/answers/{ask['answer_id']}/feedback"
    # 300 thumbs-down from one visitor: accepted, stored once
    flood = burst(300, lambda: requests.post(url, json={"rating": "down", "comment": "spam"}, timeout=30))
    assert set(codes(flood)) == {204}
    assert _ratings(stack, ask["answer_id"]) == [("down", "spam")]
    assert len(_thumbs_down(stack, course, ask["answer"])) == 1
    # the visitor changes its mind: the latest rating replaces the earlier one
    assert requests.post(url, json={"rating": "up", "comment": None}, timeout=10).status_code == 204
    assert _ratings(stack, ask["answer_id"]) == [("up", None)]
    assert _thumbs_down(stack, course, ask["answer"]) == []
    # another person's rating is a row of its own
    student = mint(stack, "student", "rater@example.edu")
    r = requests.post(url, json={"rating": "down", "comment": "The chip is off"}, headers=student, timeout=10)
    assert r.status_code == 204
    assert sorted(_ratings(stack, ask["answer_id"])) == [("down", "The chip is off"), ("up", None)]
    assert [d["comment"] for d in _thumbs_down(stack, course, ask["answer"])] == ["The chip is off"]
    with stack.db() as c:  # the rater is the keyed hash, never an address or an email
        raters = [row[0] for row in c.execute("SELECT rater FROM feedback WHERE answer_id=%s", (ask["answer_id"],))]
    assert len(set(raters)) == 2 and all(len(x) == 32 and "@" not in x and "127.0.0.1" not in x for x in raters)


def test_ratings_are_rate_limited_and_refused_ones_count_nothing(stack, gw, courses):
    answer = _answer(stack.base, courses["a"], stack.admin)
    me = visitor("10.0.4.1")
    # unknown answers and bad bodies are refused before anything is counted
    for _ in range(6):
        r = requests.post(f"{gw.base}/api/answers/{uuid.uuid4()}/feedback", json={"rating": "down"}, headers=me,
                          timeout=10)
        assert r.status_code == 404, r.text
        r = requests.post(f"{gw.base}/api/answers/{answer}/feedback", json={"rating": "meh"}, headers=me, timeout=10)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_rating", r.text
    got = burst(10, lambda: requests.post(f"{gw.base}/api/answers/{answer}/feedback", json={"rating": "down"},
                                          headers=me, timeout=30))
    assert codes(got).count(204) == 4 and codes(got).count(429) == 6, codes(got)
    refused = next(r for r in got if r.status_code == 429)
    assert refused.json()["error"]["code"] == "rate_limited" and int(refused.headers["Retry-After"]) > 0
    # another visitor has a budget of its own
    other = requests.post(f"{gw.base}/api/answers/{answer}/feedback", json={"rating": "up"},
                          headers=visitor("10.0.4.2"), timeout=10)
    assert other.status_code == 204


def test_search_has_a_budget_of_its_own(stack, gw, courses):
    a = courses["a"]
    me = visitor("10.0.5.1")
    search = f"{gw.base}/api/courses/{a}/search"
    # the day's questions are spent...
    asked = burst(5, lambda: requests.post(f"{gw.base}/api/courses/{a}/ask", json=QUESTION, headers=me, timeout=60))
    assert codes(asked).count(200) == 3 and codes(asked).count(429) == 2, codes(asked)
    # ...searches have their own budget: exactly 3 pass in a burst, then 429 with Retry-After
    found = burst(8, lambda: requests.post(search, json={"query": "max heap root"}, headers=me, timeout=30))
    assert codes(found).count(200) == 3 and codes(found).count(429) == 5, codes(found)
    assert all(r.json()["results"] for r in found if r.status_code == 200)
    r = requests.post(search, json={"query": "max heap root"}, headers=me, timeout=30)
    assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited" and int(r.headers["Retry-After"]) > 0
    assert "searches" in r.json()["error"]["message"]
    # across courses: the budget is the person's
    r = requests.post(f"{gw.base}/api/courses/{courses['b']}/search", json={"query": "heap"}, headers=me, timeout=30)
    assert r.status_code == 429
    # searching uses up no questions: a fresh visitor searches, then still has its 3 questions
    fresh = visitor("10.0.5.2")
    assert codes(burst(3, lambda: requests.post(search, json={"query": "heap"}, headers=fresh, timeout=30))) == [200] * 3
    asked = burst(4, lambda: requests.post(f"{gw.base}/api/courses/{a}/ask", json=QUESTION, headers=fresh, timeout=60))
    assert codes(asked).count(200) == 3, codes(asked)
    # signed in: the larger budget; the operator is not limited
    student = mint(stack, "student", "searcher@example.edu")
    found = burst(8, lambda: requests.post(search, json={"query": "heap"}, headers=student, timeout=30))
    assert codes(found).count(200) == 5 and codes(found).count(429) == 3, codes(found)
    assert set(codes(burst(8, lambda: requests.post(search, json={"query": "heap"}, headers=stack.admin,
                                                    timeout=30)))) == {200}


def test_refused_questions_and_searches_use_up_nothing(stack, gw, no_ask, courses):
    a, other_lecture = courses["a"], courses["lecture_b"]
    me = visitor("10.0.6.1")
    ask_url, search_url = f"{gw.base}/api/courses/{a}/ask", f"{gw.base}/api/courses/{a}/search"
    for lecture in [str(uuid.uuid4()), other_lecture, "not-a-lecture"] * 2:  # unknown, of another course, malformed
        r = requests.post(ask_url, json={**QUESTION, "lecture_id": lecture}, headers=me, timeout=30)
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", r.text
        r = requests.post(search_url, json={"query": "heap", "lecture_id": lecture}, headers=me, timeout=30)
        assert r.status_code == 404, r.text
    # ask unreachable: 503, and the use is given back (JSON, streamed, search)
    for _ in range(4):
        r = requests.post(f"{no_ask.base}/api/courses/{a}/ask", json=QUESTION, headers=me, timeout=30)
        assert r.status_code == 503 and r.json()["error"]["code"] == "ask_unavailable", r.text
        r = requests.post(f"{no_ask.base}/api/courses/{a}/ask", json=QUESTION, timeout=30,
                          headers={**me, "Accept": "text/event-stream"})
        assert r.status_code == 503, r.text
        r = requests.post(f"{no_ask.base}/api/courses/{a}/search", json={"query": "heap"}, headers=me, timeout=30)
        assert r.status_code == 503, r.text
    # the whole budget is still there: exactly 3 questions and 3 searches pass in a burst
    asked = burst(6, lambda: requests.post(ask_url, json=QUESTION, headers=me, timeout=60))
    assert codes(asked).count(200) == 3 and codes(asked).count(429) == 3, codes(asked)
    found = burst(6, lambda: requests.post(search_url, json={"query": "heap"}, headers=me, timeout=30))
    assert codes(found).count(200) == 3 and codes(found).count(429) == 3, codes(found)
    # a question in a lecture of the course is served and counted like any other
    r = requests.post(ask_url, json={**QUESTION, "lecture_id": courses["lecture_a"]}, headers=visitor("10.0.6.2"),
                      timeout=60)
    assert r.status_code == 200 and r.json()["sentences"], r.text
