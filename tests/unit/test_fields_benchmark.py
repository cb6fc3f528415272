"""Format invariants of the many-fields benchmark (``evals/fields/``): lectures in at least eight
fields besides computer science, narration written as spoken (60-110 words a part, no digits or
symbols), every term verbatim in its lecture's narration, about a third of the lectures sealed, and
questions whose lecture, part, form, split and follow-up links are consistent."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ROOT / "evals" / "fields"
COURSE = json.loads((FIELDS / "lectures.json").read_text(encoding="utf-8"))
LECTURES = COURSE["lectures"]
BY_NUMBER = {lec["number"]: lec for lec in LECTURES}
QUESTIONS = [json.loads(line) for line in (FIELDS / "questions.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]

COMPUTER_SCIENCE = {"computer science", "algorithms", "cs"}
SYMBOLS = set("=+*/<>^%$#@&|~_[]{}\\")  # none of these in spoken narration
COVERED_FORMS = {"full", "fragment", "misspelled", "paraphrase", "imperative", "followup", "definition"}
UNCOVERED_FORMS = {"uncovered_near", "uncovered_far"}


def narration(lec: dict) -> str:
    return " ".join(part["narration"] for part in lec["parts"])


def test_lecture_shape():
    assert isinstance(COURSE["course"], str) and COURSE["course"]
    numbers = [lec["number"] for lec in LECTURES]
    assert len(numbers) == len(set(numbers)), "lecture numbers must be unique"
    for lec in LECTURES:
        assert set(lec) == {"number", "title", "field", "split", "parts", "terms"}, lec["number"]
        assert lec["title"] and lec["field"] and lec["split"] in {"dev", "sealed"}
        assert 4 <= len(lec["parts"]) <= 6, lec["number"]
        for part in lec["parts"]:
            assert set(part) == {"slide_title", "slide_lines", "narration"}
            assert part["slide_title"].strip()
            assert 2 <= len(part["slide_lines"]) <= 4, (lec["number"], part["slide_title"])
            assert all(line.strip() for line in part["slide_lines"])


@pytest.mark.parametrize("lec", LECTURES, ids=lambda lec: f"lecture-{lec['number']}")
def test_narration_is_spoken_text(lec):
    for i, part in enumerate(lec["parts"]):
        text = part["narration"]
        words = len(text.split())
        assert 60 <= words <= 110, f"lecture {lec['number']} part {i}: {words} words"
        assert not any(c.isdigit() for c in text), f"lecture {lec['number']} part {i} has a digit"
        assert not SYMBOLS & set(text), f"lecture {lec['number']} part {i}: {sorted(SYMBOLS & set(text))}"
        assert "\n" not in text


@pytest.mark.parametrize("lec", LECTURES, ids=lambda lec: f"lecture-{lec['number']}")
def test_every_term_is_in_the_narration(lec):
    text = narration(lec).lower()
    terms = lec["terms"]
    assert len(terms) >= 10, lec["number"]
    assert len({t.lower() for t in terms}) == len(terms), "duplicate term"
    missing = [t for t in terms if t.lower() not in text]
    assert not missing, f"lecture {lec['number']}: terms not in its narration: {missing}"


def test_fields_and_splits():
    per_field = Counter(lec["field"] for lec in LECTURES if lec["field"].lower() not in COMPUTER_SCIENCE)
    assert sum(1 for n in per_field.values() if n >= 2) >= 8, per_field
    sealed = [lec for lec in LECTURES if lec["split"] == "sealed"]
    assert 0.25 <= len(sealed) / len(LECTURES) <= 0.42, f"{len(sealed)} of {len(LECTURES)} sealed"
    assert len({lec["field"] for lec in sealed}) >= 4
    for field, n in Counter(lec["field"] for lec in LECTURES).items():
        splits = {lec["split"] for lec in LECTURES if lec["field"] == field}
        assert "dev" in splits, f"{field} has no dev lecture"
        if n >= 3:
            assert "sealed" in splits, f"{field} has {n} lectures and none sealed"


def test_question_rows():
    ids = [q["id"] for q in QUESTIONS]
    assert len(ids) == len(set(ids)), "question ids must be unique"
    for q in QUESTIONS:
        assert {"id", "lecture", "part", "question", "form", "covered", "split"} <= set(q) <= \
            {"id", "lecture", "part", "question", "form", "covered", "split", "after"}, q["id"]
        assert q["question"].strip() and "\n" not in q["question"]
        assert q["split"] in {"dev", "sealed"}
        assert q["form"] in COVERED_FORMS | UNCOVERED_FORMS, q["id"]
        if q["covered"]:
            assert q["form"] in COVERED_FORMS, q["id"]
            lec = BY_NUMBER[q["lecture"]]
            assert isinstance(q["part"], int) and 0 <= q["part"] < len(lec["parts"]), q["id"]
            assert q["split"] == lec["split"], f"{q['id']}: split differs from its lecture's"
        else:
            assert q["covered"] is False and q["form"] in UNCOVERED_FORMS, q["id"]
            assert q["lecture"] is None and q["part"] is None, q["id"]


def test_followups_point_back():
    position = {q["id"]: i for i, q in enumerate(QUESTIONS)}
    for i, q in enumerate(QUESTIONS):
        if q["form"] != "followup":
            assert "after" not in q, q["id"]
            continue
        assert q["after"] in position, f"{q['id']}: unknown after {q['after']}"
        assert position[q["after"]] == i - 1, f"{q['id']} must directly follow {q['after']}"
        before = QUESTIONS[i - 1]
        assert before["covered"] and before["lecture"] == q["lecture"], q["id"]


def test_question_mix():
    forms = Counter(q["form"] for q in QUESTIONS)
    uncovered = forms["uncovered_near"] + forms["uncovered_far"]
    assert 0.15 <= uncovered / len(QUESTIONS) <= 0.30, forms
    assert min(forms["uncovered_near"], forms["uncovered_far"]) >= uncovered / 3, forms
    for lec in LECTURES:
        mine = [q for q in QUESTIONS if q["lecture"] == lec["number"]]
        assert 6 <= len(mine) <= 10, f"lecture {lec['number']}: {len(mine)} covered questions"
        assert COVERED_FORMS <= {q["form"] for q in mine}, f"lecture {lec['number']} lacks a form"
    assert {q["split"] for q in QUESTIONS if not q["covered"]} == {"dev", "sealed"}
