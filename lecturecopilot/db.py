"""Postgres access (psycopg 3 + psycopg_pool). The schema lives in ``schema.sql``."""

from __future__ import annotations

from importlib import resources

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from . import embedded
from .settings import Settings

_SCHEMA_LOCK = 72_001  # pg_advisory_lock key: one process applies the schema at a time


def apply_schema(url: str) -> None:
    """Creates missing tables and indexes (idempotent; safe from several processes at once)."""
    sql = resources.files("lecturecopilot").joinpath("schema.sql").read_text()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
        try:
            conn.execute(sql)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))


def make_pool(settings: Settings, *, min_size: int = 1, max_size: int = 8) -> ConnectionPool:
    """A connection pool on the configured (or embedded) Postgres, schema applied.

    Rows come back as dicts. Raises ``psycopg.OperationalError`` when Postgres is unreachable.
    """
    url = embedded.database_url(settings)
    apply_schema(url)
    pool = ConnectionPool(url, min_size=min_size, max_size=max_size, kwargs={"row_factory": dict_row},
                          open=True)
    pool.wait(timeout=30)
    return pool
