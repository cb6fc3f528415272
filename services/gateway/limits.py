"""Rate limits counted atomically in Postgres, and the keyed hash that names a person.

A limit is a fixed window (an hour, a day) per key. :func:`hit_all` adds one to each (key, window)
row with ``INSERT ... ON CONFLICT DO UPDATE SET n = n + 1 RETURNING n``: Postgres serialises
concurrent increments of one row, so in a burst no request above the limit passes. A request is
counted once it has been checked (course, lecture, body) and just before it is served; one refused
after that (ask says NOT_FOUND, or is unreachable) gives its use back with :func:`refund`, so only
served requests use up a budget. Raw IPs are never stored: a person is
``HMAC-SHA256(server secret, "user:<email>" | "ip:<address>")``.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from psycopg_pool import ConnectionPool

from lecturecopilot.waiting import client_network

from . import store

HOUR_S = 3600
DAY_S = 86400


def person_key(secret: bytes, email: str | None, ip: str | None) -> str:
    """A stable pseudonym (32 hex chars) of a signed-in account (by email) or else a client's
    network (:func:`client_network`: an IPv6 /64 is one person, as it is one subscriber's)."""
    who = f"user:{email.lower()}" if email else f"ip:{client_network(ip)}"
    return hmac.new(secret, who.encode(), hashlib.sha256).hexdigest()[:32]


@dataclass(frozen=True)
class Use:
    """One counted use: the ``(key, window_start)`` counter rows it added one to (for :func:`refund`)."""

    rows: tuple[tuple[str, datetime], ...]


class _Refused(Exception):
    pass


def hit_all(pool: ConnectionPool, checks: list[tuple[str, int, int]]) -> tuple[Use | None, int]:
    """Counts one use against each ``(key, window_s, limit)`` in one transaction and returns
    ``(use, retry_after_s)``: the :class:`Use` when every count stays within its limit, else
    ``(None, seconds until the first full window ends)``. A refused use is rolled back, so it
    consumes nothing (a refusal on one course leaves the cap across courses untouched). Row locks
    serialise concurrent uses of one key: in a burst, exactly ``limit`` uses pass.
    """
    now = time.time()
    retry = 0
    rows: list[tuple[str, datetime]] = []
    try:
        with pool.connection() as conn, conn.transaction():
            for key, window_s, limit in checks:
                start = int(now // window_s) * window_s
                window = datetime.fromtimestamp(start, tz=timezone.utc)
                if store.count_use(conn, key, window) > limit:
                    retry = int(start + window_s - now) + 1
                    raise _Refused
                rows.append((key, window))
            if int(now * 1000) % 200 == 0:  # now and then, forget windows older than two days
                store.forget_old_counts(conn)
    except _Refused:
        return None, retry
    return Use(tuple(rows)), 0


def refund(pool: ConnectionPool, use: Use | None) -> None:
    """Gives back a use that was counted but not served (the request was refused after the
    count, e.g. ask answered NOT_FOUND or was unreachable): each of its counters goes down by one,
    in the window it was counted in. Harmless for ``None`` (nothing was counted)."""
    if use is None or not use.rows:
        return
    store.uncount_uses(pool, use.rows)
