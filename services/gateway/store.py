"""All of the gateway's own SQL against Postgres (rows come back as dicts: ``db.make_pool`` uses
``dict_row``). Each function takes the pool (or, inside a caller's transaction, a connection),
runs its statements on one connection and returns plain rows or values; a missing row is None or
an empty list, never an exception, so the callers decide the HTTP answer. Who may see a course is
one SQL condition, :data:`VISIBLE`. Tokens and session ids are stored by their SHA-256 only (the
callers hash them: ``accounts.py``, ``auth.py``); the accounts' own SQL is :mod:`.accounts_store`.

The transcript and chapters (``sentences``, ``chapters``, ``transcript_words``, written by index) and
``lectures``/``courses`` are read here as the documented read model of those tables (README, "How
it works"); practice questions, their reports, attempts and generations belong to ask and are
reached only through its gRPC (``routes/practice.py``), as is the course of an answer (``GetAnswer``,
``routes/answers.py``). The course insights still read ask's ``answers`` here (joined with the
gateway's ``feedback``): ``tests/unit/test_table_owners.py`` lists each such read (CROSS_READS).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from psycopg.rows import tuple_row
from psycopg_pool import ConnectionPool

from lecturecopilot import vectors

#: the courses a viewer may see, as a condition on ``c`` (courses): public ones, all for an admin,
#: their own (``owner_email``) and those they are a member of; params ``admin`` and ``email``
VISIBLE = ("(c.visibility='public' OR %(admin)s OR lower(coalesce(c.owner_email,''))=%(email)s OR EXISTS "
           "(SELECT 1 FROM course_members m WHERE m.course_id=c.id AND m.email=%(email)s))")


@dataclass(frozen=True)
class Viewer:
    """Who reads: ``admin`` sees every course, ``email`` (lower-case, "" when anonymous) their own."""

    admin: bool
    email: str

    def params(self) -> dict:
        """The parameters of :data:`VISIBLE`."""
        return {"admin": self.admin, "email": self.email}


def ping(pool: ConnectionPool) -> None:
    """One round trip (``SELECT 1``); raises ``psycopg.OperationalError`` when Postgres is down."""
    with pool.connection() as conn:
        conn.execute("SELECT 1")


# -- courses and members ---------------------------------------------------------------------
def visible_course(pool: ConnectionPool, course_id: str, viewer: Viewer) -> dict | None:
    """``{"id", "title", "owner_email", "visibility", "assessment_mode", "checkpoints"}`` of a course
    ``viewer`` may see, else None (unknown or private to others)."""
    with pool.connection() as conn:
        return conn.execute(f"SELECT c.id, c.title, c.owner_email, c.visibility, c.assessment_mode, c.checkpoints "
                            f"FROM courses c "
                            f"WHERE c.id=%(cid)s AND {VISIBLE}", {**viewer.params(), "cid": course_id}).fetchone()


def visible_courses(pool: ConnectionPool, viewer: Viewer) -> list[dict]:
    """The courses ``viewer`` may see, oldest first, each with ``lecture_count``."""
    with pool.connection() as conn:
        return conn.execute(f"SELECT c.id, c.title, c.owner_email, c.visibility, count(l.id) AS lecture_count "
                            f"FROM courses c LEFT JOIN lectures l ON l.course_id=c.id WHERE {VISIBLE} "
                            "GROUP BY c.id ORDER BY c.created_at", viewer.params()).fetchall()


def course_ids(pool: ConnectionPool, *, course_id: str | None = None, title: str | None = None) -> list[str]:
    """Ids of the courses with id ``course_id`` (a UUID string) or titled ``title``, oldest first."""
    with pool.connection() as conn:
        return [str(r["id"]) for r in conn.execute(
            "SELECT id FROM courses WHERE id = %s::uuid OR title = %s ORDER BY created_at, id",
            (course_id, title)).fetchall()]


def create_course(pool: ConnectionPool, course_id: str, title: str, owner_email: str | None, visibility: str) -> None:
    """Inserts a course owned by ``owner_email`` (None: an operator's, no owner)."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO courses (id, title, owner_email, visibility) VALUES (%s,%s,%s,%s)",
                     (course_id, title, owner_email, visibility))


def delete_course(pool: ConnectionPool, course_id) -> None:
    """Deletes the course row (by cascade its members, answers and the rest that names it); its
    lectures and media are ingest's to delete first."""
    with pool.connection() as conn:
        conn.execute("DELETE FROM courses WHERE id=%s", (course_id,))


def update_course(pool: ConnectionPool, course_id, title: str, visibility: str, assessment_mode: bool,
                  checkpoints: bool) -> None:
    """Sets a course's title, visibility, assessment mode and checkpoints (on or off)."""
    with pool.connection() as conn:
        conn.execute("UPDATE courses SET title=%s, visibility=%s, assessment_mode=%s, checkpoints=%s WHERE id=%s",
                     (title, visibility, assessment_mode, checkpoints, course_id))


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


# -- lectures, transcript -------------------------------------------------------------------
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


def lecture_status(pool: ConnectionPool, lecture_id) -> dict | None:
    """``{"status", "stage", "progress", "error"}`` of a lecture, or None once it is deleted."""
    with pool.connection() as conn:
        return conn.execute("SELECT status, stage, progress, error FROM lectures WHERE id=%s",
                            (lecture_id,)).fetchone()


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


def caption_rows(pool: ConnectionPool, lecture_id: str) -> tuple[list[dict], list[dict]]:
    """A lecture's sentences ``{"start_s", "end_s", "text", "kind"}`` and transcript words
    ``{"start_s", "end_s", "word"}``, each in their stored order (times in seconds); empty lists
    for an unknown lecture."""
    with pool.connection() as conn:
        sentences = conn.execute("SELECT start_s, end_s, text, kind FROM sentences WHERE lecture_id=%s ORDER BY idx",
                                 (lecture_id,)).fetchall()
        words = conn.execute("SELECT start_s, end_s, word FROM transcript_words WHERE lecture_id=%s ORDER BY idx",
                             (lecture_id,)).fetchall()
    return sentences, words


# -- answers and feedback --------------------------------------------------------------------
def rate_answer(pool: ConnectionPool, answer_id: str, rater: str, rating: str, comment: str | None) -> None:
    """Records ``rater``'s rating of an answer, replacing their earlier one."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO feedback (answer_id, rater, rating, comment) VALUES (%s,%s,%s,%s) "
                     "ON CONFLICT (answer_id, rater) DO UPDATE SET rating=EXCLUDED.rating, "
                     "comment=EXCLUDED.comment, created_at=now()", (answer_id, rater, rating, comment))


# -- rate counters (limits.py) ---------------------------------------------------------------
def count_use(conn, key: str, window) -> int:
    """Adds one to the ``(key, window start)`` counter (atomically: concurrent adds serialise on the
    row) and returns the new count; inside the caller's transaction on ``conn``."""
    return conn.execute("INSERT INTO rate_counters (key, window_start, n) VALUES (%s, %s, 1) "
                        "ON CONFLICT (key, window_start) DO UPDATE SET n = rate_counters.n + 1 RETURNING n",
                        (key, window)).fetchone()["n"]


def forget_old_counts(conn) -> None:
    """Deletes the counters of windows older than two days."""
    conn.execute("DELETE FROM rate_counters WHERE window_start < now() - interval '2 days'")


def uncount_uses(pool: ConnectionPool, rows) -> None:
    """Takes one off each ``(key, window start)`` counter of ``rows`` (never below zero)."""
    with pool.connection() as conn:
        for key, window in rows:
            conn.execute("UPDATE rate_counters SET n = n - 1 WHERE key=%s AND window_start=%s AND n > 0",
                         (key, window))


# -- insights (insights.py) -------------------------------------------------------------------
def insight_rows(conn, course_id: str, times: tuple, days: tuple, *, max_questions: int, not_moments: tuple[str, ...]) -> dict:
    """What the course's ``answers`` to students (not to its instructor or an admin: ``staff``) and
    their ``feedback`` hold for the times ``times`` = ``(lo, hi)``: lo ≤ t < hi (datetimes, UTC) and
    the days ``days`` = ``(start, end)`` (dates, inclusive): ``totals`` {"n", "declined", "students"
    (distinct askers, staff aside)}; ``questions`` (the newest ``max_questions``: a follow-up as its
    rewritten question, and whether declined); ``thumbs_down`` (100 newest); ``moments`` (the 10
    most-cited whole seconds of answers whose writer is not in ``not_moments``); ``days`` (students'
    questions and declined ones per day, every day of the period: they add up to ``totals``)."""
    args = (course_id, *times)
    where = "a.course_id=%s AND a.created_at >= %s AND a.created_at < %s AND NOT a.staff"  # students' questions only
    placeholders = ", ".join(["%s"] * len(not_moments))
    return {
        "totals": conn.execute(f"SELECT count(*) AS n, count(*) FILTER (WHERE declined) AS declined, count(DISTINCT "
                               f"asker) FILTER (WHERE NOT staff) AS students FROM answers a WHERE {where}", args).fetchone(),
        "questions": conn.execute(f"SELECT coalesce(nullif(rewritten_question, ''), question) AS question, declined "
                                  f"FROM answers a WHERE {where} ORDER BY created_at DESC LIMIT %s",
                                  (*args, max_questions)).fetchall(),
        "thumbs_down": conn.execute(f"SELECT a.question, a.answer, f.comment, f.created_at FROM feedback f JOIN answers "
                                    f"a ON a.id=f.answer_id WHERE f.rating='down' AND {where} "
                                    f"ORDER BY f.created_at DESC LIMIT 100", args).fetchall(),
        "moments": conn.execute(f"""
            SELECT (c->>'lecture_id') AS lecture_id, floor((c->>'t_s')::numeric) AS t, count(*) AS n, l.number, l.title
            FROM answers a CROSS JOIN LATERAL jsonb_array_elements(a.sentences) s
                 CROSS JOIN LATERAL jsonb_array_elements(s->'citations') c
                 JOIN lectures l ON l.id::text = c->>'lecture_id' AND l.course_id = a.course_id
            WHERE {where} AND NOT a.declined AND coalesce(a.writer, '') NOT IN ({placeholders})
            GROUP BY 1, 2, l.number, l.title ORDER BY n DESC, l.number, t LIMIT 10""", (*args, *not_moments)).fetchall(),
        "days": conn.execute("""
            SELECT d::date AS day, count(a.id) AS n, count(a.id) FILTER (WHERE a.declined) AS declined
            FROM generate_series(%s::timestamp, %s::timestamp, interval '1 day') d
            LEFT JOIN answers a ON a.course_id=%s AND NOT a.staff AND a.created_at >= (d AT TIME ZONE 'UTC')
                               AND a.created_at < ((d + interval '1 day') AT TIME ZONE 'UTC')
            GROUP BY d ORDER BY d""", (*days, course_id)).fetchall(),
    }


# -- question grouping (insights.py): pgvector's <=> where the server has it, numpy otherwise ---------
_NEAR_SQL = """
    WITH q AS MATERIALIZED (SELECT (n - 1)::int AS i, v FROM unnest(%s::vector[]) WITH ORDINALITY AS t(v, n))
    SELECT a.i, b.i AS j FROM q a JOIN q b ON a.i < b.i WHERE 1 - (a.v <=> b.v) >= %s"""
_NEAR_BATCH = 50_000  # pairs per fetch (~6 MB of Python objects)


def grouping_method(conn) -> str:
    """How :func:`neighbours` computes on ``conn``: in SQL with pgvector or in Python with numpy."""
    return "pgvector cosine distance (<=>) in SQL" if vectors.available(conn) else "cosine in Python (numpy)"


def neighbours(conn, vecs: np.ndarray, threshold: float) -> np.ndarray:
    """Which rows of ``vecs`` (n, dim) float32, L2-normalised, are neighbours: an (n, n) bool matrix,
    True where their cosine is ≥ ``threshold`` (the diagonal too). With pgvector on ``conn``
    (:func:`lecturecopilot.vectors.available`) Postgres compares every pair (``1 - (a <=> b)``, one
    statement, the vectors sent as one binary ``vector[]``, nothing stored); otherwise numpy does (``vecs @
    vecs.T``). The two agree except for a pair within float rounding (~1e-7) of the threshold."""
    n = len(vecs)
    if not vectors.available(conn) or n == 0:
        return (vecs @ vecs.T) >= threshold
    near = np.eye(n, dtype=bool)
    with conn.transaction():  # the settings last to the end of the caller's transaction (SET LOCAL)
        conn.execute("SET LOCAL work_mem = '32MB'")  # 4000 vectors (6 MB) stay in memory, not on disk
        conn.execute("SET LOCAL jit = off")  # compiling this one-off join costs more than it saves
        # a server-side cursor read in batches: near-identical questions make up to n²/2 pairs (8M
        # for 4000), which fetched at once would take ~1 GB of Python objects
        with conn.cursor("neighbours", row_factory=tuple_row, binary=True) as cur:
            cur.execute(_NEAR_SQL, (list(np.asarray(vecs, dtype="float32")), threshold))
            while rows := cur.fetchmany(_NEAR_BATCH):
                ij = np.asarray(rows, dtype=np.intp)
                near[ij[:, 0], ij[:, 1]] = near[ij[:, 1], ij[:, 0]] = True
    return near
