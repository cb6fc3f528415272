"""Turning the ``real[]`` embedding columns of index's tables into pgvector's ``vector(384)``
(``lecture-copilot migrate-vectors``): a schema migration of the tables index owns
(``segments``, ``sentences``, ``subchunks``), for a database made before pgvector was there.
Why a database can hold either kind, and how Python reads both: :mod:`lecturecopilot.vectors`."""

from __future__ import annotations

import psycopg
from psycopg import sql

from lecturecopilot.models import EMBED_DIM

EMBEDDING_TABLES = ("segments", "sentences", "subchunks")


def convert_columns(url: str, *, lock_timeout_s: float = 10.0) -> dict[str, str]:
    """Converts the ``real[]`` embedding columns of :data:`EMBEDDING_TABLES` at ``url`` to
    ``vector(384)``, each table in a transaction of its own that waits at most ``lock_timeout_s``
    seconds for its exclusive lock (readers wait while it rewrites). Returns what happened per
    table: ``converted``, ``already vector``, ``skipped: N rows are not 384-d`` (left as they are:
    the cast would fail), or ``busy: ...`` when the lock was not had in time (run it again). Raises
    RuntimeError when the database has no ``vector`` extension, psycopg errors otherwise."""
    done: dict[str, str] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
            raise RuntimeError("this database has no pgvector extension (CREATE EXTENSION vector)")
        for table in EMBEDDING_TABLES:
            kind = conn.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                                "WHERE attrelid = %s::regclass AND attname = 'embedding' AND NOT attisdropped",
                                (table,)).fetchone()[0]
            if kind != "real[]":
                done[table] = "already vector"
                continue
            t = sql.Identifier(table)
            odd = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE array_length(embedding, 1) "
                                       "IS DISTINCT FROM %s").format(t), (EMBED_DIM,)).fetchone()[0]
            if odd:
                done[table] = f"skipped: {odd} rows are not {EMBED_DIM}-d"
                continue
            try:
                with conn.transaction():
                    timeout = sql.Literal(f"{int(lock_timeout_s * 1000)}ms")
                    conn.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(timeout))
                    dim = sql.Literal(EMBED_DIM)
                    conn.execute(sql.SQL("ALTER TABLE {} ALTER COLUMN embedding TYPE vector({}) "
                                         "USING embedding::vector({})").format(t, dim, dim))
                done[table] = "converted"
            except psycopg.errors.LockNotAvailable as e:
                done[table] = f"busy: {e}"
    return done
