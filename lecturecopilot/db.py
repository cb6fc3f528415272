"""Postgres access (psycopg 3 + psycopg_pool). The schema lives in ``schema.sql``.

A restart or failover of Postgres ends every connection. The pools check each connection when they
hand it out (psycopg_pool's ``check``, a round trip on an idle connection) and open a new one for a
dead one, so no request meets a connection that died while it sat in the pool. A failed check also
sweeps the pool's other idle connections (:class:`SweepingCheck`): psycopg_pool backs off between
failed checks (1, 2, 4, 8 s …, psycopg PR #711), so a pool of eight dead connections checked one by
one made a request wait past the 30 s pool timeout. A statement that
was running when its connection was cut fails; :func:`retry_on_disconnect` runs such a unit of
work again on a new connection, up to twice (tenacity), for work that is safe to repeat: a restart's
sweep of terminations can catch the first retry too, since a terminated backend exits a moment
after the pool's check of it passed.
"""

from __future__ import annotations

import logging
from importlib import resources

import psycopg
import tenacity
from psycopg.rows import dict_row
from psycopg.types import TypeInfo
from psycopg_pool import ConnectionPool, PoolTimeout

from . import embedded, vectors
from .settings import Settings

log = logging.getLogger(__name__)

_SCHEMA_LOCK = 72_001  # pg_advisory_lock key: one process applies the schema at a time


def apply_schema(url: str) -> TypeInfo | None:
    """Creates missing tables and indexes (idempotent; safe from several processes at once), and
    where the server has pgvector, the extension and ``vector(384)`` embedding columns (existing
    ``real[]`` ones converted in place; see :mod:`lecturecopilot.vectors`). Returns pgvector's
    ``vector`` type as the database then has it (None without the extension)."""
    sql = resources.files("lecturecopilot").joinpath("schema.sql").read_text()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
        try:
            conn.execute(sql)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))
        return vectors.vector_type(conn)


class SweepingCheck:
    """The pool's ``check`` callable: psycopg_pool's round trip on the connection about to be handed
    out; when it fails (raised on, so the pool discards it), first :meth:`ConnectionPool.check` of
    the whole pool, which tests every idle connection at once and replaces the dead ones, as the
    psycopg maintainers advise after a server restart (psycopg issue #701). Without it the pool
    tried the dead connections one by one with its growing delay in between."""

    def __init__(self) -> None:
        self.pool: ConnectionPool | None = None

    def __call__(self, conn: psycopg.Connection) -> None:
        try:
            ConnectionPool.check_connection(conn)
        except Exception as e:
            log.info("a pooled connection failed its check (%s); checking the pool's idle connections", e)
            if self.pool is not None:
                self.pool.check()
            raise


def make_pool(settings: Settings, *, min_size: int = 1, max_size: int = 8, timeout_s: float = 30.0) -> ConnectionPool:
    """A connection pool on the configured (or embedded) Postgres, schema applied.

    Rows come back as dicts; embeddings as ``list[float]`` whether their column is ``real[]`` or
    pgvector's ``vector`` (each connection registers the type, :func:`vectors.configurer`). A
    connection is checked before it is handed out (:class:`SweepingCheck`); waiting for one longer
    than ``timeout_s`` raises ``psycopg_pool.PoolTimeout``. Raises ``psycopg.OperationalError`` when
    Postgres is unreachable.
    """
    url = embedded.database_url(settings)
    vector_type = apply_schema(url)
    check = SweepingCheck()
    pool = ConnectionPool(url, min_size=min_size, max_size=max_size, kwargs={"row_factory": dict_row}, timeout=timeout_s,
                          configure=vectors.configurer(vector_type), check=check, open=True)
    check.pool = pool
    pool.wait(timeout=30)
    return pool


def is_disconnect(exc: BaseException) -> bool:
    """True for an error that says the connection to Postgres was lost (the server shut down or
    terminated it: SQLSTATE class 57P ``AdminShutdown``/``CrashShutdown``/``CannotConnectNow``, class
    08 connection exceptions, or a psycopg ``OperationalError`` without a SQLSTATE, which is how a
    socket closed mid-statement surfaces). Not for a pool timeout, a statement timeout or a lock."""
    if not isinstance(exc, psycopg.OperationalError) or isinstance(exc, PoolTimeout):
        return False
    state = getattr(exc, "sqlstate", None)
    return state is None or state.startswith(("57P", "08"))


def _log_retry(state: tenacity.RetryCallState) -> None:
    log.warning("lost the database connection in %s (%s); retrying on a new one",
                getattr(state.fn, "__qualname__", state.fn), state.outcome.exception() if state.outcome else "")


#: Decorator: runs the function again when it failed because its connection was lost
#: (:func:`is_disconnect`), on a new connection from the pool (which checks it), after 0.1 s and
#: then 0.4 s (past a restart's sweep of terminations); any other error, or a third loss, is raised. Only for functions whose work is safe to repeat: reads, or one
#: transaction that a lost connection rolls back whole.
retry_on_disconnect = tenacity.retry(retry=tenacity.retry_if_exception(is_disconnect),
                                     stop=tenacity.stop_after_attempt(3),
                                     wait=tenacity.wait_chain(tenacity.wait_fixed(0.1), tenacity.wait_fixed(0.4)),
                                     before_sleep=_log_retry, reraise=True)
