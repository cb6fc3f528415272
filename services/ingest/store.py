"""All of the ingest service's SQL (tables in ``lecturecopilot/schema.sql``): the ``lectures`` rows
an upload registers, renames or renumbers, re-queues and deletes, and the
``uploads`` rows of resumable uploads (their state machine is :mod:`services.ingest.resumable`).

Methods marked "retried" run again on a new connection if Postgres cut theirs
(``db.retry_on_disconnect``; each of them is safe to repeat). Ids are UUID strings, times seconds.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

import psycopg

from psycopg_pool import ConnectionPool

from lecturecopilot import db

_START_LOCK = 72_002  # pg_advisory_xact_lock key: one start at a time counts open uploads and room
_UPLOAD_LOCK = 72_003  # pg_try_advisory_lock(key, hashtext(upload id)): one writer of an upload's objects

_INSERT_LECTURE = (
    "INSERT INTO lectures (id, course_id, number, title, status, stage, duration_s, media_path, "
    "captions_path, media_info, language) SELECT %(id)s::uuid, %(course_id)s::uuid, {number}, %(title)s::text, "
    "'queued', 'queued', %(duration_s)s::float8, %(media_path)s::text, %(captions_path)s::text, "
    "%(media_info)s::jsonb, %(language)s::text {source} "
    "ON CONFLICT (course_id, number) DO NOTHING RETURNING number")
# the numbers open resumable uploads hold in a course: receiving with a chunk within the hold
# (hold_s), or finishing (about to register the lecture whose row then holds it); not own_upload's
_RESERVED = ("SELECT (meta->>'number')::int FROM uploads WHERE course_id = %(course_id)s::uuid "
             "AND (state = 'finishing' OR (state = 'receiving' AND active_at >= now() - "
             "make_interval(secs => %(hold_s)s))) AND id IS DISTINCT FROM %(own_upload)s::uuid "
             "AND jsonb_typeof(meta->'number') = 'number'")
# the next free number (over ``lectures`` of the course): the lowest above the course's highest that no open
# upload holds, at most max_number (NULL when there is none)
_NEXT_NUMBER = ("(SELECT min(g) FROM generate_series(coalesce(max(number), 0) + 1, %(max_number)s) AS g "
                f"WHERE g NOT IN ({_RESERVED}))")


class CourseGone(Exception):
    """The course does not exist (any more): a lecture's or an upload's row was refused by its foreign key."""


class NumbersExhausted(Exception):
    """The course has no free lecture number left above its highest, up to the highest allowed."""


class NumberInUse(Exception):
    """Another lecture of the course has that number (the unique index refused a renumbering)."""


class IngestStore:
    """Ingest's rows over a psycopg pool whose connections return dict rows (``db.make_pool``)."""

    def __init__(self, pool: ConnectionPool):
        self.pool = pool

    # -- courses and lectures ---------------------------------------------------------------

    @db.retry_on_disconnect
    def number_in_use(self, course_id: str, number: int) -> bool:
        """True when the course already has a lecture ``number`` (retried)."""
        with self.pool.connection() as conn:
            return conn.execute("SELECT 1 FROM lectures WHERE course_id=%s AND number=%s",
                                (course_id, number)).fetchone() is not None

    @db.retry_on_disconnect
    def number_reserved(self, course_id: str, number: int, hold_s: float, own_upload: str | None = None) -> bool:
        """True when an open resumable upload into the course other than ``own_upload`` holds lecture
        ``number``: one finishing, or receiving with a chunk within ``hold_s`` seconds (retried)."""
        with self.pool.connection() as conn:
            return conn.execute(f"SELECT 1 FROM ({_RESERVED}) AS r(number) WHERE number = %(number)s",
                                {"course_id": course_id, "hold_s": hold_s, "own_upload": own_upload,
                                 "number": number}).fetchone() is not None

    @db.retry_on_disconnect
    def register_lecture(self, row: dict, number: int | None, *, tries: int, hold_s: float, max_number: int,
                         own_upload: str | None = None) -> int | None:
        """Inserts the lecture ``row`` (``id``, ``course_id``, ``title``, ``duration_s``,
        ``media_path``, ``captions_path``, ``media_info`` JSON text, ``language``) as ``queued``
        and returns its number; a lecture with this id already there is left as it is and its
        number returned (retried: a repeat after a lost connection finds its own row).

        A number is used once per course (``lectures_course_number``, a unique index: concurrent
        uploads are decided by Postgres). With ``number``, returns None when it is taken; without,
        the lecture gets :meth:`next_number` (above the course's highest, skipping the numbers open
        resumable uploads other than ``own_upload`` hold), read again
        and retried when another upload took it first, at most ``tries`` times (then None). Raises
        :class:`NumbersExhausted` when there is none up to ``max_number``, :class:`CourseGone`
        when the course is deleted meanwhile."""
        with self.pool.connection() as conn:
            got = conn.execute("SELECT number FROM lectures WHERE id=%s", (row["id"],)).fetchone()
        if got is not None:
            return got["number"]
        where = "FROM lectures WHERE course_id = %(course_id)s::uuid"
        args = {**row, "number": number, "hold_s": hold_s, "own_upload": own_upload, "max_number": max_number}
        if number is not None:
            query = _INSERT_LECTURE.format(number="%(number)s::int", source="")
        else:
            query = _INSERT_LECTURE.format(number=_NEXT_NUMBER, source=f"{where} HAVING {_NEXT_NUMBER} IS NOT NULL")
        with self.pool.connection() as conn:
            for _ in range(1 if number is not None else tries):
                # READ COMMITTED: each try reads the numbers committed by then; the conflict waits for a
                # concurrent insert of the same number to commit or roll back
                try:
                    got = conn.execute(query, args).fetchone()
                except psycopg.errors.ForeignKeyViolation:
                    conn.rollback()
                    raise CourseGone(row["course_id"]) from None
                conn.commit()
                if got is not None:
                    return got["number"]
                if number is None and conn.execute(f"SELECT {_NEXT_NUMBER} AS next {where}",
                                                   args).fetchone()["next"] is None:
                    conn.commit()
                    raise NumbersExhausted(row["course_id"])
        return None

    @db.retry_on_disconnect
    def next_number(self, course_id: str, hold_s: float, max_number: int, own_upload: str | None = None) -> int | None:
        """The number a lecture without one would get now: the lowest above the course's highest that
        no open resumable upload other than ``own_upload`` holds (``hold_s``: see
        :meth:`number_reserved`); None when every one up to ``max_number`` is taken (retried)."""
        with self.pool.connection() as conn:
            return conn.execute(f"SELECT {_NEXT_NUMBER} AS next FROM lectures WHERE course_id = %(course_id)s::uuid",
                                {"course_id": course_id, "hold_s": hold_s, "max_number": max_number,
                                 "own_upload": own_upload}).fetchone()["next"]

    def forget_lecture(self, lecture_id: str) -> None:
        """Deletes the lecture's row (one that could not be queued)."""
        with self.pool.connection() as conn:
            conn.execute("DELETE FROM lectures WHERE id=%s", (lecture_id,))

    @db.retry_on_disconnect
    def lecture(self, lecture_id: str) -> dict | None:
        """The ``lectures`` row, or None (retried)."""
        with self.pool.connection() as conn:
            return conn.execute("SELECT * FROM lectures WHERE id=%s", (lecture_id,)).fetchone()

    @db.retry_on_disconnect
    def existing_lectures(self, lecture_ids: Sequence[str]) -> set[str]:
        """Those of ``lecture_ids`` (UUID strings) that have a row (retried)."""
        with self.pool.connection() as conn:
            return {str(r["id"]) for r in conn.execute("SELECT id FROM lectures WHERE id = ANY(%s::uuid[])",
                                                       (list(lecture_ids),)).fetchall()}

    @db.retry_on_disconnect
    def rename_lecture(self, lecture_id: str, title: str, number: int) -> bool:
        """Sets the lecture's title and number; False when there is no such lecture (retried: a repeat
        sets the same). Raises :class:`NumberInUse` when another lecture of its course has ``number``
        (``lectures_course_number``, the unique index, decides between racing changes)."""
        try:
            with self.pool.connection() as conn:
                return conn.execute("UPDATE lectures SET title=%s, number=%s, updated_at=now() WHERE id=%s",
                                    (title, number, lecture_id)).rowcount > 0
        except psycopg.errors.UniqueViolation:
            raise NumberInUse(number) from None

    def requeue_failed(self, lecture_id: str) -> dict | None:
        """A failed lecture bumped to its next ``generation`` and reset to ``queued`` (its row as it
        is then), or None when there is no failed lecture with this id."""
        with self.pool.connection() as conn:
            return conn.execute(
                "UPDATE lectures SET generation=generation+1, status='queued', stage='queued', progress=0, "
                "error=NULL, updated_at=now() WHERE id=%s AND status='failed' RETURNING *", (lecture_id,)).fetchone()

    def mark_failed(self, lecture_id: str, error: str) -> None:
        """Sets the lecture ``failed`` with ``error`` as the reason."""
        with self.pool.connection() as conn:
            conn.execute("UPDATE lectures SET status='failed', stage='failed', error=%s WHERE id=%s",
                         (error, lecture_id))

    @db.retry_on_disconnect
    def course_lecture_ids(self, course_id: str) -> list[str]:
        """The ids of the course's lectures."""
        with self.pool.connection() as conn:
            return [str(r["id"]) for r in conn.execute("SELECT id FROM lectures WHERE course_id=%s",
                                                       (course_id,)).fetchall()]

    def delete_lectures(self, lecture_ids: Sequence[str], course_id: str | None = None) -> tuple[int, list[str]]:
        """Deletes the lectures' rows (and by cascade transcript, segments, chapters) and, with
        ``course_id``, the course's resumable uploads, in one transaction; the course row is the
        gateway's to delete. Returns ``(lectures deleted, ids of the uploads deleted)``."""
        uploads: list[str] = []
        with self.pool.connection() as conn:
            with conn.transaction():
                n = conn.execute("DELETE FROM lectures WHERE id = ANY(%s::uuid[])", (list(lecture_ids),)).rowcount
                if course_id is not None:
                    uploads = [str(r["id"]) for r in conn.execute("DELETE FROM uploads WHERE course_id=%s RETURNING id",
                                                                  (course_id,)).fetchall()]
        return n, uploads

    # -- resumable uploads ------------------------------------------------------------------

    @db.retry_on_disconnect
    def upload(self, upload_id: str, idle_s: float) -> dict | None:
        """The ``uploads`` row plus ``idle`` (receiving and no chunk for ``idle_s``), or None (retried)."""
        with self.pool.connection() as conn:
            return conn.execute("SELECT *, state='receiving' AND active_at < now() - make_interval(secs => %s) "
                                "AS idle FROM uploads WHERE id=%s", (idle_s, upload_id)).fetchone()

    @db.retry_on_disconnect
    def upload_state(self, upload_id: str) -> str | None:
        """The upload's state, or None when there is no such upload (retried)."""
        with self.pool.connection() as conn:
            row = conn.execute("SELECT state FROM uploads WHERE id=%s", (upload_id,)).fetchone()
        return row["state"] if row else None

    @db.retry_on_disconnect
    def set_upload_state(self, upload_id: str, state: str, *, frm: Sequence[str], error: str | None = None,
                         lecture_id: str | None = None) -> bool:
        """Moves the upload to ``state`` if it is in one of ``frm``; True when it moved (retried)."""
        with self.pool.connection() as conn:
            return conn.execute("UPDATE uploads SET state=%s, error=%s, lecture_id=coalesce(%s, lecture_id) "
                                "WHERE id=%s AND state = ANY(%s) RETURNING id",
                                (state, error, lecture_id, upload_id, list(frm))).fetchone() is not None

    @db.retry_on_disconnect
    def touch_upload(self, upload_id: str) -> None:
        """Marks the upload active now (its idle time starts again) (retried)."""
        with self.pool.connection() as conn:
            conn.execute("UPDATE uploads SET active_at=now() WHERE id=%s", (upload_id,))

    @db.retry_on_disconnect
    def register_upload(self, row: dict, *, open_states: Sequence[str], idle_s: float,
                        admit: Callable[[list[dict]], None]) -> None:
        """Inserts an upload ``row`` (``id``, ``course_id``, ``filename``, ``size``, ``meta``: a
        JSON-able dict, ``owner``; state ``receiving``) once ``admit`` accepted the uploads open now
        (``open_states``), in one transaction that holds an advisory lock (two starts never both see the same open uploads).
        ``admit`` gets the open ones (``id``, ``size``, ``owner``, ``course_id``, ``number`` (the
        lecture number it declared, or None), ``left_s``: seconds until an idle one expires; a
        receiving one idle for ``idle_s`` is not open) and raises to refuse (rolled back). Raises
        :class:`CourseGone` when the course does not exist (its foreign key). Retried."""
        with self.pool.connection() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_START_LOCK,))
            open_rows = conn.execute(
                "SELECT id, size, owner, course_id::text, meta->'number' AS number, "
                "extract(epoch FROM active_at + make_interval(secs => %s) - now()) AS left_s "
                "FROM uploads WHERE state = ANY(%s) AND NOT (state='receiving' AND active_at < now() - "
                "make_interval(secs => %s))", (idle_s, list(open_states), idle_s)).fetchall()
            admit(open_rows)
            try:
                conn.execute("INSERT INTO uploads (id, course_id, filename, size, meta, owner) VALUES (%s,%s,%s,%s,%s,%s)",
                             (row["id"], row["course_id"], row["filename"], row["size"], json.dumps(row["meta"]),
                              row["owner"]))
            except psycopg.errors.ForeignKeyViolation:
                conn.rollback()
                raise CourseGone(row["course_id"]) from None

    def expire_upload(self, upload_id: str, reason: str, idle_s: float) -> bool:
        """Sets the upload ``expired`` with ``reason`` if it is still receiving and idle for
        ``idle_s``; True when it did."""
        with self.pool.connection() as conn:
            return conn.execute("UPDATE uploads SET state='expired', error=%s WHERE id=%s AND state='receiving' AND "
                                "active_at < now() - make_interval(secs => %s) RETURNING id",
                                (reason, upload_id, idle_s)).fetchone() is not None

    @db.retry_on_disconnect
    def idle_uploads(self, idle_s: float) -> list[dict]:
        """The receiving uploads (``id``, ``size``) with no chunk for ``idle_s``."""
        with self.pool.connection() as conn:
            return conn.execute("SELECT id, size FROM uploads WHERE state='receiving' AND active_at < now() - "
                                "make_interval(secs => %s)", (idle_s,)).fetchall()

    @db.retry_on_disconnect
    def uploads_in(self, states: Sequence[str]) -> list[dict]:
        """The uploads (``id``, ``size``, ``state``) in one of ``states``."""
        with self.pool.connection() as conn:
            return conn.execute("SELECT id, size, state FROM uploads WHERE state = ANY(%s)", (list(states),)).fetchall()

    @contextmanager
    def upload_lock(self, upload_id: str) -> Iterator[bool]:
        """Tries the session advisory lock of ``upload_id`` on a connection of its own (not the
        pool's: it stays open, idle, while a chunk streams) and yields whether it got it; closing
        the connection at the end (or the process dying) releases it. It is unlocked before the
        close: a closed connection's backend lets go of its locks only once it has exited, a
        moment later, when the client's next chunk may already ask. Raises psycopg's errors when
        Postgres is unreachable."""
        key = (_UPLOAD_LOCK, str(upload_id))
        with psycopg.connect(self.pool.conninfo, autocommit=True) as conn:
            got = bool(conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", key).fetchone()[0])
            try:
                yield got
            finally:
                if got and not conn.closed:
                    try:
                        conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", key)
                    except psycopg.Error:  # the connection broke: its backend's exit releases it
                        pass
