"""Exam prep through the gateway on the real stack: generating a lecture's set (owner/admin only,
at most once per lecture every 5 minutes: 429 with Retry-After and wait_s), listing without
answers, submitting answers (score, correct option, explanation, chip; attempts recorded), the
instructor view (answers, reports, wrong answers), editing, deleting, reporting (rate-limited),
assessment mode, and private courses (404)."""

from __future__ import annotations

import uuid

import pytest
import requests

from web_helpers import mint

pytestmark = pytest.mark.slow

SENTENCES = [
    "Today we talk about sorting algorithms.",
    "Merge sort is a divide and conquer algorithm that splits the array in halves.",
    "And we know that merge sort takes n log n time on any input.",
    "Selection sort repeatedly picks the largest remaining item and swaps it to the end.",
    "Selection sort takes n squared time because of the nested loops.",
    "Insertion sort inserts each item into the sorted prefix.",
    "Binary search finds a key in a sorted array in log n time.",
    "A hash table stores items in buckets chosen by a hash function.",
    "Counting sort takes linear time when the keys are small.",
    "Counting sort is a stable sorting algorithm for small integer keys.",
    "Insertion sort takes n squared time in the worst case.",
    "Radix sort sorts digit by digit with counting sort.",
    "Looking up a key in a direct access array takes constant time.",
    "A direct access array stores the item with key k at index k.",
    "Radix sort is fast when the keys are small integers.",
    "A linked list holds the items of a chain.",
    "A sorted array supports binary search.",
]


def sorting_vtt(step_s: float = 6.0, sentences=SENTENCES) -> str:
    """A WebVTT lecture of ``sentences``, one cue every ``step_s`` seconds."""
    def ts(t: float) -> str:
        return f"00:{int(t // 60):02d}:{t % 60:06.3f}"

    cues = [f"{ts(1 + i * step_s)} --> {ts(1 + i * step_s + step_s - 1)}\n{s}" for i, s in enumerate(sentences)]
    return "WEBVTT\n\n" + "\n\n".join(cues) + "\n"


def _code(r):
    return r.status_code, (r.json()["error"]["code"] if r.status_code >= 400 else None)


@pytest.fixture(scope="module")
def people(stack):
    return {"owner": mint(stack, "instructor", "quiz-owner@example.edu"),
            "other": mint(stack, "instructor", "quiz-other@example.edu"),
            "student": mint(stack, "student", "quiz-student@example.edu"),
            "admin": stack.admin, "anon": {}}


def sorting_course(stack, owner: dict, title: str) -> tuple[str, str]:
    """``(course id, lecture id)``: a public course ``title`` made by ``owner`` (headers) with one
    captions lecture on sorting (:func:`sorting_vtt`, number 1), waited on until ready."""
    r = requests.post(f"{stack.base}/api/courses", json={"title": title}, headers=owner, timeout=10)
    assert r.status_code == 201, r.text
    course = r.json()["id"]
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=owner,
                      files={"captions": ("sorting.vtt", sorting_vtt().encode(), "text/vtt")},
                      data={"title": "Sorting", "number": "1"}, timeout=60)
    assert r.status_code == 202, r.text
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=180)["status"] == "ready"
    return course, lecture


@pytest.fixture(scope="module")
def quiz(stack, people):
    """A public course of the owner with one captions lecture on sorting, its set generated."""
    base = stack.base
    course, lecture = sorting_course(stack, people["owner"], "Sorting (quiz API)")
    # students and outsiders may not write the set (checked before the owner's first generation)
    url = f"{base}/api/lectures/{lecture}/quiz/generate"
    assert _code(requests.post(url, timeout=60)) == (401, "unauthorized")
    for who in ("student", "other"):
        assert _code(requests.post(url, headers=people[who], timeout=60)) == (403, "forbidden")
    r = requests.post(url, headers=people["owner"], timeout=180)
    assert r.status_code == 201, r.text
    return {"course": course, "lecture": lecture, "generated": r.json()}


def test_generate_is_for_the_owner_or_an_admin_and_limited_to_once_in_5_minutes(stack, people, quiz):
    url = f"{stack.base}/api/lectures/{quiz['lecture']}/quiz/generate"
    gen = quiz["generated"]  # the owner's first generation (the fixture; refused before for others)
    assert gen["method"] == "extractive" and gen["kept"] == len(gen["questions"]) >= 2, gen
    for q in gen["questions"]:
        assert len(q["options"]) == 4 and 0 <= q["answer_index"] <= 3 and q["explanation"]
        assert q["citation"]["lecture_id"] == quiz["lecture"] and q["citation"]["label"].startswith("L1 · ")
    # again at once: refused with how long to wait, for the owner and for an admin alike
    for who in ("owner", "admin"):
        r = requests.post(url, headers=people[who], timeout=60)
        assert _code(r) == (429, "regenerate_too_soon"), r.text
        wait = int(r.headers["Retry-After"])
        assert 1 <= wait <= 300 and r.json()["error"]["wait_s"] == wait
        assert f"{wait} s" in r.json()["error"]["message"]
    # the set is untouched by the refusals
    r = requests.get(f"{stack.base}/api/lectures/{quiz['lecture']}/quiz", timeout=10)
    assert [q["id"] for q in r.json()["questions"]] == [q["id"] for q in gen["questions"]]
    # once 5 minutes have passed, the set is replaced
    with stack.db() as conn:
        conn.execute("UPDATE quiz_generations SET created_at = now() - interval '301 seconds' WHERE lecture_id=%s",
                     (quiz["lecture"],))
    r = requests.post(url, headers=people["admin"], timeout=180)
    assert r.status_code == 201, r.text
    assert not {q["id"] for q in r.json()["questions"]} & {q["id"] for q in gen["questions"]}
    quiz["generated"] = r.json()
    # an unknown lecture is a 404
    assert _code(requests.post(f"{stack.base}/api/lectures/{uuid.uuid4()}/quiz/generate", headers=people["owner"],
                               timeout=10)) == (404, "not_found")


def _admin_view(stack, people, lecture):
    r = requests.get(f"{stack.base}/api/lectures/{lecture}/quiz/admin", headers=people["owner"], timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["questions"]


def test_students_list_without_answers_and_get_a_graded_score(stack, people, quiz):
    base, lecture = stack.base, quiz["lecture"]
    for who in ("anon", "student"):
        r = requests.get(f"{base}/api/lectures/{lecture}/quiz", headers=people[who], timeout=10)
        assert r.status_code == 200
        qs = r.json()["questions"]
        assert len(qs) >= 2
        for q in qs:
            assert set(q) == {"id", "lecture_id", "lecture_number", "question", "options"}
            assert len(q["options"]) == 4 and q["question"].strip() and q["lecture_number"] == 1
    whole = requests.get(f"{base}/api/courses/{quiz['course']}/quiz", timeout=10).json()["questions"]
    assert {q["id"] for q in whole} == {q["id"] for q in qs}
    assert all("answer_index" not in q for q in whole)
    # the instructor view has the answers; a student may not see it
    assert _code(requests.get(f"{base}/api/lectures/{lecture}/quiz/admin", headers=people["student"],
                              timeout=10)) == (403, "forbidden")
    assert _code(requests.get(f"{base}/api/lectures/{lecture}/quiz/admin", headers=people["other"],
                              timeout=10)) == (403, "forbidden")
    key = {q["id"]: q for q in _admin_view(stack, people, lecture)}
    a, b = qs[0]["id"], qs[1]["id"]
    right, wrong = key[a]["answer_index"], (key[b]["answer_index"] + 1) % 4
    r = requests.post(f"{base}/api/lectures/{lecture}/quiz/answers", headers=people["student"],
                      json={"answers": [{"question_id": a, "choice": right}, {"question_id": b, "choice": wrong}]},
                      timeout=10)
    assert r.status_code == 200, r.text
    res = r.json()
    assert res["score"] == 1 and res["total"] == 2
    ra, rb = res["results"]
    assert ra["correct"] is True and rb["correct"] is False and rb["choice"] == wrong
    assert rb["answer_index"] == key[b]["answer_index"] and rb["answer"] == key[b]["options"][key[b]["answer_index"]]
    assert rb["explanation"] == key[b]["explanation"] and rb["citation"] == key[b]["citation"]
    assert rb["citation"]["label"].startswith("L1 · ") and rb["citation"]["t_s"] >= 0
    # the same through the whole-course route, anonymously
    r = requests.post(f"{base}/api/courses/{quiz['course']}/quiz/answers",
                      json={"answers": [{"question_id": b, "choice": wrong}]}, timeout=10)
    assert r.status_code == 200 and r.json()["score"] == 0
    after = {q["id"]: q for q in _admin_view(stack, people, lecture)}
    assert after[a]["attempts"] == 1 and after[a]["wrong"] == 0
    assert after[b]["attempts"] == 2 and after[b]["wrong"] == 2
    # each person counts once: a visitor repeating a wrong answer (a hostile pass made it 15 of 15) adds nothing
    for _ in range(3):
        assert requests.post(f"{base}/api/courses/{quiz['course']}/quiz/answers",
                             json={"answers": [{"question_id": b, "choice": wrong}]}, timeout=10).status_code == 200
        assert requests.post(f"{base}/api/lectures/{lecture}/quiz/answers", headers=people["student"],
                             json={"answers": [{"question_id": a, "choice": right}]}, timeout=10).status_code == 200
    # the course's instructor and an admin trying the questions are graded, not counted (a hostile pass
    # made the instructor's own wrong answers show as a student's in "wrong")
    for who in ("owner", "admin"):
        r = requests.post(f"{base}/api/lectures/{lecture}/quiz/answers", headers=people[who],
                          json={"answers": [{"question_id": b, "choice": wrong}]}, timeout=10)
        assert r.status_code == 200 and r.json()["results"][0]["correct"] is False, r.text
        r = requests.post(f"{base}/api/practice/{a}/answer", headers=people[who], json={"choice": right}, timeout=10)
        assert r.status_code == 200 and r.json()["correct"] is True, r.text
    after = {q["id"]: q for q in _admin_view(stack, people, lecture)}
    assert (after[a]["attempts"], after[a]["wrong"], after[b]["attempts"], after[b]["wrong"]) == (1, 0, 2, 2)
    # bad submissions
    url = f"{base}/api/lectures/{lecture}/quiz/answers"
    assert _code(requests.post(url, json={"answers": [{"question_id": a, "choice": 4}]}, timeout=10)) == (400, "invalid_choice")
    assert _code(requests.post(url, json={"answers": [{"question_id": a, "choice": True}]}, timeout=10)) == (400, "invalid_choice")
    assert _code(requests.post(url, json={"answers": []}, timeout=10)) == (400, "invalid_answers")
    assert _code(requests.post(url, json={"answers": [{"question_id": str(uuid.uuid4()), "choice": 0}]},
                               timeout=10)) == (404, "not_found")
    assert _code(requests.post(url, json={"answers": [{"question_id": a, "choice": 0}] * 2}, timeout=10)) == (400, "invalid_answers")
    assert _code(requests.post(url, data="nope", timeout=10)) == (400, "invalid_json")


def test_owner_edits_and_deletes_students_report(stack, people, quiz):
    base, lecture = stack.base, quiz["lecture"]
    qs = _admin_view(stack, people, lecture)
    q = qs[0]
    url = f"{base}/api/quiz/questions/{q['id']}"
    new = {"question": "Which algorithm splits the array in halves?",
           "options": ["Merge sort", "Selection sort", "Counting sort", "Radix sort"], "answer_index": 0,
           "explanation": "Merge sort divides and conquers."}
    assert _code(requests.patch(url, json=new, timeout=10)) == (401, "unauthorized")
    for who in ("student", "other"):
        assert _code(requests.patch(url, json=new, headers=people[who], timeout=10)) == (403, "forbidden")
        assert _code(requests.delete(url, headers=people[who], timeout=10)) == (403, "forbidden")
    bad = [{"options": ["a", "a", "b", "c"]}, {"options": ["a", "b", "c"]}, {"answer_index": 7},
           {"cite_t_s": 1e6}, {"cite_lecture_id": str(uuid.uuid4())}, {"colour": "red"}, {"question": "  "},
           {"explanation": "bad\x00byte"}]
    for change in bad:
        r = requests.patch(url, json=change, headers=people["owner"], timeout=10)
        assert _code(r) == (400, "invalid_quiz"), (change, r.text)
    r = requests.patch(url, json=new, headers=people["owner"], timeout=10)
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["question"] == new["question"] and got["options"] == new["options"] and got["answer_index"] == 0
    assert got["explanation"] == new["explanation"]
    r = requests.patch(url, json={"cite_t_s": 13.0}, headers=people["admin"], timeout=10)
    assert r.status_code == 200 and r.json()["citation"]["label"] == "L1 · 0:13"
    # reports: anyone who can see, comment optional
    rep = f"{url}/report"
    assert requests.post(rep, json={"comment": "Two options look right to me"}, headers=people["student"],
                         timeout=10).status_code == 204
    assert requests.post(rep, json={}, timeout=10).status_code == 204
    assert _code(requests.post(rep, json={"comment": "x" * 2001}, timeout=10)) == (400, "invalid_comment")
    view = {x["id"]: x for x in _admin_view(stack, people, lecture)}[q["id"]]
    assert view["reports"] == 2 and view["report_comments"] == ["Two options look right to me"]
    # deleting
    assert requests.delete(url, headers=people["owner"], timeout=10).status_code == 204
    assert q["id"] not in {x["id"] for x in requests.get(f"{base}/api/lectures/{lecture}/quiz", timeout=10).json()["questions"]}
    assert _code(requests.patch(url, json=new, headers=people["owner"], timeout=10)) == (404, "not_found")
    assert _code(requests.post(rep, json={}, timeout=10)) == (404, "not_found")
    assert _code(requests.delete(f"{base}/api/quiz/questions/not-a-uuid", headers=people["owner"],
                                 timeout=10)) == (404, "not_found")


def test_reports_are_rate_limited(stack, people, quiz):
    qid = _admin_view(stack, people, quiz["lecture"])[0]["id"]
    who = mint(stack, "student", "quiz-reporter@example.edu")
    limit = stack.settings.quiz_report_limit
    codes = [requests.post(f"{stack.base}/api/quiz/questions/{qid}/report", json={}, headers=who,
                           timeout=10).status_code for _ in range(limit + 1)]
    assert codes[:limit] == [204] * limit and codes[-1] == 429
    r = requests.post(f"{stack.base}/api/quiz/questions/{qid}/report", json={}, headers=who, timeout=10)
    assert _code(r) == (429, "rate_limited") and int(r.headers["Retry-After"]) > 0


def test_assessment_mode_is_a_course_setting_for_the_owner(stack, people, quiz):
    url = f"{stack.base}/api/courses/{quiz['course']}"
    assert requests.get(url, timeout=10).json()["assessment_mode"] is False
    assert _code(requests.patch(url, json={"assessment_mode": True}, headers=people["student"], timeout=10)) == (403, "forbidden")
    assert _code(requests.patch(url, json={"assessment_mode": "yes"}, headers=people["owner"], timeout=10)) == (
        400, "invalid_assessment_mode")
    r = requests.patch(url, json={"assessment_mode": True}, headers=people["owner"], timeout=10)
    assert r.status_code == 200 and r.json()["assessment_mode"] is True
    assert requests.get(url, timeout=10).json()["assessment_mode"] is True
    with stack.db() as conn:
        assert conn.execute("SELECT assessment_mode FROM courses WHERE id=%s", (quiz["course"],)).fetchone()[0] is True
    r = requests.patch(url, json={"title": "Sorting (quiz API)"}, headers=people["owner"], timeout=10)
    assert r.json()["assessment_mode"] is True  # a rename keeps it


def test_the_documented_practice_routes(stack, people, quiz):
    """docs/API.md: GET /api/lectures/{id}/practice (answers for the instructor only) and
    POST /api/practice/{question_id}/answer."""
    base, lecture = stack.base, quiz["lecture"]
    student = requests.get(f"{base}/api/lectures/{lecture}/practice", headers=people["student"], timeout=10).json()
    owner = requests.get(f"{base}/api/lectures/{lecture}/practice", headers=people["owner"], timeout=10).json()
    assert student["questions"] and [q["id"] for q in student["questions"]] == [q["id"] for q in owner["questions"]]
    assert all("answer_index" not in q and "explanation" not in q and q["citation"]["label"].startswith("L1 · ")
               for q in student["questions"])
    assert all(0 <= q["answer_index"] <= 3 and "explanation" in q for q in owner["questions"])
    q = owner["questions"][0]
    r = requests.post(f"{base}/api/practice/{q['id']}/answer", json={"choice": q["answer_index"]},
                      headers=people["student"], timeout=10)
    assert r.status_code == 200, r.text
    assert r.json() == {"correct": True, "answer_index": q["answer_index"], "explanation": q["explanation"],
                        "citation": q["citation"]}
    r = requests.post(f"{base}/api/practice/{q['id']}/answer", json={"choice": (q["answer_index"] + 1) % 4}, timeout=10)
    assert r.json()["correct"] is False
    assert _code(requests.post(f"{base}/api/practice/{q['id']}/answer", json={"choice": 9}, timeout=10)) == (400, "invalid_choice")
    assert _code(requests.post(f"{base}/api/practice/{uuid.uuid4()}/answer", json={"choice": 0}, timeout=10)) == (404, "not_found")


def test_a_private_course_quiz_is_invisible_to_outsiders(stack, people, quiz):
    base, lecture = stack.base, quiz["lecture"]
    qid = _admin_view(stack, people, lecture)[0]["id"]
    r = requests.patch(f"{base}/api/courses/{quiz['course']}", json={"visibility": "private"}, headers=people["owner"],
                       timeout=10)
    assert r.status_code == 200
    for who in ("anon", "student", "other"):
        h = people[who]
        assert _code(requests.get(f"{base}/api/lectures/{lecture}/quiz", headers=h, timeout=10)) == (404, "not_found")
        assert _code(requests.get(f"{base}/api/courses/{quiz['course']}/quiz", headers=h, timeout=10)) == (404, "not_found")
        assert _code(requests.post(f"{base}/api/lectures/{lecture}/quiz/answers", headers=h,
                                   json={"answers": [{"question_id": qid, "choice": 0}]}, timeout=10)) == (404, "not_found")
        assert _code(requests.post(f"{base}/api/quiz/questions/{qid}/report", headers=h, json={},
                                   timeout=10)) == (404, "not_found")
    for who in ("student", "other"):
        assert _code(requests.patch(f"{base}/api/quiz/questions/{qid}", headers=people[who], json={"answer_index": 1},
                                    timeout=10)) == (404, "not_found")
        assert _code(requests.get(f"{base}/api/lectures/{lecture}/quiz/admin", headers=people[who],
                                  timeout=10)) == (404, "not_found")
    # a member sees it again
    requests.post(f"{base}/api/courses/{quiz['course']}/members", json={"email": "quiz-student@example.edu"},
                  headers=people["owner"], timeout=10)
    assert requests.get(f"{base}/api/lectures/{lecture}/quiz", headers=people["student"], timeout=10).status_code == 200



def test_a_lecture_that_makes_no_question_is_a_clear_422_that_uses_no_window(stack, people):
    chatter = ["Hello everyone, and welcome back.", "Let us get started now.", "Can everybody hear me at the back?",
               "Good, thank you all for coming today.", "See you all next week then."]
    r = requests.post(f"{stack.base}/api/courses", json={"title": "Welcome (quiz API)"}, headers=people["owner"],
                      timeout=10)
    course = r.json()["id"]
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=people["owner"],
                      files={"captions": ("hello.vtt", sorting_vtt(sentences=chatter).encode(), "text/vtt")},
                      data={"title": "Welcome", "number": "2"}, timeout=60)
    assert r.status_code == 202, r.text
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=180)["status"] == "ready"
    url = f"{stack.base}/api/lectures/{lecture}/quiz/generate"
    for _ in range(2):  # the refusal does not start the 5-minute wait
        r = requests.post(url, headers=people["owner"], timeout=120)
        assert _code(r) == (422, "no_questions"), r.text
        msg = r.json()["error"]["message"]
        assert "No practice question could be written" in msg and "three wrong options" in msg, msg
    with stack.db() as conn:
        assert conn.execute("SELECT count(*) FROM quiz_generations WHERE lecture_id=%s", (lecture,)).fetchone()[0] == 0


def test_a_lectures_first_set_is_written_when_it_is_first_listed(stack, people):
    """Practice questions come with a processed lecture: the first listing of a lecture that never had a set
    writes one (automatic: the instructor's 5-minute window stays free); later listings write nothing."""
    course, lecture = sorting_course(stack, people["owner"], "Sorting (first set)")

    def generations() -> list[bool]:
        with stack.db() as conn:
            return [r[0] for r in conn.execute("SELECT automatic FROM quiz_generations WHERE lecture_id=%s",
                                               (lecture,)).fetchall()]

    assert generations() == []
    r = requests.get(f"{stack.base}/api/lectures/{lecture}/quiz", headers=people["student"], timeout=60)
    assert r.status_code == 200, r.text
    first = r.json()["questions"]
    assert len(first) >= 3 and all(len(q["options"]) == 4 for q in first), first
    assert generations() == [True]
    again = requests.get(f"{stack.base}/api/courses/{course}/quiz", timeout=60).json()["questions"]
    assert [q["id"] for q in again] == [q["id"] for q in first] and generations() == [True]
    r = requests.post(f"{stack.base}/api/lectures/{lecture}/quiz/generate", headers=people["owner"], timeout=180)
    assert r.status_code == 201, r.text  # the automatic set did not use up the window
    assert sorted(generations()) == [False, True]


def test_a_lecture_that_makes_no_question_is_tried_once_when_listed(stack, people):
    chatter = ["Hello everyone, and welcome back.", "Let us get started now.", "Can everybody hear me at the back?",
               "Good, thank you all for coming today.", "See you all next week then."]
    course = requests.post(f"{stack.base}/api/courses", json={"title": "Welcome (first set)"},
                           headers=people["owner"], timeout=10).json()["id"]
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=people["owner"],
                      files={"captions": ("hello.vtt", sorting_vtt(sentences=chatter).encode(), "text/vtt")},
                      data={"title": "Welcome", "number": "1"}, timeout=60)
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=180)["status"] == "ready"
    for _ in range(2):
        r = requests.get(f"{stack.base}/api/courses/{course}/quiz", timeout=60)
        assert r.status_code == 200 and r.json()["questions"] == [], r.text
    with stack.db() as conn:
        assert conn.execute("SELECT count(*) FROM quiz_generations WHERE lecture_id=%s AND automatic",
                            (lecture,)).fetchone()[0] == 1
    r = requests.post(f"{stack.base}/api/lectures/{lecture}/quiz/generate", headers=people["owner"], timeout=120)
    assert _code(r) == (422, "no_questions"), r.text  # the instructor may still try; the refusal is as before
