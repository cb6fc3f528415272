"""All of the gateway's own SQL against Postgres (rows come back as dicts: ``db.make_pool`` uses
``dict_row``). Each function takes the pool, runs its statements on one connection and returns
plain rows or values; none raises for a missing row (it returns None or an empty list), so the
callers decide the HTTP answer. Who may see a course is one SQL condition, :func:`VISIBLE`.

The transcript and chapters (written by index) and the practice statistics (written by ask) are
read here as the documented read model of those tables, until those services offer a read call.
Accounts, tokens, rate counters and insights keep their SQL in ``accounts.py``, ``auth.py``,
``limits.py`` and ``insights.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg_pool import ConnectionPool

#: the courses a viewer may see, as a condition on ``c`` (courses): public ones, all for an admin,
#: their own (``owner_email``) and those they are a member of; params ``admin`` and ``email``
VISIBLE = ("(c.visibility='public' OR %(admin)s OR lower(coalesce(c.owner_email,''))=%(email)s OR EXISTS "
           "(SELECT 1 FROM course_members m WHERE m.course_id=c.id AND m.email=%(email)s))")


class NumberTaken(Exception):
    """Another lecture of the course has that number (the unique index refused the change)."""


@dataclass(frozen=True)
class Viewer:
    """Who reads: ``admin`` sees every course, ``email`` (lower-case, "" when anonymous) their own."""

    admin: bool
    email: str

    def params(self) -> dict:
        return {"admin": self.admin, "email": self.email}


def ping(pool: ConnectionPool) -> None:
    """One round trip (``SELECT 1``); raises ``psycopg.OperationalError`` when Postgres is down."""
    with pool.connection() as conn:
        conn.execute("SELECT 1")


# -- courses and members ---------------------------------------------------------------------
def visible_course(pool: ConnectionPool, course_id: str, viewer: Viewer) -> dict | None:
    """``{"id", "title", "owner_email", "visibility", "assessment_mode"}`` of a course ``viewer``
    may see, else None (unknown or private to others)."""
    with pool.connection() as conn:
        return conn.execute(f"SELECT c.id, c.title, c.owner_email, c.visibility, c.assessment_mode FROM courses c "
                            f"WHERE c.id=%(cid)s AND {VISIBLE}", {**viewer.params(), "cid": course_id}).fetchone()


def visible_courses(pool: ConnectionPool, viewer: Viewer) -> list[dict]:
    """The courses ``viewer`` may see, oldest first, each with ``lecture_count``."""
    with pool.connection() as conn:
        return conn.execute(f"SELECT c.id, c.title, c.owner_email, c.visibility, count(l.id) AS lecture_count "
                            f"FROM courses c LEFT JOIN lectures l ON l.course_id=c.id WHERE {VISIBLE} "
                            "GROUP BY c.id ORDER BY c.created_at", viewer.params()).fetchall()


def create_course(pool: ConnectionPool, course_id: str, title: str, owner_email: str, visibility: str) -> None:
    """Inserts a course owned by ``owner_email``."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO courses (id, title, owner_email, visibility) VALUES (%s,%s,%s,%s)",
                     (course_id, title, owner_email, visibility))


def update_course(pool: ConnectionPool, course_id, title: str, visibility: str, assessment_mode: bool) -> None:
    """Sets a course's title, visibility and assessment mode."""
    with pool.connection() as conn:
        conn.execute("UPDATE courses SET title=%s, visibility=%s, assessment_mode=%s WHERE id=%s",
                     (title, visibility, assessment_mode, course_id))


def add_member(pool: ConnectionPool, course_id, email: str) -> None:
    """Makes ``email`` a member of the course (idempotent)."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO course_members (course_id, email) VALUES (%s,%s) ON CONFLICT DO NOTHING",
                     (course_id, email))


def members(pool: ConnectionPool, course_id) -> list[str]:
    """The course's members' emails, sorted."""
    with pool.connection() as conn:
        rows = conn.execute("SELECT email FROM course_members WHERE course_id=%s ORDER BY email",
                            (course_id,)).fetchall()
    return [r["email"] for r in rows]


def remove_member(pool: ConnectionPool, course_id, email: str) -> None:
    """Removes a member (nothing when they are not one)."""
    with pool.connection() as conn:
        conn.execute("DELETE FROM course_members WHERE course_id=%s AND email=%s", (course_id, email))


# -- lectures, uploads, transcript -----------------------------------------------------------
def lecture(pool: ConnectionPool, lecture_id: str) -> dict | None:
    """The ``lectures`` row (every column), or None."""
    with pool.connection() as conn:
        return conn.execute("SELECT * FROM lectures WHERE id=%s", (lecture_id,)).fetchone()


def lectures_of(pool: ConnectionPool, course_id) -> list[dict]:
    """The course's ``lectures`` rows by number (then upload time)."""
    with pool.connection() as conn:
        return conn.execute("SELECT * FROM lectures WHERE course_id=%s ORDER BY number, created_at",
                            (course_id,)).fetchall()


def lecture_in_course(pool: ConnectionPool, lecture_id: str, course_id) -> bool:
    """True when lecture ``lecture_id`` (a UUID) belongs to the course."""
    with pool.connection() as conn:
        return conn.execute("SELECT 1 FROM lectures WHERE id=%s AND course_id=%s",
                            (lecture_id, course_id)).fetchone() is not None


def rename_lecture(pool: ConnectionPool, lecture_id, title: str, number: int) -> dict | None:
    """Sets title and number; the updated row, or None when the lecture is gone. Raises
    :class:`NumberTaken` when another lecture of the course has ``number``."""
    try:
        with pool.connection() as conn:
            return conn.execute("UPDATE lectures SET title=%s, number=%s, updated_at=now() WHERE id=%s RETURNING *",
                                (title, number, lecture_id)).fetchone()
    except psycopg.errors.UniqueViolation:
        raise NumberTaken(number) from None


def lecture_status(pool: ConnectionPool, lecture_id) -> dict | None:
    """``{"status", "stage", "progress", "error"}`` of a lecture, or None once it is deleted."""
    with pool.connection() as conn:
        return conn.execute("SELECT status, stage, progress, error FROM lectures WHERE id=%s",
                            (lecture_id,)).fetchone()


def lecture_number(pool: ConnectionPool, lecture_id) -> int | None:
    """A lecture's number, or None."""
    with pool.connection() as conn:
        row = conn.execute("SELECT number FROM lectures WHERE id=%s", (lecture_id,)).fetchone()
    return row["number"] if row else None


def upload_course(pool: ConnectionPool, upload_id: str) -> str | None:
    """The course id of a resumable upload, or None for an unknown upload."""
    with pool.connection() as conn:
        row = conn.execute("SELECT course_id FROM uploads WHERE id=%s", (upload_id,)).fetchone()
    return str(row["course_id"]) if row else None


def chapters(pool: ConnectionPool, lecture_id) -> list[dict]:
    """The lecture's chapters in order: ``{"start_s", "end_s", "title", "bullets"}`` (seconds)."""
    with pool.connection() as conn:
        return conn.execute("SELECT start_s, end_s, title, bullets FROM chapters WHERE lecture_id=%s ORDER BY idx",
                            (lecture_id,)).fetchall()


def transcript(pool: ConnectionPool, lecture_id) -> list[dict]:
    """The lecture's sentences in order: ``{"start_s", "end_s", "text", "kind"}`` (seconds)."""
    with pool.connection() as conn:
        return conn.execute("SELECT start_s, end_s, text, kind FROM sentences WHERE lecture_id=%s ORDER BY idx",
                            (lecture_id,)).fetchall()


# -- answers and feedback --------------------------------------------------------------------
def answer_course(pool: ConnectionPool, answer_id: str) -> str | None:
    """The course id of a recorded answer, or None."""
    with pool.connection() as conn:
        row = conn.execute("SELECT course_id FROM answers WHERE id=%s", (answer_id,)).fetchone()
    return str(row["course_id"]) if row else None


def rate_answer(pool: ConnectionPool, answer_id: str, rater: str, rating: str, comment: str | None) -> None:
    """Records ``rater``'s rating of an answer, replacing their earlier one."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO feedback (answer_id, rater, rating, comment) VALUES (%s,%s,%s,%s) "
                     "ON CONFLICT (answer_id, rater) DO UPDATE SET rating=EXCLUDED.rating, "
                     "comment=EXCLUDED.comment, created_at=now()", (answer_id, rater, rating, comment))


# -- role requests (read side; accounts.py files and decides them) ---------------------------
def latest_role_request(pool: ConnectionPool, email: str) -> dict | None:
    """The newest ``role_requests`` row of ``email``, or None."""
    with pool.connection() as conn:
        return conn.execute("SELECT * FROM role_requests WHERE email=%s ORDER BY created_at DESC LIMIT 1",
                            (email,)).fetchone()


def pending_role_requests(pool: ConnectionPool) -> list[dict]:
    """The pending ``role_requests`` rows, oldest first."""
    with pool.connection() as conn:
        return conn.execute("SELECT * FROM role_requests WHERE status='pending' ORDER BY created_at").fetchall()


# -- practice statistics (the questions themselves: services.ask.examprep_store) -------------
def practice_stats(conn, question_ids: list[str]) -> tuple[dict[str, dict], dict[str, list]]:
    """For the questions: ``({id: {"n", "wrong"}}`` attempts and wrong ones, ``{id: [comment, ...]})``
    of their reports (oldest first; a comment may be None). Two queries on ``conn``."""
    stats = {x["q"]: x for x in conn.execute(
        "SELECT question_id::text AS q, count(*) AS n, count(*) FILTER (WHERE NOT correct) AS wrong "
        "FROM quiz_attempts WHERE question_id = ANY(%s::uuid[]) GROUP BY question_id", (question_ids,)).fetchall()}
    comments: dict[str, list] = {}
    for c in conn.execute("SELECT question_id::text AS q, comment FROM quiz_reports "
                          "WHERE question_id = ANY(%s::uuid[]) ORDER BY created_at", (question_ids,)).fetchall():
        comments.setdefault(c["q"], []).append(c["comment"])
    return stats, comments


def last_generation(conn, lecture_id):
    """When the lecture's practice set was last generated (a datetime), or None."""
    return conn.execute("SELECT max(created_at) AS t FROM quiz_generations WHERE lecture_id=%s",
                        (lecture_id,)).fetchone()["t"]
