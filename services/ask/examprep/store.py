"""Exam-prep questions in Postgres (``quiz_questions``, ``quiz_reports``, ``quiz_attempts``,
``quiz_generations`` in ``lecturecopilot/schema.sql``): generate-and-store a lecture's set
(replacing the old one, at most once per lecture every 5 minutes), list, edit, delete, report,
record an attempt. Functions take a psycopg connection (any row factory); on an autocommit
connection each call's work is committed when it returns (inside a pool's ``connection()``
block, when the block ends). The question writing and checking is the rest of :mod:`services.ask.examprep`.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from dataclasses import dataclass, field
from typing import Sequence

from psycopg.rows import dict_row

from lecturecopilot.labels import citation_label

from ..writers.cloud import WriterUnavailable
from .check import checked
from .model import model_questions
from .questions import EmbedFn, LectureSentence, Question, extractive_questions, target_questions
from .terms import norm

REGENERATE_EVERY_S = 300.0
MAX_COMMENT_CHARS = 2000


class QuizError(ValueError):
    """An invalid request (unknown question, bad options, citation outside the lecture...)."""


class RegenerationTooSoon(QuizError):
    """The lecture's set was generated less than 5 minutes ago; ``wait_s`` seconds remain."""

    def __init__(self, wait_s: float):
        self.wait_s = max(1, int(wait_s + 0.999))
        super().__init__(f"Questions for this lecture were generated less than 5 minutes ago; "
                         f"try again in {self.wait_s} s.")


class NotFound(QuizError):
    """The lecture or question named does not exist."""


class NoQuestions(QuizError):
    """Nothing in the lecture made a question that passed the check; the old set is kept."""


@dataclass
class Generation:
    """What one generation did: questions ``written`` (before the check), ``kept`` (stored),
    the share dropped by the check, the ``method``, and the seconds it took."""

    lecture_id: str
    method: str
    written: int
    kept: int
    dropped_share: float
    seconds: float
    dropped_reasons: dict = field(default_factory=dict)
    questions: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class _Material:
    """What :func:`_generate` writes from: the ``lecture`` row (id, course_id, number, title), its
    ``sents`` in order and its ``span`` (0, end) in seconds, as :func:`lecture_material` gives them."""

    lecture: dict
    sents: list[LectureSentence]
    span: tuple[float, float]


@dataclass(frozen=True)
class QuestionFields:
    """A question's fields as an instructor may edit them (see :func:`validate`): ``stem``, the 4
    ``options``, ``answer_index`` (0–3), ``explanation``, and the citation ``cite_lecture_id``
    at ``cite_t_s`` (seconds from the start of that lecture's media). Values are as received
    (JSON), not yet checked."""

    stem: object
    options: object
    answer_index: object
    explanation: object
    cite_lecture_id: object
    cite_t_s: object


def _rows(conn, sql: str, args: Sequence = ()) -> list[dict]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(sql, args)
        return cur.fetchall() if cur.description else []


def _uuid(value: str, what: str = "question") -> str:
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        raise NotFound(f"Unknown {what}.") from None


def lecture_material(conn, lecture_id: str) -> tuple[dict, list[LectureSentence], tuple[float, float]]:
    """(lecture row: id, course_id, number, title; its sentences in order; its span (0, end) in
    seconds, end = duration_s or the last sentence's end). Raises NotFound for an unknown lecture."""
    lecture_id = _uuid(lecture_id, "lecture")
    rows = _rows(conn, "SELECT id::text AS id, course_id::text AS course_id, number, title, duration_s "
                       "FROM lectures WHERE id=%s", (lecture_id,))
    if not rows:
        raise NotFound("Unknown lecture.")
    sents = [LectureSentence(r["idx"], r["start_s"], r["end_s"], r["text"]) for r in _rows(
        conn, "SELECT idx, start_s, end_s, text FROM sentences WHERE lecture_id=%s ORDER BY idx", (lecture_id,))]
    end = max([rows[0]["duration_s"] or 0.0] + [s.end_s for s in sents])
    return rows[0], sents, (0.0, end)


def _claim(conn, lecture_id: str, min_interval_s: float, automatic: bool = False) -> None:
    """Records a generation of the lecture's set (serialised per lecture with a transaction-scoped
    advisory lock, so two requests can't both pass). An instructor's generation raises
    RegenerationTooSoon within ``min_interval_s`` of the last instructor's generation; an
    ``automatic`` one (a student's "quiz me" on a lecture with no set) is not counted in that
    window and raises QuizError when the lecture already has questions."""
    with conn.transaction():
        _rows(conn, "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"quiz:{lecture_id}",))
        if automatic:
            if _rows(conn, "SELECT 1 FROM quiz_questions WHERE lecture_id=%s LIMIT 1", (lecture_id,)):
                raise QuizError("The lecture already has questions.")
        else:
            last = _rows(conn, "SELECT extract(epoch FROM now() - max(created_at)) AS ago FROM quiz_generations "
                               "WHERE lecture_id=%s AND NOT automatic", (lecture_id,))[0]["ago"]
            if last is not None and float(last) < min_interval_s:
                raise RegenerationTooSoon(min_interval_s - float(last))
        _rows(conn, "INSERT INTO quiz_generations (lecture_id, automatic) VALUES (%s, %s)", (lecture_id, automatic))


def generate(conn, lecture_id: str, embed: EmbedFn, *, writers: Sequence = (),
             max_questions: int | None = None, min_interval_s: float = REGENERATE_EVERY_S,
             automatic: bool = False) -> Generation:
    """Writes, checks and stores a lecture's set, replacing its old questions (their reports and
    attempts go with them). With ``writers`` (cloud writers with ``complete()``), the first whose
    questions survive the check writes the set; otherwise the extractive writer does.
    ``max_questions``: the most questions written (default: :func:`target_questions` of the
    lecture's length for a cloud writer, one and a half times that for the extractive writer,
    whose check drops some); at most that many are kept.

    Raises NotFound for an unknown lecture; RegenerationTooSoon within ``min_interval_s`` of the
    lecture's last instructor's generation; with ``automatic`` (see :func:`_claim`), QuizError
    when the lecture already has a set; NoQuestions when no question survives the check (the old
    set stays and the 5-minute window is not used up; an automatic try is kept on record, so a
    lecture that makes no question is not tried again on every listing)."""
    t0 = time.perf_counter()
    lecture, sents, span = lecture_material(conn, lecture_id)
    lecture_id = lecture["id"]
    _claim(conn, lecture_id, min_interval_s, automatic)
    try:
        return _generate(conn, _Material(lecture, sents, span), embed, writers, max_questions, t0)
    except NoQuestions:
        if not automatic:  # the instructor's window is not used up; an automatic try stays on record
            _give_back(conn, lecture_id)
        raise
    except BaseException:  # nothing was stored: give the claim back
        _give_back(conn, lecture_id)
        raise


def _give_back(conn, lecture_id: str) -> None:
    """Deletes the lecture's latest generation record (a claim whose generation stored nothing)."""
    _rows(conn, "DELETE FROM quiz_generations WHERE ctid IN (SELECT ctid FROM quiz_generations WHERE lecture_id=%s "
                "ORDER BY created_at DESC LIMIT 1)", (lecture_id,))


def never_generated(conn, *, lecture_id: str | None = None, course_id: str | None = None) -> list[str]:
    """The ready lectures of the scope (one lecture, or a course's) that have never had a set written or
    tried, instructor's or automatic (no ``quiz_generations`` row), in lecture order: their first set is
    written when they are first listed (:func:`services.ask.examprep.practice.list_practice`)."""
    where, arg = ("l.id=%s", _uuid(lecture_id, "lecture")) if lecture_id else ("l.course_id=%s", _uuid(course_id, "course"))
    return [r["id"] for r in _rows(
        conn, f"SELECT l.id::text AS id FROM lectures l WHERE {where} AND l.status='ready' AND NOT EXISTS "
              "(SELECT 1 FROM quiz_generations g WHERE g.lecture_id=l.id) ORDER BY l.number", (arg,))]


def _generate(conn, material: _Material, embed, writers, max_questions: int | None, t0: float) -> Generation:
    """:func:`generate` once the generation is claimed: writes, checks and stores the set; ``t0``
    is the ``time.perf_counter()`` at which the generation began."""
    lecture, sents, span = material.lecture, material.sents, material.span
    lecture_id = lecture["id"]
    course = [r["text"] for r in _rows(
        conn, "SELECT s.text FROM sentences s JOIN lectures l ON l.id=s.lecture_id WHERE l.course_id=%s "
              "ORDER BY l.number, s.idx", (lecture["course_id"],))]
    written: list[Question] = []
    kept: list[Question] = []
    dropped: list = []
    target = target_questions(span[1] - span[0])
    if writers:
        chapters = [(r["start_s"], r["end_s"], r["title"]) for r in _rows(
            conn, "SELECT start_s, end_s, title FROM chapters WHERE lecture_id=%s ORDER BY idx", (lecture_id,))]
        for w in writers:
            try:
                written = model_questions(w, lecture_id, lecture["number"], sents, chapters,
                                          max_questions=max_questions or target)
            except WriterUnavailable:
                continue
            kept, dropped = checked(written, sents, span, embed)
            if kept:
                break
    if not kept:
        written = extractive_questions(lecture_id, lecture["number"], sents, course, embed=embed,
                                       max_questions=max_questions or math.ceil(1.5 * target))
        kept, dropped = checked(written, sents, span, embed)
    if not kept:
        if written:
            raise NoQuestions(f"No practice question could be written from this lecture ({len(written)} written, "
                              f"none passed the check); its set is unchanged.")
        raise NoQuestions("No practice question could be written from this lecture: a question needs a sentence "
                          "that defines a term or states a cause, result, quantity or step, and three wrong options "
                          "taken from the terms or quantities the course's lectures use; a very short course has "
                          "few. Its set is unchanged.")
    with conn.transaction():
        _rows(conn, "DELETE FROM quiz_questions WHERE lecture_id=%s", (lecture_id,))
        for q in kept:
            _rows(conn, "INSERT INTO quiz_questions (id, course_id, lecture_id, stem, options, answer_index, "
                        "explanation, cite_lecture_id, cite_t_s, method) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                  (str(uuid.uuid4()), lecture["course_id"], lecture_id, q.stem, json.dumps(q.options),
                   q.answer_index, q.explanation, q.cite_lecture_id, q.cite_t_s, q.method))
    reasons: dict[str, int] = {}
    for _, r in dropped:
        reasons[r.reason] = reasons.get(r.reason, 0) + 1
    method = kept[0].method if kept else "extractive"
    return Generation(lecture_id, method, len(written), len(kept), len(dropped) / max(1, len(written)),
                      time.perf_counter() - t0, reasons, list_questions(conn, lecture_id=lecture_id))


#: who made an attempt (a ``quiz_attempts`` column expression): the person, or for an attempt from
#: before people were kept, the row itself. Attempt counts are ``count(DISTINCT _PERSON)``.
_PERSON = "coalesce(person, ctid::text)"


def list_questions(conn, *, lecture_id: str | None = None, course_id: str | None = None) -> list[dict]:
    """A lecture's (or a course's) questions in lecture and time order, each with its chip
    label (``L4 · 31:32``), report and attempt counts."""
    if lecture_id is None and course_id is None:
        raise QuizError("Name a lecture or a course.")
    where, arg = ("q.lecture_id=%s", _uuid(lecture_id, "lecture")) if lecture_id else \
        ("q.course_id=%s", _uuid(course_id, "course"))
    rows = _rows(conn, f"""
        SELECT q.id::text AS id, q.course_id::text AS course_id, q.lecture_id::text AS lecture_id, q.stem, q.options,
               q.answer_index, q.explanation, q.cite_lecture_id::text AS cite_lecture_id, q.cite_t_s, q.method,
               q.created_at, q.updated_at, c.number AS cite_lecture_number, l.number AS lecture_number,
               (SELECT count(*) FROM quiz_reports r WHERE r.question_id=q.id) AS reports,
               (SELECT count(DISTINCT {_PERSON}) FROM quiz_attempts WHERE question_id=q.id) AS attempts
        FROM quiz_questions q JOIN lectures l ON l.id=q.lecture_id JOIN lectures c ON c.id=q.cite_lecture_id
        WHERE {where} ORDER BY l.number, q.cite_t_s, q.created_at""", (arg,))
    for r in rows:
        r["label"] = citation_label(r["cite_lecture_number"], r["cite_t_s"])
    return rows


def get_question(conn, question_id: str) -> dict:
    """The question: id, course_id, lecture_id, lecture_number, stem, options, answer_index,
    explanation, cite_lecture_id, cite_lecture_number, cite_t_s (s), method. NotFound when unknown."""
    rows = _rows(conn, "SELECT q.id::text AS id, q.course_id::text AS course_id, q.lecture_id::text AS lecture_id, "
                       "l.number AS lecture_number, q.stem, q.options, q.answer_index, q.explanation, "
                       "q.cite_lecture_id::text AS cite_lecture_id, c.number AS cite_lecture_number, q.cite_t_s, "
                       "q.method FROM quiz_questions q JOIN lectures l ON l.id=q.lecture_id "
                       "JOIN lectures c ON c.id=q.cite_lecture_id WHERE q.id=%s", (_uuid(question_id),))
    if not rows:
        raise NotFound("Unknown question.")
    return rows[0]


def validate(conn, course_id: str, q: QuestionFields) -> None:
    """Raises QuizError unless: a stem; 4 distinct non-empty options; answer_index 0–3; the cited
    lecture is of ``course_id`` and ``cite_t_s`` lies inside it (0 ≤ t ≤ its end); NotFound
    when ``cite_lecture_id`` is no id at all."""
    stem, options, answer_index, explanation = q.stem, q.options, q.answer_index, q.explanation
    cite_lecture_id, cite_t_s = q.cite_lecture_id, q.cite_t_s
    if not isinstance(stem, str) or not stem.strip():
        raise QuizError("The question needs a stem.")
    if not isinstance(options, list) or len(options) != 4 or not all(isinstance(o, str) and o.strip() for o in options):
        raise QuizError("A question has exactly 4 non-empty options.")
    if len({norm(o) or o.strip().lower() for o in options}) != 4:
        raise QuizError("The 4 options must be different.")
    if isinstance(answer_index, bool) or not isinstance(answer_index, int) or not 0 <= answer_index <= 3:
        raise QuizError("answer_index must be 0, 1, 2 or 3.")
    if not isinstance(explanation, str):
        raise QuizError("The explanation must be text.")
    cite = _uuid(cite_lecture_id, "lecture")
    rows = _rows(conn, "SELECT course_id::text AS course_id FROM lectures WHERE id=%s", (cite,))
    if not rows or rows[0]["course_id"] != course_id:
        raise QuizError("The citation must name a lecture of this course.")
    _, _, (lo, hi) = lecture_material(conn, cite)
    if isinstance(cite_t_s, bool) or not isinstance(cite_t_s, (int, float)) or not lo <= float(cite_t_s) <= hi:
        raise QuizError(f"The citation time must lie inside the lecture (0–{hi:.0f} s).")


def edit_question(conn, question_id: str, **changes) -> dict:
    """Changes some of stem, options, answer_index, explanation, cite_lecture_id, cite_t_s after
    validating the whole question (see :func:`validate`); returns the stored question."""
    allowed = {"stem", "options", "answer_index", "explanation", "cite_lecture_id", "cite_t_s"}
    unknown = set(changes) - allowed
    if unknown:
        raise QuizError(f"Unknown fields: {', '.join(sorted(unknown))}.")
    q = {**get_question(conn, question_id), **{k: v for k, v in changes.items() if v is not None}}
    validate(conn, q["course_id"], QuestionFields(q["stem"], q["options"], q["answer_index"], q["explanation"],
                                                  q["cite_lecture_id"], q["cite_t_s"]))
    _rows(conn, "UPDATE quiz_questions SET stem=%s, options=%s, answer_index=%s, explanation=%s, cite_lecture_id=%s, "
                "cite_t_s=%s, updated_at=now() WHERE id=%s",
          (q["stem"].strip(), json.dumps([o.strip() for o in q["options"]]), q["answer_index"], q["explanation"],
           q["cite_lecture_id"], float(q["cite_t_s"]), q["id"]))
    return get_question(conn, q["id"])


def delete_question(conn, question_id: str) -> None:
    """Deletes a question (its reports and attempts too); NotFound when unknown."""
    rows = _rows(conn, "DELETE FROM quiz_questions WHERE id=%s RETURNING id", (_uuid(question_id),))
    if not rows:
        raise NotFound("Unknown question.")


def report_question(conn, question_id: str, comment: str | None = None) -> None:
    """A student's report that a question is wrong or unclear (comment up to 2000 characters)."""
    q = get_question(conn, question_id)
    if comment is not None and len(comment) > MAX_COMMENT_CHARS:
        raise QuizError(f"The comment is too long (over {MAX_COMMENT_CHARS} characters).")
    _rows(conn, "INSERT INTO quiz_reports (question_id, comment) VALUES (%s,%s)", (q["id"], (comment or "").strip() or None))


def record_attempt(conn, question_id: str, chosen_index: int, checkpoint: bool = False, person: str | None = None,
                   record: bool = True) -> dict:
    """Records a student's answer (``checkpoint``: given at a checkpoint while watching; nothing is
    written when ``record`` is False, the answer is only graded); returns
    {correct, answer_index, explanation, cite_lecture_id, cite_lecture_number, cite_t_s}.
    NotFound for an unknown question, QuizError for a choice not 0–3."""
    q = get_question(conn, question_id)
    if isinstance(chosen_index, bool) or not isinstance(chosen_index, int) or not 0 <= chosen_index <= 3:
        raise QuizError("chosen_index must be 0, 1, 2 or 3.")
    correct = chosen_index == q["answer_index"]
    if record:
        _rows(conn, "INSERT INTO quiz_attempts (question_id, chosen_index, correct, checkpoint, person) "
                    "VALUES (%s,%s,%s,%s,%s)", (q["id"], chosen_index, correct, bool(checkpoint), person))
    return {"correct": correct, "answer_index": q["answer_index"], "explanation": q["explanation"],
            "cite_lecture_id": q["cite_lecture_id"], "cite_lecture_number": q["cite_lecture_number"],
            "cite_t_s": q["cite_t_s"]}


def practice_stats(conn, question_ids: list[str]) -> tuple[dict[str, dict], dict[str, list]]:
    """For the questions: ``({id: {"n", "wrong", "cp_n", "cp_wrong"}}`` the people who answered and
    those who ever answered wrongly, all and at a checkpoint (each person once, however often they answer:
    a visitor who answered 15 times was counted 15 times; an attempt with no person, from before it was kept, counts
    on its own), ``{id: [comment, ...]})`` of their reports (oldest first; a comment may be None). Two queries."""
    who = _PERSON
    stats = {x["q"]: x for x in _rows(
        conn, f"SELECT question_id::text AS q, count(DISTINCT {who}) AS n, "
              f"count(DISTINCT {who}) FILTER (WHERE NOT correct) AS wrong, "
              f"count(DISTINCT {who}) FILTER (WHERE checkpoint) AS cp_n, "
              f"count(DISTINCT {who}) FILTER (WHERE checkpoint AND NOT correct) AS cp_wrong "
              "FROM quiz_attempts WHERE question_id = ANY(%s::uuid[]) GROUP BY question_id", (question_ids,))}
    comments: dict[str, list] = {}
    for c in _rows(conn, "SELECT question_id::text AS q, comment FROM quiz_reports "
                         "WHERE question_id = ANY(%s::uuid[]) ORDER BY created_at", (question_ids,)):
        comments.setdefault(c["q"], []).append(c["comment"])
    return stats, comments


def last_generation(conn, lecture_id: str):
    """When the lecture's set was last generated (a timezone-aware datetime), or None."""
    return _rows(conn, "SELECT max(created_at) AS t FROM quiz_generations WHERE lecture_id=%s",
                 (_uuid(lecture_id, "lecture"),))[0]["t"]
