"""Lecture numbers on the real stack (hardening #12, items 10 and 11): a number is used once per
course, also under concurrent uploads and renumbers (a unique index decides; an upload without a
number takes the next free one); a database that already holds duplicates is renumbered when the
schema is applied; and a renumber or rename reaches answers, search, the outline and exam-prep
pointers at the next request, without restarting ask."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
import requests
from psycopg.conninfo import make_conninfo

from web_helpers import upload_captions

pytestmark = pytest.mark.slow

VTT = b"WEBVTT\n\n00:01.000 --> 00:04.000\nA heap is a binary tree with the heap property.\n"


def _upload(stack, course: str, number: int | None, i: int) -> requests.Response:
    data = {"title": f"Part {i}"} | ({"number": str(number)} if number is not None else {})
    return requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=120,
                         files={"captions": (f"p{i}.vtt", VTT, "text/vtt")}, data=data)


def _numbers(stack, course: str) -> list[int]:
    return sorted(lec["number"] for lec in requests.get(f"{stack.base}/api/courses/{course}", timeout=10).json()["lectures"])


def test_parallel_uploads_without_a_number_get_distinct_numbers(stack):
    course = stack.create_course("Parallel numbering")
    assert _upload(stack, course, 3, 0).status_code == 202
    with ThreadPoolExecutor(max_workers=12) as pool:
        got = list(pool.map(lambda i: _upload(stack, course, None, i), range(1, 13)))
    assert [r.status_code for r in got] == [202] * 12, [r.text for r in got]
    assert _numbers(stack, course) == list(range(3, 16))


def test_parallel_uploads_of_one_number_give_one_lecture_and_409s(stack):
    course = stack.create_course("Parallel number 7")
    with ThreadPoolExecutor(max_workers=12) as pool:
        got = list(pool.map(lambda i: _upload(stack, course, 7, i), range(12)))
    assert sorted(r.status_code for r in got) == [202] + [409] * 11, [r.text for r in got]
    assert {r.json()["error"]["code"] for r in got if r.status_code == 409} == {"number_taken"}
    assert _numbers(stack, course) == [7]
    # the refused uploads left no media behind
    with stack.db() as c:
        known = {str(r[0]) for r in c.execute("SELECT id FROM lectures").fetchall()}
    folders = {p.name for p in (stack.settings.media_dir / "lectures").iterdir()}
    assert folders <= known


def test_parallel_renumbers_to_one_number_give_one_200_and_409s(stack):
    course = stack.create_course("Parallel renumber")
    ids = [_upload(stack, course, n, n).json()["lecture_id"] for n in range(1, 7)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(lambda lid: requests.patch(f"{stack.base}/api/lectures/{lid}", json={"number": 40},
                                                       headers=stack.admin, timeout=30), ids))
    assert sorted(r.status_code for r in got) == [200] + [409] * 5, [r.text for r in got]
    assert {r.json()["error"]["code"] for r in got if r.status_code == 409} == {"number_taken"}
    assert _numbers(stack, course).count(40) == 1 and len(_numbers(stack, course)) == 6
    # a resumable upload is told at its start that the number is taken
    r = requests.post(f"{stack.base}/api/courses/{course}/uploads", headers=stack.admin, timeout=10,
                      json={"filename": "v.mp4", "size": 1000, "number": 40})
    assert r.status_code == 409 and r.json()["error"]["code"] == "number_taken", r.text


def test_ingest_renames_its_lectures_and_refuses_what_is_not_a_rename(stack):
    """Ingest owns the lectures rows: the gateway's PATCH is ingest's ``PATCH /v1/lectures/{id}``."""
    course = stack.create_course("Ingest renames")
    first, second = (_upload(stack, course, n, n).json()["lecture_id"] for n in (1, 2))
    ingest = f"{stack.settings.ingest_url}/v1/lectures"
    r = requests.patch(f"{ingest}/{first}", json={"title": "Heaps", "number": 5}, timeout=10)
    assert r.status_code == 204, r.text
    lecture = requests.get(f"{stack.base}/api/lectures/{first}", timeout=10).json()
    assert (lecture["title"], lecture["number"]) == ("Heaps", 5)
    r = requests.patch(f"{ingest}/{second}", json={"title": "Trees", "number": 5}, timeout=10)
    assert r.status_code == 409 and r.json()["error"]["code"] == "number_taken", r.text
    for lecture_id in (uuid.uuid4(), "not-a-uuid"):
        r = requests.patch(f"{ingest}/{lecture_id}", json={"title": "x", "number": 1}, timeout=10)
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", r.text
    for body in ({"title": "x"}, {"title": 3, "number": 1}, {"title": "x", "number": True},
                 {"title": "x", "number": -1}, {"title": "x", "number": 10_000}, ["x", 1]):
        r = requests.patch(f"{ingest}/{second}", json=body, timeout=10)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json", (body, r.text)
    assert _numbers(stack, course) == [2, 5]


@pytest.fixture
def scratch_db(stack):
    """A database of its own on the stack's Postgres server (dropped afterwards): its URL."""
    name = f"lc_mig_{uuid.uuid4().hex[:10]}"
    with stack.db() as c:
        c.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(stack.db_url, dbname=name)
    finally:
        with stack.db() as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_schema_renumbers_duplicates_of_an_existing_database(scratch_db):
    from lecturecopilot.db import apply_schema

    apply_schema(scratch_db)
    with psycopg.connect(scratch_db, autocommit=True) as c:  # a database from before the unique index
        c.execute("DROP INDEX IF EXISTS lectures_course_number")
        c.execute("DROP INDEX IF EXISTS feedback_one_per_rater")
        c.execute("ALTER TABLE feedback DROP COLUMN IF EXISTS rater")
        a, b = str(uuid.uuid4()), str(uuid.uuid4())
        for cid in (a, b):
            c.execute("INSERT INTO courses (id, title) VALUES (%s, 'old')", (cid,))
        rows = [(a, 1, "a1"), (a, 1, "a1-dup"), (a, 2, "a2"), (a, 2, "a2-dup"), (a, 2, "a2-dup2"), (a, 5, "a5"),
                (b, 1, "b1"), (b, 1, "b1-dup")]
        for k, (cid, n, title) in enumerate(rows):  # created one second apart, in this order
            c.execute("INSERT INTO lectures (id, course_id, number, title, created_at) "
                      "VALUES (%s, %s, %s, %s, now() - make_interval(secs => %s))",
                      (str(uuid.uuid4()), cid, n, title, float(100 - k)))
        answer = str(uuid.uuid4())
        c.execute("INSERT INTO answers (id, conversation_id, course_id, question, answer, declined, sentences, "
                  "sources, writer) VALUES (%s, %s, %s, 'q', 'a', false, '[]', '[]', 'extractive')",
                  (answer, str(uuid.uuid4()), a))
        c.execute("INSERT INTO feedback (answer_id, rating) VALUES (%s, 'down'), (%s, 'down')", (answer, answer))
    apply_schema(scratch_db)
    apply_schema(scratch_db)  # idempotent
    with psycopg.connect(scratch_db, autocommit=True) as c:
        got = dict(c.execute("SELECT title, number FROM lectures").fetchall())
        assert got == {"a1": 1, "a2": 2, "a5": 5, "a1-dup": 6, "a2-dup": 7, "a2-dup2": 8, "b1": 1, "b1-dup": 2}, got
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute("UPDATE lectures SET number=1 WHERE title='a2'")
        legacy = c.execute("SELECT rating, rater FROM feedback WHERE answer_id=%s", (answer,)).fetchall()
        assert legacy == [("down", None), ("down", None)]  # kept, each on its own


def _ask(stack, course: str, question: str) -> dict:
    r = requests.post(f"{stack.base}/api/courses/{course}/ask", json={"question": question}, headers=stack.admin,
                      timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def _labels(answer: dict) -> set[str]:
    return {c["label"].split(" · ")[0] for s in answer["sentences"] for c in s["citations"]}


def test_a_renumber_and_a_rename_reach_answers_search_outline_and_exam_prep_at_once(stack):
    from .test_quiz_api import sorting_vtt

    course = stack.create_course("Renumbered")
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=60,
                      files={"captions": ("sorting.vtt", sorting_vtt().encode(), "text/vtt")},
                      data={"title": "Sorting", "number": "1"})
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=180)["status"] == "ready"
    other = upload_captions(stack.base, course, headers=stack.admin, title="Heaps", number=2).json()["lecture_id"]
    assert stack.wait_ready(other, timeout_s=180)["status"] == "ready"
    search = f"{stack.base}/api/courses/{course}/search"
    q = "How does merge sort split the array?"

    def searched() -> set[int]:
        r = requests.post(search, json={"query": q, "lecture_id": lecture}, headers=stack.admin, timeout=30)
        assert r.status_code == 200 and r.json()["results"], r.text
        return {x["lecture_number"] for x in r.json()["results"]}

    # before: ask's replica has the lecture as L1
    assert _labels(_ask(stack, course, q)) == {"L1"} and searched() == {1}
    r = requests.patch(f"{stack.base}/api/lectures/{lecture}", json={"number": 5, "title": "Sorting algorithms"},
                       headers=stack.admin, timeout=10)
    assert r.status_code == 200 and r.json()["number"] == 5, r.text
    # the next requests show L5, in answers (labels and sources), search, the outline and exam prep
    answer = _ask(stack, course, q)
    assert _labels(answer) == {"L5"}, answer
    assert {s["lecture_number"] for s in answer["sources"] if s["lecture_id"] == lecture} == {5}
    assert all(c["lecture_number"] == 5 for s in answer["sentences"] for c in s["citations"])
    assert searched() == {5}
    outline = _ask(stack, course, "How many lectures are there?")
    assert "L5 Sorting algorithms" in outline["answer"] and "L2 Heaps" in outline["answer"], outline["answer"]
    assert _labels(outline) == {"L2", "L5"}
    quiz = _ask(stack, course, "Quiz me on merge sort")
    assert "Lecture 5, “Sorting algorithms”" in quiz["answer"] and _labels(quiz) == {"L5"}, quiz["answer"]
    practice = requests.get(f"{stack.base}/api/lectures/{lecture}/practice", timeout=10).json()["questions"]
    assert practice and all(x["lecture_number"] == 5 and x["citation"]["label"].startswith("L5 · ") for x in practice)
    # and back: a second renumber is seen too
    assert requests.patch(f"{stack.base}/api/lectures/{lecture}", json={"number": 3}, headers=stack.admin,
                          timeout=10).status_code == 200
    assert _labels(_ask(stack, course, q)) == {"L3"} and searched() == {3}
