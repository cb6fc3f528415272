"""The gateway's SQL for notes (the ``notes`` table of ``lecturecopilot/schema.sql``), beside
``store.py``: a person's private notes pinned to a moment of a lecture. Every read and write names
the note's owner (``email``, lower-case), so a note is only ever reached by its author; the callers
(``routes/notes.py``) decide who may see the lecture or course. Rows come back as dicts
(:data:`COLUMNS`): the note with its lecture's number, title, duration and course.

A note is keyed to ``lectures.id`` (a renumber keeps it) and goes with its lecture, course or
account (``ON DELETE CASCADE``).
"""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from .store import VISIBLE, Viewer

#: what a note row holds: the note and its lecture's number, title, duration and course
COLUMNS = ("n.id, n.lecture_id, l.course_id, l.number AS lecture_number, l.title AS lecture_title, "
           "l.duration_s, n.t_s, n.text, n.created_at, n.updated_at")
_FROM = "FROM notes n JOIN lectures l ON l.id = n.lecture_id"
_ORDER = "ORDER BY n.t_s, n.created_at, n.id"


def add(pool: ConnectionPool, note_id: str, viewer: Viewer, lecture_id: str, t_s: float, text: str,
        cap: int) -> dict | None:
    """Stores a note of ``viewer`` (its ``email``, lower-case) at ``t_s`` seconds of the lecture and
    returns its row, or None when the account already keeps ``cap`` notes (``LC_NOTES_PER_USER``) on
    the courses it can see. Notes on a course it no longer sees (made private, or the member removed)
    don't count: it can neither list nor delete them, and they come back, counting again, when the
    course does. The account's ``users`` row is made if new (a bearer token's person may have none)
    and locked while its notes are counted, so concurrent adds never pass the cap."""
    email = viewer.email
    with pool.connection() as conn, conn.transaction():
        conn.execute("INSERT INTO users (email) VALUES (%s) ON CONFLICT (email) DO NOTHING", (email,))
        conn.execute("SELECT 1 FROM users WHERE email=%s FOR UPDATE", (email,))
        kept = conn.execute(f"SELECT count(*) AS n {_FROM} JOIN courses c ON c.id = l.course_id "
                            f"WHERE n.email=%(email)s AND {VISIBLE}", viewer.params()).fetchone()["n"]
        if kept >= cap:
            return None
        conn.execute("INSERT INTO notes (id, email, lecture_id, t_s, text) VALUES (%s,%s,%s,%s,%s)",
                     (note_id, email, lecture_id, t_s, text))
        return conn.execute(f"SELECT {COLUMNS} {_FROM} WHERE n.id=%s", (note_id,)).fetchone()


def of_lecture(pool: ConnectionPool, email: str, lecture_id: str) -> list[dict]:
    """``email``'s notes of the lecture in time order (then as written)."""
    with pool.connection() as conn:
        return conn.execute(f"SELECT {COLUMNS} {_FROM} WHERE n.lecture_id=%s AND n.email=%s {_ORDER}",
                            (lecture_id, email)).fetchall()


def of_course(pool: ConnectionPool, email: str, course_id: str) -> list[dict]:
    """``email``'s notes of the course's lectures, by lecture number, then in time order."""
    with pool.connection() as conn:
        return conn.execute(f"SELECT {COLUMNS} {_FROM} WHERE l.course_id=%s AND n.email=%s "
                            f"ORDER BY l.number, n.t_s, n.created_at, n.id", (course_id, email)).fetchall()


def note(pool: ConnectionPool, note_id: str, email: str) -> dict | None:
    """The note if ``email`` wrote it, else None (unknown, or another's)."""
    with pool.connection() as conn:
        return conn.execute(f"SELECT {COLUMNS} {_FROM} WHERE n.id=%s AND n.email=%s", (note_id, email)).fetchone()


def update(pool: ConnectionPool, note_id: str, email: str, text: str, t_s: float) -> dict | None:
    """Sets the text and moment of ``email``'s note; its row, or None when it is gone or another's."""
    with pool.connection() as conn, conn.transaction():
        done = conn.execute("UPDATE notes SET text=%s, t_s=%s, updated_at=now() WHERE id=%s AND email=%s",
                            (text, t_s, note_id, email)).rowcount
        return conn.execute(f"SELECT {COLUMNS} {_FROM} WHERE n.id=%s", (note_id,)).fetchone() if done else None


def delete(pool: ConnectionPool, note_id: str, email: str) -> bool:
    """Deletes ``email``'s note; False when it is gone or another's."""
    with pool.connection() as conn:
        return conn.execute("DELETE FROM notes WHERE id=%s AND email=%s", (note_id, email)).rowcount > 0
