"""Course isolation covers statistics too: adding another course — even one that repeats a
query's words many times — leaves a course's ranking and scores unchanged (BM25 IDF is
computed over the course's own points), and never returns the other course's passages."""

from __future__ import annotations

import pytest
import requests

pytestmark = pytest.mark.slow

A_TEXT = [
    "Merge sort splits the array into halves and merges the sorted halves.",
    "A hash table stores items in buckets chosen by a hash function.",
    "Counting sort counts occurrences of each small integer key.",
    "Binary search halves the search interval in a sorted array each step.",
]


def _vtt(lines: list[str], step: float = 70.0) -> bytes:
    out = ["WEBVTT", ""]
    for i, line in enumerate(lines):
        a, b = i * step, i * step + step - 1
        out += [f"{int(a // 60):02d}:{a % 60:06.3f} --> {int(b // 60):02d}:{b % 60:06.3f}", line, ""]
    return "\n".join(out).encode()


def _upload(stack, course, lines, title):
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin,
                      files={"captions": ("c.vtt", _vtt(lines), "text/vtt")}, data={"title": title}, timeout=30)
    assert r.status_code == 202, r.text
    assert stack.wait_ready(r.json()["lecture_id"], timeout_s=120)["status"] == "ready"
    return r.json()["lecture_id"]


def _search(stack, course, query):
    r = requests.post(f"{stack.base}/api/courses/{course}/search", json={"query": query, "k": 4}, timeout=30)
    assert r.status_code == 200, r.text
    return [(x["lecture_id"], x["start_s"], round(x["score"], 9)) for x in r.json()["results"]]


def test_other_course_does_not_change_ranking(stack):
    a = stack.create_course("Isolation A")
    lecture_a = _upload(stack, a, A_TEXT, "A1")
    queries = ["how does merge sort merge halves", "hash function buckets", "sorted array search"]
    before = {q: _search(stack, a, q) for q in queries}
    assert all(before[q] for q in queries)
    b = stack.create_course("Isolation B")
    flood = ["merge merge merge sort sort halves halves hash hash buckets sorted array search"] * 6
    _upload(stack, b, flood, "B1")
    after = {q: _search(stack, a, q) for q in queries}
    assert after == before
    for q in queries:
        assert {lid for lid, _, _ in after[q]} == {lecture_a}
        assert all(lid != lecture_a for lid, _, _ in _search(stack, b, q))
