"""All of the ask service's SQL (tables in ``lecturecopilot/schema.sql``): courses and lectures it
answers about, conversations (``answers`` rows: ownership, history, what was cited), assessment
mode, the recorded answers (and the course of one, for ``GetAnswer``), and the count of a lecture's practice questions. Exam prep's own
tables are reached through :mod:`services.ask.examprep.store`.

Each method reads or writes in one go on a pooled connection and runs again on a new
connection if Postgres cut it (``db.retry_on_disconnect``; every method is safe to repeat).
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Sequence

from psycopg_pool import ConnectionPool

from lecturecopilot import db

from .examprep import store as examprep_store
from .domain import LectureInfo
from .ports import Embedder, RecordedAnswer

log = logging.getLogger(__name__)


class AskStore:
    """The :class:`services.ask.ports.AnswerStore` over a psycopg pool whose connections return
    dict rows (``db.make_pool``). Ids are UUID strings; times in seconds."""

    def __init__(self, pool: ConnectionPool):
        self.pool = pool

    @db.retry_on_disconnect
    def course_exists(self, course_id: str) -> bool:
        """True when the course exists."""
        with self.pool.connection() as conn:
            return conn.execute("SELECT 1 FROM courses WHERE id=%s", (course_id,)).fetchone() is not None

    @db.retry_on_disconnect
    def lecture_in_course(self, lecture_id: str, course_id: str) -> bool:
        """True when the lecture exists and belongs to the course."""
        with self.pool.connection() as conn:
            return conn.execute("SELECT 1 FROM lectures WHERE id=%s AND course_id=%s",
                                (lecture_id, course_id)).fetchone() is not None

    @db.retry_on_disconnect
    def continues(self, conversation_id: str, course_id: str, asker: str | None) -> bool:
        """True when the conversation exists and is this asker's in this course (it has answers,
        none of another course or asker)."""
        with self.pool.connection() as conn:
            row = conn.execute("SELECT bool_and(course_id=%s AND asker IS NOT DISTINCT FROM %s) AS ours FROM answers "
                               "WHERE conversation_id=%s", (course_id, asker, conversation_id)).fetchone()
        return bool(row and row["ours"])

    @db.retry_on_disconnect
    def history(self, conversation_id: str, course_id: str, n: int = 3) -> list[str]:
        """The last ``n`` standalone questions of the conversation that were answered (oldest first): a
        declined question is no antecedent, its subject is not in the lectures ("What is the capital of
        France?" then "and what about open addressing?" is not "the capital of open addressing")."""
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT coalesce(rewritten_question, question) AS q FROM answers WHERE conversation_id=%s "
                "AND course_id=%s AND NOT declined ORDER BY created_at DESC LIMIT %s",
                (conversation_id, course_id, n)).fetchall()
        return [r["q"] for r in reversed(rows)]

    @db.retry_on_disconnect
    def said(self, conversation_id: str, course_id: str, n: int = 3) -> set[tuple[str, float]]:
        """The moments the conversation's last ``n`` answers cited, as ``{(lecture_id, t_s)}``
        ("What is chaining?" → "why?" → "more simply": the third repeats neither)."""
        with self.pool.connection() as conn:
            rows = conn.execute("SELECT sentences FROM answers WHERE conversation_id=%s AND course_id=%s AND NOT declined "
                                "ORDER BY created_at DESC LIMIT %s", (conversation_id, course_id, n)).fetchall()
        return {(c["lecture_id"], float(c["t_s"])) for r in rows for s in r["sentences"] for c in s["citations"]}

    @db.retry_on_disconnect
    def answer_course(self, answer_id: str) -> str | None:
        """The course id of the recorded answer ``answer_id``; None for an unknown answer or an id
        that is no UUID."""
        try:
            answer_id = str(uuid.UUID(answer_id))
        except ValueError:
            return None
        with self.pool.connection() as conn:
            row = conn.execute("SELECT course_id::text AS course_id FROM answers WHERE id=%s", (answer_id,)).fetchone()
        return row["course_id"] if row else None

    @db.retry_on_disconnect
    def assessment_mode(self, course_id: str) -> bool:
        """True when the course is in assessment mode (answers never name an option of a pasted item)."""
        with self.pool.connection() as conn:
            row = conn.execute("SELECT assessment_mode FROM courses WHERE id=%s", (course_id,)).fetchone()
        return bool(row and row["assessment_mode"])

    @db.retry_on_disconnect
    def lectures(self, course_id: str) -> list[LectureInfo]:
        """The course's ready lectures by number, each with its chapters ``(start_s, title)`` in order and
        their summary bullets."""
        with self.pool.connection() as conn:
            rows = conn.execute("SELECT id::text AS id, number, title, duration_s FROM lectures "
                                "WHERE course_id=%s AND status='ready' ORDER BY number", (course_id,)).fetchall()
            chaps = conn.execute("SELECT c.lecture_id::text AS l, c.start_s, c.title, c.bullets FROM chapters c "
                                 "JOIN lectures l ON l.id=c.lecture_id WHERE l.course_id=%s ORDER BY c.idx",
                                 (course_id,)).fetchall()
        by_lecture: dict[str, list] = {}
        bullets: dict[str, list[str]] = {}
        for c in chaps:
            by_lecture.setdefault(c["l"], []).append((c["start_s"], c["title"]))
            bullets.setdefault(c["l"], []).append("\n".join(b for b in (c["bullets"] or []) if isinstance(b, str)))
        return [LectureInfo(r["id"], r["number"], r["title"], r["duration_s"],
                            tuple(by_lecture.get(r["id"], ())), tuple(bullets.get(r["id"], ()))) for r in rows]

    @db.retry_on_disconnect
    def practice_questions(self, lecture_id: str, embed: Embedder) -> int:
        """How many exam-prep questions the lecture has, writing its set (extractive, well under
        a second) when it has none. That set is ``automatic``: it does not use up the instructor's
        5-minute regeneration window."""
        with self.pool.connection() as conn:
            def count() -> int:
                return conn.execute("SELECT count(*) AS n FROM quiz_questions WHERE lecture_id=%s",
                                    (lecture_id,)).fetchone()["n"]

            if n := count():
                return n
            try:
                return examprep_store.generate(conn, lecture_id, embed, automatic=True).kept
            except examprep_store.QuizError as e:  # none can be written, or another request just wrote it
                log.info("no practice questions for %s: %s", lecture_id, e)
                return count()

    def generate_practice(self, lecture_id: str, embed: Embedder, writers: Sequence) -> examprep_store.Generation:
        """An instructor's (re)generation of the lecture's set (:func:`services.ask.examprep.store.generate`;
        raises its errors: NotFound, RegenerationTooSoon, NoQuestions, QuizError)."""
        with self.pool.connection() as conn:
            return examprep_store.generate(conn, lecture_id, embed, writers=writers)

    @db.retry_on_disconnect
    def record(self, a: RecordedAnswer) -> None:
        """Stores an answer (``answers`` row; a repeat after a lost connection changes nothing)."""
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO answers (id, conversation_id, course_id, lecture_id, question, rewritten_question, "
                "answer, declined, reason, sentences, sources, writer, retrieve_ms, total_ms, asker, staff) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (id) DO NOTHING",
                (a.answer_id, a.conversation_id, a.course_id, a.lecture_id, a.question, a.rewritten_question,
                 a.answer, a.declined, a.reason, json.dumps(a.sentences), json.dumps(a.sources), a.writer,
                 a.retrieve_ms, a.total_ms, a.asker, a.staff))
