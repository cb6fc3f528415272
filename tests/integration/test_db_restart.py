"""A dropped database (issue #12 item 9): every connection of the stack's Postgres database is
terminated, several times, while requests, asks and uploads run (what a restart or failover does).
No request may fail for it: the pools check a connection before handing it out, and work that was
cut mid-statement runs once more on a new connection."""

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
    assert not failures, f"{len(failures)} of {sum(statuses.values())} requests failed: {failures[:5]}"
    assert sum(statuses.values()) > 50 and statuses[200] > 40, statuses
    assert uploaded, "no upload went through"
    for lid in uploaded:  # the pipeline finishes what was uploaded meanwhile
        assert stack.wait_ready(lid, timeout_s=180)["status"] == "ready"
    # and right after, everything answers as before
    r = requests.post(f"{base}/api/courses/{course}/ask", json={"question": "What is the heap property?"}, timeout=60)
    assert r.status_code == 200 and not r.json()["declined"], r.text
