"""Checkpoints while watching (issue 33) through the gateway on the real stack: the course flag
(off by default; only the course's instructor or an admin changes it), a lecture's checkpoints
(none while off; on: per chapter, the earliest practice question citing inside it, without its
answer), a checkpoint answer (graded, recorded by ask as a checkpoint attempt; refused for a
question that is not a checkpoint or while the flag is off) and the counts in the course's insights."""

from __future__ import annotations

import pytest
import requests

from web_helpers import mint

from .test_quiz_api import _code, sorting_course

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cp(stack):
    """A public course of an instructor with one captions lecture on sorting, its set generated."""
    people = {"owner": mint(stack, "instructor", "cp-owner@example.edu"),
              "other": mint(stack, "instructor", "cp-other@example.edu"),
              "student": mint(stack, "student", "cp-student@example.edu"), "admin": stack.admin, "anon": {}}
    base = stack.base
    course, lecture = sorting_course(stack, people["owner"], "Sorting (checkpoints)")
    r = requests.post(f"{base}/api/lectures/{lecture}/quiz/generate", headers=people["owner"], timeout=180)
    assert r.status_code == 201, r.text
    key = {q["id"]: q for q in r.json()["questions"]}
    return {"people": people, "course": course, "lecture": lecture, "key": key}


def _set(stack, cp, on: bool, who: str = "owner") -> requests.Response:
    return requests.patch(f"{stack.base}/api/courses/{cp['course']}", json={"checkpoints": on},
                          headers=cp["people"][who], timeout=10)


def _expected(stack, cp) -> list[tuple[int, float, str]]:
    """(chapter index, chapter end, question id) worked out from the lecture's chapters and the
    instructor's view of its questions: per chapter, the earliest question citing inside it."""
    chapters = requests.get(f"{stack.base}/api/lectures/{cp['lecture']}", timeout=10).json()["chapters"]
    qs = requests.get(f"{stack.base}/api/lectures/{cp['lecture']}/practice", headers=cp["people"]["owner"],
                      timeout=10).json()["questions"]
    found = []
    for i, ch in enumerate(chapters):
        last = i == len(chapters) - 1
        inside = [q for q in qs if q["citation"]["lecture_id"] == cp["lecture"] and (
            ch["start_s"] <= q["citation"]["t_s"] < ch["end_s"] or (last and q["citation"]["t_s"] == ch["end_s"]))]
        if inside:
            found.append((i, ch["end_s"], min(inside, key=lambda q: q["citation"]["t_s"])["id"]))
    return found


def test_the_flag_is_off_by_default_and_changed_by_the_instructor_or_an_admin(stack, cp):
    url = f"{stack.base}/api/courses/{cp['course']}"
    assert requests.get(url, timeout=10).json()["checkpoints"] is False
    r = requests.get(f"{stack.base}/api/lectures/{cp['lecture']}/checkpoints", timeout=10)
    assert r.status_code == 200 and r.json() == {"lecture_id": cp["lecture"], "enabled": False, "checkpoints": []}
    assert _code(_set(stack, cp, True, "anon")) == (401, "unauthorized")
    for who in ("student", "other"):
        assert _code(_set(stack, cp, True, who)) == (403, "forbidden")
    r = requests.patch(url, json={"checkpoints": "yes"}, headers=cp["people"]["owner"], timeout=10)
    assert _code(r) == (400, "invalid_checkpoints")
    assert requests.get(url, timeout=10).json()["checkpoints"] is False
    r = _set(stack, cp, True)
    assert r.status_code == 200 and r.json()["checkpoints"] is True and r.json()["assessment_mode"] is False
    r = requests.patch(url, json={"title": "Sorting (checkpoints)"}, headers=cp["people"]["owner"], timeout=10)
    assert r.json()["checkpoints"] is True  # a rename keeps it
    assert _set(stack, cp, False, "admin").json()["checkpoints"] is False
    assert requests.get(url, timeout=10).json()["checkpoints"] is False


def test_on_each_chapter_with_a_question_is_a_checkpoint(stack, cp):
    assert _set(stack, cp, True).status_code == 200
    want = _expected(stack, cp)
    assert want, "the sorting lecture has chapters with questions"
    r = requests.get(f"{stack.base}/api/lectures/{cp['lecture']}/checkpoints", headers=cp["people"]["student"],
                     timeout=10)
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["enabled"] is True
    assert [(c["chapter_index"], c["at_s"], c["question"]["id"]) for c in got["checkpoints"]] == want
    for c in got["checkpoints"]:
        q = c["question"]
        assert set(q) == {"id", "lecture_id", "lecture_number", "question", "options"}  # no answer before answering
        assert len(q["options"]) == 4 and c["start_s"] < c["at_s"] and c["chapter_title"]
    ats = [c["at_s"] for c in got["checkpoints"]]
    assert ats == sorted(ats)


def test_a_checkpoint_answer_is_graded_and_counted_in_insights(stack, cp):
    assert _set(stack, cp, True).status_code == 200
    people, base = cp["people"], stack.base
    [(_, at_s, qid), *_] = _expected(stack, cp)
    right = cp["key"][qid]["answer_index"]
    url = f"{base}/api/practice/{qid}/answer"
    r = requests.post(url, json={"choice": (right + 1) % 4, "checkpoint": True}, headers=people["student"], timeout=10)
    assert r.status_code == 200, r.text
    assert r.json()["correct"] is False and r.json()["answer_index"] == right and r.json()["explanation"]
    assert r.json()["citation"]["lecture_id"] == cp["lecture"]
    r = requests.post(url, json={"choice": right, "checkpoint": True}, timeout=10)  # anonymous, on a public course
    assert r.status_code == 200 and r.json()["correct"] is True
    # an ordinary practice answer is graded but not counted for the checkpoint
    assert requests.post(url, json={"choice": (right + 2) % 4}, headers=people["student"], timeout=10).status_code == 200
    others = set(cp["key"]) - {q for _, _, q in _expected(stack, cp)}
    if others:  # a question that is no checkpoint is refused as one
        r = requests.post(f"{base}/api/practice/{others.pop()}/answer", json={"choice": 0, "checkpoint": True},
                          headers=people["student"], timeout=10)
        assert _code(r) == (400, "not_a_checkpoint")
    with stack.db() as conn:
        rows = conn.execute("SELECT checkpoint, correct FROM quiz_attempts WHERE question_id=%s ORDER BY created_at",
                            (qid,)).fetchall()
    assert [tuple(r) for r in rows] == [(True, False), (True, True), (False, False)]
    # insights: per checkpoint, answered and wrong; instructor only
    assert _code(requests.get(f"{base}/api/courses/{cp['course']}/insights", headers=people["student"],
                              timeout=30)) == (403, "forbidden")
    ins = requests.get(f"{base}/api/courses/{cp['course']}/insights", headers=people["owner"], timeout=60)
    assert ins.status_code == 200, ins.text
    stats = {s["question_id"]: s for s in ins.json()["checkpoints"]}
    assert set(stats) == {q for _, _, q in _expected(stack, cp)}
    assert (stats[qid]["answered"], stats[qid]["wrong"], stats[qid]["at_s"]) == (2, 1, at_s)
    assert stats[qid]["lecture_number"] == 1 and stats[qid]["chapter_title"] and stats[qid]["question"]
    csv = requests.get(f"{base}/api/courses/{cp['course']}/insights.csv", headers=people["owner"], timeout=60).text
    assert any(line.startswith("checkpoint,") and ",2,1," in line and "wrong 1:" in line for line in csv.splitlines())
    # off: no checkpoint answers, and none in insights (the counts come back when it is on again)
    assert _set(stack, cp, False).status_code == 200
    r = requests.post(url, json={"choice": right, "checkpoint": True}, headers=people["student"], timeout=10)
    assert _code(r) == (409, "checkpoints_off")
    ins = requests.get(f"{base}/api/courses/{cp['course']}/insights", headers=people["owner"], timeout=60).json()
    assert ins["checkpoints"] == []
    assert _set(stack, cp, True).status_code == 200
    ins = requests.get(f"{base}/api/courses/{cp['course']}/insights", headers=people["owner"], timeout=60).json()
    assert {s["question_id"]: s["answered"] for s in ins["checkpoints"]}[qid] == 2
