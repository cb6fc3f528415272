"""Questions about a moment through the HTTP API (issue 33 item 1) on the real stack: a generated
two-part slide lecture (counting sort, then merge sort) uploaded and processed,
then asked with and without the player's position ``at``; and a captions lecture of four topics a minute
apart, where a moment is what is said 30 s either side of it."""

from __future__ import annotations

import json

import pytest
import requests

pytestmark = pytest.mark.slow


TOPICS = [  # a captions lecture (no slides: a moment is what is said 30 s either side), one topic a minute
    ["A binary heap is a complete binary tree stored in an array.",
     "In a max heap every parent key is at least as large as the keys of its children.",
     "So the largest key always sits at the root of the heap."],
    ["A hash table stores keys in an array of slots.",
     "A hash function maps each key to one slot of the table.",
     "Chaining keeps a linked list of the keys that collide in one slot."],
    ["Breadth first search explores a graph level by level from a source vertex.",
     "It keeps a queue of the vertices to visit next.",
     "It finds shortest paths when every edge has the same weight."],
    ["Dynamic programming solves each subproblem once and stores its answer.",
     "Memoization caches a result the first time it is computed.",
     "With memoization the Fibonacci numbers take linear time."],
]


def _vtt() -> str:
    def ts(t: float) -> str:
        return f"00:{int(t // 60):02d}:{t % 60:06.3f}"

    cues = [f"{ts(60 * k + 5 + 15 * i)} --> {ts(60 * k + 10 + 15 * i)}\n{text}"
            for k, topic in enumerate(TOPICS) for i, text in enumerate(topic)]
    return "WEBVTT\n\n" + "\n\n".join(cues) + "\n"


@pytest.fixture(scope="module")
def course(stack, synth_video):
    """A course with a captions lecture (L1, four topics a minute apart) and the generated slide video (L2)."""
    res, _ = synth_video
    course_id = stack.create_course("Algorithms (moments)")
    r = requests.post(f"{stack.base}/api/courses/{course_id}/lectures", headers=stack.admin, timeout=60,
                      files={"captions": ("topics.vtt", _vtt().encode(), "text/vtt")}, data={"title": "Topics", "number": "1"})
    assert r.status_code == 202, r.text
    l1 = r.json()["lecture_id"]
    assert stack.wait_ready(l1)["status"] == "ready"
    l2 = stack.upload_ready(course_id, res.path, title="Sorting", number=2)
    return course_id, l1, l2, res


def post(stack, course_id, body, **kw):
    return requests.post(f"{stack.base}/api/courses/{course_id}/ask", json=body, timeout=60, **kw)


def ask(stack, course_id, question, **extra):
    r = post(stack, course_id, {"question": question, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def _cites(ans):
    return [c for s in ans["sentences"] for c in s["citations"]]


AT_S = 140.0  # L1's third minute: breadth first search (said at 2:05, 2:20, 2:35)


@pytest.mark.parametrize("question", ["what does this mean?", "why is that?", "what did he just say?",
                                      "Can you explain this again?"])
def test_a_question_pointing_at_the_screen_cites_inside_the_moment(stack, course, question):
    course_id, l1, _, _ = course
    ans = ask(stack, course_id, question, at={"lecture_id": l1, "t_s": AT_S})
    assert not ans["declined"] and ans["writer"] == "extractive", ans
    assert _cites(ans) and all(c["lecture_id"] == l1 and AT_S - 30 <= c["t_s"] <= AT_S + 30 for c in _cites(ans)), ans
    assert "queue" in ans["answer"] or "breadth" in ans["answer"].lower(), ans["answer"]
    assert ans["sources"][0]["lecture_id"] == l1 and ans["sources"][0]["start_s"] >= AT_S - 30


@pytest.mark.parametrize("follow_up", ["why is that?", "why?", "explain that more simply"])
def test_a_follow_up_of_a_question_about_the_moment_is_answered_from_it(stack, course, follow_up):
    """A trial paused, asked "what does this mean?" (answered), then "why is that?": declined, its rewrite
    "Why? what does this mean?" naming nothing to search."""
    course_id, l1, _, _ = course
    first = ask(stack, course_id, "what does this mean?", at={"lecture_id": l1, "t_s": AT_S})
    ans = ask(stack, course_id, follow_up, at={"lecture_id": l1, "t_s": AT_S}, conversation_id=first["conversation_id"])
    assert not ans["declined"] and _cites(ans), ans
    assert all(c["lecture_id"] == l1 and AT_S - 30 <= c["t_s"] <= AT_S + 30 for c in _cites(ans)), ans


def test_a_slide_on_screen_bounds_the_answer_to_its_time(stack, course):
    course_id, _, l2, res = course
    t = res.part_starts_s[1] + 4.0
    with stack.db() as conn:
        slides = conn.execute("SELECT start_s, end_s FROM slides WHERE lecture_id=%s ORDER BY start_s", (l2,)).fetchall()
    shown = [(a, b) for a, b in slides if a <= t < b]
    assert shown, slides  # the generated video's slide is read
    lo, hi = shown[0]
    ans = ask(stack, course_id, "explain this slide", at={"lecture_id": l2, "t_s": t})
    assert _cites(ans) and all(c["lecture_id"] == l2 and lo <= c["t_s"] <= hi for c in _cites(ans)), (ans, slides)


def test_a_cloud_writer_is_given_the_moment_first(stack, course, modes, fake_llm):
    course_id, l1, _, _ = course
    modes(groq="ok")
    ans = ask(stack, course_id, "what does this mean?", at={"lecture_id": l1, "t_s": AT_S})
    assert ans["writer"] == "groq", ans
    src = ans["sources"][0]
    assert src["lecture_id"] == l1 and AT_S - 30 <= src["start_s"] <= src["end_s"] <= AT_S + 30, ans["sources"]
    prompt = [r["prompt"] for r in fake_llm.requests if r["provider"] == "groq"][0]
    assert "about what is shown and said then" in prompt and "queue" in prompt


def test_the_same_question_without_the_moment_gets_no_such_treatment(stack, course):
    course_id, l1, _, _ = course
    ans = ask(stack, course_id, "what does this mean?")
    assert ans["declined"], ans  # "this" names nothing without the moment


def test_a_topical_question_is_answered_as_without_the_moment(stack, course):
    course_id, l1, _, _ = course
    q = "How does chaining handle keys that collide?"
    plain = ask(stack, course_id, q)
    at = ask(stack, course_id, q, at={"lecture_id": l1, "t_s": AT_S})
    assert not plain["declined"] and at["answer"] == plain["answer"]
    assert [c["t_s"] for c in _cites(at)] == [c["t_s"] for c in _cites(plain)]
    assert 60 <= _cites(at)[0]["t_s"] < AT_S - 30  # hashing, a minute before the moment, comes first


def test_about_this_moment_answers_from_it_whatever_the_wording(stack, course):
    course_id, l1, _, _ = course
    ans = ask(stack, course_id, "How does chaining handle keys that collide?",
              at={"lecture_id": l1, "t_s": AT_S, "focus": True})
    assert _cites(ans) and all(AT_S - 30 <= c["t_s"] <= AT_S + 30 for c in _cites(ans)), ans


def test_a_bad_moment_is_refused_before_anything_is_counted(stack, course):
    course_id, lecture_id, l2, res = course
    other_course = stack.create_course("Another (moments)")
    cases = [
        ({"lecture_id": lecture_id, "t_s": 400}, 400, "invalid_at"),  # past the captions' end (4 minutes)
        ({"lecture_id": l2, "t_s": res.duration_s + 1}, 400, "invalid_at"),
        ({"lecture_id": lecture_id, "t_s": -1}, 400, "invalid_at"),
        ({"lecture_id": lecture_id, "t_s": "12"}, 400, "invalid_at"),
        ({"lecture_id": lecture_id}, 400, "invalid_at"),
        ({"lecture_id": lecture_id, "t_s": 5, "when": 1}, 400, "invalid_body"),
        ("12:31", 400, "invalid_at"),
        ({"lecture_id": "00000000-0000-4000-8000-000000000000", "t_s": 5}, 404, "not_found"),
        ({"lecture_id": "not-a-lecture", "t_s": 5}, 404, "not_found"),
    ]
    for at, status, code in cases:
        r = post(stack, course_id, {"question": "what does this mean?", "at": at})
        assert (r.status_code, r.json()["error"]["code"]) == (status, code), (at, r.text)
        assert r.json()["error"]["message"], r.text
    # a lecture of another course is unknown here, as lecture_id
    r = post(stack, other_course, {"question": "what does this mean?", "at": {"lecture_id": lecture_id, "t_s": 5}})
    assert r.status_code == 404, r.text
    # the moment must be in the lecture the question is scoped to... which here it is
    ok = post(stack, course_id, {"question": "what does this mean?", "lecture_id": lecture_id,
                                 "at": {"lecture_id": lecture_id, "t_s": 5}})
    assert ok.status_code == 200, ok.text
    r = post(stack, course_id, {"question": "what does this mean?", "lecture_id": l2,
                                "at": {"lecture_id": lecture_id, "t_s": 5}})
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_at"), r.text
    # NaN is no JSON number: refused by the body reader
    r = requests.post(f"{stack.base}/api/courses/{course_id}/ask", timeout=30, headers={"Content-Type": "application/json"},
                      data=json.dumps({"question": "what?", "at": {"lecture_id": lecture_id, "t_s": float("nan")}}))
    assert r.status_code == 400, r.text
