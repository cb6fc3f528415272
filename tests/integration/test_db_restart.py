"""A dropped database (issue #12 item 9): every connection of the stack's Postgres database is
terminated, several times, while requests, asks and uploads run (what a restart or failover does).
No request may fail for it: the pools check a connection before handing it out, and work that was
cut mid-statement runs again on a new connection."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
import requests

from web_helpers import upload_captions

pytestmark = pytest.mark.slow

TERMINATE = ("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
             "WHERE datname = current_database() AND pid <> pg_backend_pid()")


def _logged_errors(stack, limit: int = 8) -> list[str]:
    """The services' ERROR log lines and their warnings of a 503 for the database, then the last
    three retried lost connections (from ``<data_dir>/logs``), so a failure here explains itself."""
    lines, retries = [], []
    for log in sorted((stack.settings.data_dir / "logs").glob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if ('"level": "ERROR"' in line and '"logger": "lecturecopilot.worker"' not in line) \
                    or "database unavailable in" in line:
                lines.append(f"{log.name}: {line[:1500]}")
            elif "lost the database connection" in line:
                retries.append(f"{log.name}: {line[:500]}")
    return lines[-limit:] + retries[-3:]


def test_terminated_connections_fail_no_request(stack):
    base = stack.base
    course = stack.create_course("Dropped database")
    r = upload_captions(base, course, headers=stack.admin, title="Heaps", number=1)
    assert r.status_code == 202, r.text
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=90)["status"] == "ready"
    stop = threading.Event()
    statuses: Counter = Counter()
    failures: list[str] = []
    uploaded: list[str] = []
    lock = threading.Lock()

    def record(what: str, r: requests.Response) -> None:
        with lock:
            statuses[r.status_code] += 1
            if r.status_code >= 500:
                failures.append(f"{what}: {r.status_code} {r.text[:200]}")

    def reader() -> None:
        while not stop.is_set():
            record("course", requests.get(f"{base}/api/courses/{course}", timeout=30))
            record("lecture", requests.get(f"{base}/api/lectures/{lecture}", timeout=30))
            record("courses", requests.get(f"{base}/api/courses", headers=stack.admin, timeout=30))

    def asker() -> None:
        while not stop.is_set():
            record("ask", requests.post(f"{base}/api/courses/{course}/ask", timeout=60,
                                        json={"question": "What is the heap property?"}))

    def uploader() -> None:
        n = 2
        while not stop.is_set():
            r = upload_captions(base, course, headers=stack.admin, title=f"Heaps {n}", number=n)
            record("upload", r)
            if r.status_code == 202:
                uploaded.append(r.json()["lecture_id"])
            n += 1
            time.sleep(0.3)

    workers = [threading.Thread(target=f, daemon=True) for f in (reader, reader, asker, asker, uploader)]
    for t in workers:
        t.start()
    killed = 0
    try:
        with stack.db() as conn:
            for _ in range(6):  # a restart's worth of dropped connections, again and again
                time.sleep(1.5)
                killed += conn.execute(TERMINATE).fetchone()[0]
        time.sleep(1.5)
    finally:
        stop.set()
        for t in workers:
            t.join(60)
    assert killed >= 6 * 5, f"only {killed} connections were terminated"
    assert not failures, (f"{len(failures)} of {sum(statuses.values())} requests failed: {failures[:5]}; "
                          f"the services logged: {_logged_errors(stack)}")
    assert sum(statuses.values()) > 50 and statuses[200] > 40, statuses
    assert uploaded, "no upload went through"
    for lid in uploaded:  # the pipeline finishes what was uploaded meanwhile
        assert stack.wait_ready(lid, timeout_s=180)["status"] == "ready"
    # and right after, everything answers as before
    r = requests.post(f"{base}/api/courses/{course}/ask", json={"question": "What is the heap property?"}, timeout=60)
    assert r.status_code == 200 and not r.json()["declined"], r.text


def test_work_cut_mid_statement_runs_once_more_on_a_new_connection(stack):
    """The retry itself (db.retry_on_disconnect): a read whose backend is terminated while it runs,
    once or twice, succeeds on a new connection; a third loss, and any other error, is raised."""
    import psycopg

    from lecturecopilot import db

    pool = db.make_pool(stack.settings, max_size=2)
    backends: list[int] = []

    def terminate_sleepers(times: int) -> None:
        killed: list[int] = []  # a terminated backend lingers as 'active' a moment: not counted twice
        with stack.db() as conn:
            for _ in range(times):
                deadline = time.time() + 10
                while time.time() < deadline and not (found := conn.execute(
                        "SELECT pid FROM pg_stat_activity WHERE datname=current_database() AND pid <> ALL(%s) "
                        "AND query LIKE 'SELECT pg_sleep(1.5)%%' AND state='active' AND pg_terminate_backend(pid)",
                        (killed,)).fetchall()):
                    time.sleep(0.05)
                killed += [r[0] for r in found]

    @db.retry_on_disconnect
    def slow_read() -> int:
        with pool.connection() as conn:
            backends.append(conn.info.backend_pid)
            return conn.execute("SELECT pg_sleep(1.5), 42 AS answer").fetchone()["answer"]

    try:
        killer = threading.Thread(target=terminate_sleepers, args=(1,))
        killer.start()
        assert slow_read() == 42
        killer.join()
        assert len(backends) == 2 and backends[0] != backends[1]
        backends.clear()
        killer = threading.Thread(target=terminate_sleepers, args=(2,))
        killer.start()
        assert slow_read() == 42
        killer.join()
        assert len(backends) == 3 and len(set(backends)) == 3
        backends.clear()
        killer = threading.Thread(target=terminate_sleepers, args=(3,))
        killer.start()
        with pytest.raises(psycopg.errors.AdminShutdown):
            slow_read()
        killer.join()
        assert len(backends) == 3

        @db.retry_on_disconnect
        def timed_out() -> None:
            backends.append(0)
            with pool.connection() as conn:
                conn.execute("SET statement_timeout = 50")
                conn.execute("SELECT pg_sleep(1)")

        backends.clear()
        with pytest.raises(psycopg.errors.QueryCanceled):
            timed_out()
        assert backends == [0]  # not a lost connection: not run again
    finally:
        pool.close()


def test_a_pool_of_dead_connections_hands_out_a_new_one_within_its_timeout(stack):
    """After a restart every idle connection of a pool is dead. psycopg_pool checks them one at a
    time with a growing delay between failed checks (1, 2, 4, 8 s), so eight of them outlasted a
    10 s timeout; the first failed check now sweeps the pool (db.SweepingCheck)."""
    from lecturecopilot import db

    pool = db.make_pool(stack.settings, min_size=8, max_size=8, timeout_s=10)
    try:
        pool.wait(timeout=30)
        held = [pool.getconn() for _ in range(8)]
        pids = [c.info.backend_pid for c in held]
        for c in held:
            pool.putconn(c)
        with stack.db() as conn:
            assert conn.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid = ANY(%s)",
                                (pids,)).fetchone()[0] == 8
            deadline = time.time() + 10  # until they are gone
            while conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)).fetchone()[0]:
                assert time.time() < deadline
                time.sleep(0.05)
        with pool.connection() as conn:
            assert conn.info.backend_pid not in pids
            assert conn.execute("SELECT 7 AS n").fetchone()["n"] == 7
        assert pool.get_stats().get("connections_lost", 0) == 8  # all eight found dead, none handed out
    finally:
        pool.close()
