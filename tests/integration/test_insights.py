"""Instructor insights on the real stack, from a seeded log of a few hundred realistic questions
(rows inserted into ``answers`` and ``feedback``): the question count and distinct students (by
keyed hash), the most-asked topics and the uncovered questions grouped by meaning, thumbs-down
answers with comments, the most-cited moments, activity per day, the CSV export, the period, and
who may read them. Postgres: the stack's (the machine's 15 when it answers: numpy neighbours; the
embedded 18 with pgvector, or with ``LC_TEST_PG=embedded``: neighbours by ``<=>`` in SQL)."""

from __future__ import annotations

import csv
import io
import json
import random
import uuid
from datetime import datetime, timedelta, timezone

import pytest
import requests

from web_helpers import mint

pytestmark = pytest.mark.slow

HEAP = ["What is a max heap?", "what's a max heap", "Can you explain what a max heap is?", "max heap definition?",
        "What is a max-heap exactly?", "explain the max heap please"]
MERGE = ["How does merge sort work?", "how does mergesort work", "Can you explain how merge sort works?",
         "How does merge sort split and merge the array?", "explain merge sort step by step"]
HASH = ["What is a hash collision?", "what's a hash collision", "What happens on a hash collision?",
        "Can you explain hash collisions?"]
EXAM = ["When is the final exam?", "when is the final exam", "What date is the final exam?",
        "When do we have the final exam?"]
QUANTUM = ["How do quantum computers factor numbers?", "how does a quantum computer factor integers",
           "Explain quantum factoring with qubits"]
HEAP_LECTURE = ["Today we look at priority queues.", "A priority queue returns the item with the largest key first.",
                "A binary heap stores a priority queue in an array.", "The array encodes a complete binary tree.",
                "The children of node i sit at indices two i plus one and two i plus two.",
                "In a max heap every parent key is at least as large as its children.",
                "So the largest key always sits at the root of a max heap.",
                "Inserting a key appends it and bubbles it up until the heap property holds again.",
                "Deleting the maximum swaps the root with the last item and bubbles it down.",
                "Both operations take log n time because the tree has logarithmic height.",
                "Building a heap from an array takes linear time."]
SINGLES = ["Who wrote the textbook for this course?", "Is binary search faster than linear search on sorted data?",
           "What does amortized analysis mean?", "Why do we use big O notation?"]


def ts(days_ago: float) -> datetime:
    return datetime.now(timezone.utc).replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=days_ago)


@pytest.fixture(scope="module")
def seeded(stack):
    """A course with two captions lectures (L1 sorting, L2 heaps) and a seeded log: 90 heap, 60 merge
    sort, 40 hash questions (answered, citing L2 · 1:01, L1 · 0:12, L1 · 0:42), 32 final-exam and 15
    quantum questions (declined), 4 singles, spread over the last 14 days by 40 students; 25 more
    from 40 days ago (outside the default period); 6 thumbs down (5 with comments), 10 thumbs up."""
    from .test_quiz_api import SENTENCES, sorting_vtt

    owner = mint(stack, "instructor", "insights-owner@example.edu")
    r = requests.post(f"{stack.base}/api/courses", json={"title": "Insights course"}, headers=owner, timeout=10)
    course = r.json()["id"]
    lectures = {}
    for no, sents in ((1, SENTENCES), (2, HEAP_LECTURE)):
        r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=owner,
                          files={"captions": (f"l{no}.vtt", sorting_vtt(6.0, sents).encode(), "text/vtt")},
                          data={"title": f"Lecture {no}", "number": str(no)}, timeout=60)
        assert r.status_code == 202, r.text
        lectures[no] = r.json()["lecture_id"]
    for lid in lectures.values():
        assert stack.wait_ready(lid, timeout_s=180)["status"] == "ready"
    rng = random.Random(7)
    students = [f"{i:032x}" for i in range(40)]
    rows = []  # (question, declined, cite (lecture_id, t_s) | None, created_at)

    def add(texts, n, declined, cite, days=14):
        for i in range(n):
            rows.append((texts[i % len(texts)], declined, cite, ts(rng.uniform(0, days - 1))))

    add(HEAP, 90, False, (lectures[2], 61.0))
    add(MERGE, 60, False, (lectures[1], 12.0))
    add(HASH, 40, False, (lectures[1], 42.0))
    add(EXAM, 32, True, None)
    add(QUANTUM, 15, True, None)
    add(SINGLES, 4, False, (lectures[1], 30.0))
    old = [(HEAP[0], False, (lectures[2], 61.0), ts(40)) for _ in range(25)]
    ids = []
    with stack.db() as conn:
        for i, (q, declined, cite, at) in enumerate(rows + old):
            aid = str(uuid.uuid4())
            ids.append((aid, q))
            sentences = [] if declined else [{"text": "From the lecture.", "citations": [
                {"lecture_id": cite[0], "t_s": cite[1]}]}]
            answer = "Not covered in these lectures." if declined else "From the lecture."
            conn.execute("INSERT INTO answers (id, conversation_id, course_id, lecture_id, question, answer, declined, "
                         "sentences, sources, writer, created_at, asker) VALUES (%s,%s,%s,NULL,%s,%s,%s,%s,'[]',"
                         "'extractive',%s,%s)",
                         (aid, str(uuid.uuid4()), course, q, answer, declined, json.dumps(sentences), at,
                          students[i % len(students)]))
        merge_ids = [aid for aid, q in ids[:len(rows)] if q in MERGE]
        comments = ["The chip pointed at the wrong part", "Too short", None, "Did not explain the merge step",
                    "Wrong lecture", "Confusing"]
        for aid, c in zip(merge_ids[:6], comments):
            conn.execute("INSERT INTO feedback (answer_id, rating, comment) VALUES (%s,'down',%s)", (aid, c))
        for aid in merge_ids[6:16]:
            conn.execute("INSERT INTO feedback (answer_id, rating, comment) VALUES (%s,'up',NULL)", (aid,))
    return {"course": course, "owner": owner, "lectures": lectures, "n": len(rows), "rows": rows}


def _get(stack, seeded, suffix="", headers=None, **params):
    return requests.get(f"{stack.base}/api/courses/{seeded['course']}/insights{suffix}", params=params,
                        headers=seeded["owner"] if headers is None else headers, timeout=120)


def test_insights_group_count_and_rank(stack, seeded):
    r = _get(stack, seeded)
    assert r.status_code == 200, r.text
    ins = r.json()
    assert ins["questions"] == seeded["n"] == 241 and ins["declined"] == 47 and ins["students"] == 40
    topics = ins["topics"]
    # the three big topics come first, each whole, labelled by one of its own questions
    for t, texts, n in zip(topics[:3], (HEAP, MERGE, HASH), (90, 60, 40)):
        assert t["label"] in texts and t["count"] == n, (t, topics[:5])
        assert all(e in texts for e in t["examples"]) and t["examples"]
    assert sum(t["count"] for t in topics) == 194
    un = ins["uncovered"]
    assert [u["count"] for u in un[:2]] == [32, 15], un
    assert un[0]["label"] in EXAM and un[1]["label"] in QUANTUM
    # thumbs down: 6, with the comments that were given
    assert len(ins["thumbs_down"]) == 6
    assert all(d["question"] in MERGE for d in ins["thumbs_down"])
    assert {d["comment"] for d in ins["thumbs_down"]} >= {"Too short", "Wrong lecture", None}
    # most-cited moments
    top = ins["top_moments"]
    assert [(m["label"], m["count"]) for m in top[:3]] == [("L2 · 1:01", 90), ("L1 · 0:12", 60), ("L1 · 0:42", 40)]
    assert top[0]["lecture_id"] == seeded["lectures"][2] and top[0]["t_s"] == 61.0
    # per day: 30 days, summing to the total, the old rows outside
    days = ins["per_day"]
    assert len(days) == 30 and sum(d["questions"] for d in days) == 241 and sum(d["declined"] for d in days) == 47
    assert days[-1]["date"] == datetime.now(timezone.utc).date().isoformat()
    # no identities anywhere
    assert "@" not in r.text and "example.edu" not in r.text
    assert ins["grouping"]["threshold"] == 0.6
    # the neighbours came from SQL (<=>) exactly when the stack's Postgres has pgvector (the embedded one,
    # LC_TEST_PG=embedded), from numpy on the machine's Postgres 15
    with stack.db() as c:
        has_pgvector = c.execute("SELECT 1 FROM pg_extension WHERE extname='vector'").fetchone() is not None
    assert ("pgvector" in ins["grouping"]["method"]) == has_pgvector, ins["grouping"]


def test_the_period_selects_rows(stack, seeded):
    old_day = (datetime.now(timezone.utc) - timedelta(days=40)).date().isoformat()
    r = _get(stack, seeded, **{"from": old_day, "to": old_day})
    ins = r.json()
    assert ins["questions"] == 25 and ins["topics"][0]["count"] == 25 and ins["uncovered"] == []
    assert len(ins["per_day"]) == 1
    today = datetime.now(timezone.utc).date()
    r = _get(stack, seeded, **{"from": (today - timedelta(days=60)).isoformat(), "to": today.isoformat()})
    assert r.json()["questions"] == 266
    for bad in ({"from": "yesterday"}, {"from": today.isoformat(), "to": (today - timedelta(days=1)).isoformat()},
                {"from": "2020-01-01", "to": today.isoformat()}):
        r = _get(stack, seeded, **bad)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_period", bad


def test_csv_export(stack, seeded):
    r = _get(stack, seeded, ".csv")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/csv")
    assert "attachment" in r.headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == ["section", "label", "count", "lecture_number", "t_s", "detail"]
    assert ["summary", "questions", "241"] == rows[1][:3]
    topics = [x for x in rows if x[0] == "topics"]
    assert topics[0][1] in HEAP and topics[0][2] == "90"
    assert ["top_moment", "L2 · 1:01", "90", "2", "61.0"] == [x for x in rows if x[0] == "top_moment"][0][:5]
    assert len([x for x in rows if x[0] == "per_day"]) == 30


def test_only_the_owner_or_an_admin_reads_insights(stack, seeded):
    assert _get(stack, seeded, headers={}).status_code == 401
    assert _get(stack, seeded, headers=mint(stack, "student", "insights-stu@example.edu")).status_code == 403
    r = _get(stack, seeded, ".csv", headers=mint(stack, "instructor", "insights-other@example.edu"))
    assert r.status_code == 403 and "instructor or an admin can do this" in r.json()["error"]["message"], r.text
    assert _get(stack, seeded, headers=stack.admin).status_code == 200
    r = requests.get(f"{stack.base}/api/courses/{uuid.uuid4()}/insights", headers=stack.admin, timeout=10)
    assert r.status_code == 404


def test_asking_through_the_gateway_records_the_askers_hash(stack, seeded):
    who = mint(stack, "student", "insights-asker@example.edu")
    r = requests.post(f"{stack.base}/api/courses/{seeded['course']}/ask", json={"question": "What is a max heap?"},
                      headers={**who, "Accept": "application/json"}, timeout=120)
    assert r.status_code == 200, r.text
    with stack.db() as conn:
        asker = conn.execute("SELECT asker FROM answers WHERE id=%s", (r.json()["answer_id"],)).fetchone()[0]
    assert asker and len(asker) == 32 and "insights" not in asker
    assert _get(stack, seeded).json()["students"] == 41
    # the course's staff trying their own course are not students: neither the asker nor the question
    # counts (an instructor's hundred test questions would otherwise be the course's top topics)
    before = _get(stack, seeded).json()["questions"]
    r = requests.post(f"{stack.base}/api/courses/{seeded['course']}/ask", json={"question": "What is a min heap?"},
                      headers={**stack.admin, "Accept": "application/json"}, timeout=120)
    assert r.status_code == 200, r.text
    with stack.db() as conn:
        asker, staff = conn.execute("SELECT asker, staff FROM answers WHERE id=%s", (r.json()["answer_id"],)).fetchone()
    assert asker and staff is True
    after = _get(stack, seeded).json()
    assert after["students"] == 41 and after["questions"] == before
    assert sum(d["questions"] for d in after["per_day"]) == after["questions"]  # the chart counts what the total does
    shown = [t for g in after["topics"] + after["uncovered"] for t in [g["label"], *g["examples"]]]
    assert shown and "What is a min heap?" not in shown


def test_outline_and_quiz_me_answers_are_not_top_moments(stack, seeded):
    """Outline answers ("which lecture covers heaps?") and "quiz me" pointers cite a lecture's start:
    counted as questions, never as moments taught."""
    day = datetime.now(timezone.utc) - timedelta(days=80)
    with stack.db() as conn:
        for i, writer in enumerate(["outline"] * 6 + ["exam_prep"] * 4 + ["extractive"]):
            t_s = 12.0 if writer == "extractive" else 0.0
            conn.execute("INSERT INTO answers (id, conversation_id, course_id, question, answer, declined, sentences, "
                         "sources, writer, created_at) VALUES (%s,%s,%s,%s,'x',false,%s,'[]',%s,%s)",
                         (str(uuid.uuid4()), str(uuid.uuid4()), seeded["course"], f"which lecture covers heaps {i}?",
                          json.dumps([{"text": "x", "citations": [{"lecture_id": seeded["lectures"][2], "t_s": t_s}]}]),
                          writer, day))
    ins = _get(stack, seeded, **{"from": day.date().isoformat(), "to": day.date().isoformat()}).json()
    assert ins["questions"] == 11
    assert [(m["label"], m["count"]) for m in ins["top_moments"]] == [("L2 · 0:12", 1)]


def test_follow_ups_are_grouped_as_asked_and_moments_keep_the_answers_label(stack, seeded):
    """"and for radix sort?" counts as the question it was answered as; a chip at 221.68 s reads
    L2 · 3:41 in the answer, so the moment reads 3:41 too (not 3:42)."""
    day = datetime.now(timezone.utc) - timedelta(days=120)
    with stack.db() as conn:
        for q, rewritten in [("What is radix sort?", "What is radix sort?"), ("and for radix sort?", "What is radix sort?"),
                             ("why?", "Why? What is radix sort?")]:
            conn.execute("INSERT INTO answers (id, conversation_id, course_id, question, rewritten_question, answer, "
                         "declined, sentences, sources, writer, created_at) VALUES (%s,%s,%s,%s,%s,'x',false,%s,'[]',"
                         "'extractive',%s)",
                         (str(uuid.uuid4()), str(uuid.uuid4()), seeded["course"], q, rewritten,
                          json.dumps([{"text": "x", "citations": [{"lecture_id": seeded["lectures"][2], "t_s": 221.68}]}]),
                          day))
    ins = _get(stack, seeded, **{"from": day.date().isoformat(), "to": day.date().isoformat()}).json()
    labels = [t["label"] for t in ins["topics"]]
    assert "and for radix sort?" not in labels and "why?" not in labels, ins["topics"]
    assert sum(t["count"] for t in ins["topics"]) == 3 and ins["topics"][0]["count"] >= 2, ins["topics"]
    assert [(m["label"], m["t_s"], m["count"]) for m in ins["top_moments"]] == [("L2 · 3:41", 221.0, 3)]
