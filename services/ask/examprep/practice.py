"""Exam prep's use cases for the practice pages (called by ask's gRPC servicer for the gateway):
list a lecture's or a course's questions (a student's or the instructor's view), read, edit,
delete and report one, grade answers. Each function takes the Postgres pool (dict rows,
``db.make_pool``) and runs its statements through :mod:`.store` on one connection.

Errors: :class:`~.store.NotFound` for an unknown question (or the lecture/course listed),
:class:`~.store.QuizError` for an invalid change, answer or comment. Who may call what is the
caller's business (the gateway checks the course).
"""

from __future__ import annotations

import logging
import time
from typing import Sequence

from psycopg_pool import ConnectionPool

from lecturecopilot import db

from . import store
from .questions import EmbedFn
from .store import NotFound, QuizError

log = logging.getLogger(__name__)

__all__ = ["NotFound", "QuizError", "answer", "delete", "edit", "list_practice", "question", "report"]


def _with_answers(conn, rows: list[dict]) -> list[dict]:
    """``rows`` with the instructor's fields: ``report_comments`` (non-empty, oldest first),
    ``reports``, ``attempts`` (people who answered), ``wrong`` (of them, those who ever answered
    wrongly), and the same of answers given at a checkpoint: ``checkpoint_attempts``, ``checkpoint_wrong``."""
    stats, comments = store.practice_stats(conn, [r["id"] for r in rows])
    out = []
    for r in rows:
        mine = comments.get(r["id"], [])
        st = stats.get(r["id"], {"n": 0, "wrong": 0, "cp_n": 0, "cp_wrong": 0})
        out.append({**r, "report_comments": [c for c in mine if c], "reports": len(mine),
                    "attempts": st["n"], "wrong": st["wrong"],
                    "checkpoint_attempts": st["cp_n"], "checkpoint_wrong": st["cp_wrong"]})
    return out


FIRST_SETS_S = 5.0  # a listing starts writing first sets only this long (seconds); the rest on the next listing


def _first_sets(conn, embed: EmbedFn, lecture_id: str | None, course_id: str | None) -> None:
    """Writes the first set (extractive, automatic: :func:`store.generate`) of each ready lecture of the
    scope that never had one (:func:`store.never_generated`), starting none after :data:`FIRST_SETS_S`
    seconds: practice questions come with a processed lecture, as its chapters do, without an instructor
    asking (a set takes well under a second for an hour of lecture: ``python -m evals.examprep``)."""
    t0 = time.monotonic()
    for lid in store.never_generated(conn, lecture_id=lecture_id, course_id=course_id):
        if time.monotonic() - t0 > FIRST_SETS_S:
            break
        try:
            store.generate(conn, lid, embed, automatic=True)
        except QuizError as e:  # none can be written (recorded), or another request wrote it first
            log.info("no first practice set for %s: %s", lid, e)


@db.retry_on_disconnect
def list_practice(pool: ConnectionPool, *, lecture_id: str | None = None, course_id: str | None = None,
                  with_answers: bool = False, embed: EmbedFn | None = None) -> dict:
    """``{"questions": [row, ...], "generated_at": datetime | None}`` for a lecture (or a course:
    ``generated_at`` None), rows as :func:`store.list_questions` gives them, plus the instructor's
    fields (see :func:`_with_answers`) when ``with_answers``. With ``embed`` (the sentence embedder), the
    lectures of the scope that never had a set get their first one first (:func:`_first_sets`).
    NotFound for an id that is not a UUID."""
    with pool.connection() as conn:
        if embed is not None and (lecture_id or course_id):
            _first_sets(conn, embed, lecture_id, course_id)
        rows = store.list_questions(conn, lecture_id=lecture_id, course_id=course_id)
        if with_answers:
            rows = _with_answers(conn, rows)
        last = store.last_generation(conn, lecture_id) if lecture_id else None
    return {"questions": rows, "generated_at": last}


@db.retry_on_disconnect
def question(pool: ConnectionPool, question_id: str, *, with_answers: bool = False) -> dict:
    """The question as :func:`store.get_question` gives it (with the instructor's fields when
    ``with_answers``); NotFound when unknown."""
    with pool.connection() as conn:
        q = store.get_question(conn, question_id)
        return _with_answers(conn, [q])[0] if with_answers else q


def edit(pool: ConnectionPool, question_id: str, changes: dict) -> dict:
    """Applies ``changes`` (some of stem, options, answer_index, explanation, cite_lecture_id,
    cite_t_s) after validating the whole question; returns it with the instructor's fields.
    NotFound for an unknown question; QuizError for an invalid change (a cited lecture that
    does not exist included)."""
    with pool.connection() as conn:
        store.get_question(conn, question_id)
        try:
            store.edit_question(conn, question_id, **changes)
        except NotFound as e:  # the cited lecture: an invalid change, not a missing question
            raise QuizError(str(e)) from None
        return _with_answers(conn, [store.get_question(conn, question_id)])[0]


def delete(pool: ConnectionPool, question_id: str) -> None:
    """Deletes the question (its reports and attempts too); NotFound when unknown."""
    with pool.connection() as conn:
        store.delete_question(conn, question_id)


def report(pool: ConnectionPool, question_id: str, comment: str | None) -> None:
    """Records a report of the question; NotFound when unknown, QuizError for a comment over
    :data:`store.MAX_COMMENT_CHARS` characters."""
    with pool.connection() as conn:
        store.report_question(conn, question_id, comment)


def answer(pool: ConnectionPool, answers: Sequence[tuple[str, int, bool]], person: str | None = None,
           record: bool = True) -> list[dict]:
    """Records and grades each ``(question_id, choice, checkpoint)`` in order (``checkpoint``: the
    answer was given at a checkpoint while watching, counted apart in the statistics; ``person``: who
    answered, a pseudonym, each counted once per question; ``record`` False grades without recording:
    the course's instructor or an admin trying the questions is no student of the statistics); per answer
    ``{"question_id", "choice", "correct", "answer_index", "explanation", "cite_lecture_id",
    "cite_lecture_number", "cite_t_s"}``. NotFound for an unknown question, QuizError for a choice
    not 0–3 (the answers before it stay recorded)."""
    with pool.connection() as conn:
        return [{"question_id": qid, "choice": choice, **store.record_attempt(conn, qid, choice, checkpoint, person, record)}
                for qid, choice, checkpoint in answers]
