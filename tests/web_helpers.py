"""Helpers for the web-product tests: sign in through the mailed link, mint tokens, upload a
small captions lecture, start a second gateway with low limits."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
VTT = ("WEBVTT\n\n00:01.000 --> 00:05.000\nA heap is a binary tree with the heap property.\n\n"
       "00:05.000 --> 00:09.000\nThe largest key sits at the root of a max heap.\n")


def link_token(mail) -> str:
    """The token of the sign-in link in a mail."""
    body = mail.get_body(preferencelist=("plain",)).get_content()
    m = re.search(r"/auth/verify\?token=([A-Za-z0-9_\-]+)", body)
    assert m, body
    return m.group(1)


def sign_in(base: str, sink, email: str) -> requests.Session:
    """A requests session signed in as ``email`` through the real flow (link mailed to the sink),
    with its ``X-CSRF-Token`` header set. Returns the session."""
    s = requests.Session()
    since = len(sink.messages)
    r = s.post(f"{base}/api/auth/magic-link", json={"email": email}, timeout=10)
    assert r.status_code == 202, r.text
    token = link_token(sink.wait_for(email, since=since))
    r = s.post(f"{base}/api/auth/verify", json={"token": token}, timeout=10)
    assert r.status_code == 200, r.text
    me = s.get(f"{base}/api/me", timeout=10).json()
    assert me["signed_in"] and me["email"] == email.lower()
    s.headers["X-CSRF-Token"] = me["csrf_token"]
    return s


def mint(stack, role: str, email: str) -> dict:
    """Authorization headers of a fresh API token with ``role``."""
    from lecturecopilot import db
    from services.gateway.auth import mint_token

    pool = db.make_pool(stack.settings, max_size=1)
    try:
        return {"Authorization": f"Bearer {mint_token(pool, role, email)}"}
    finally:
        pool.close()


def set_role(stack, email: str, role: str) -> None:
    """Gives the account ``email`` the ``role`` directly in Postgres (creating it if new)."""
    with stack.db() as c:
        c.execute("INSERT INTO users (email, role) VALUES (%s, %s) ON CONFLICT (email) DO UPDATE SET role=%s",
                  (email, role, role))


def upload_captions(base: str, course_id: str, *, session=None, headers=None, title="Heaps", number=1):
    """POSTs a small WebVTT captions lecture; returns the response."""
    http = session or requests
    return http.post(f"{base}/api/courses/{course_id}/lectures", headers=headers or {},
                     files={"captions": ("heaps.vtt", VTT.encode(), "text/vtt")},
                     data={"title": title, "number": str(number)}, timeout=60)


class Gateway:
    """A second gateway process on the stack's stores with its own settings (e.g. low limits);
    with ``service="ingest"`` a second ingest process (``port``: its port, or a free one)."""

    def __init__(self, stack, env: dict[str, str], service: str = "gateway", port: int | None = None):
        from lecturecopilot_ops.stack import _free_port, service_env, wait_until_up

        self.port = port or _free_port()
        full = service_env(stack.settings)
        full.update({f"LC_{service.upper()}_PORT": str(self.port), **env})
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(stack.settings.data_dir / "logs" / f"{service}-{self.port}.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", f"services.{service}"], env=full, cwd=str(ROOT),
                                     stdout=self.log, stderr=self.log, start_new_session=True)
        # /healthz: the process serves (a gateway's /readyz also needs ask, which some tests make unreachable)
        if not wait_until_up(f"{self.base}/healthz", self.proc, 60):
            self.close()
            raise RuntimeError(f"the second {service} did not start")

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
        self.log.close()


def blocked_at_lecture_insert(conn, timeout_s: float = 60) -> list:
    """The ``(pid,)`` rows of the backends of ``conn``'s database waiting on a lock at an
    ``INSERT INTO lectures`` (a finish held by a test's table lock), polled for ``timeout_s``
    seconds; fails the test when none got there."""
    deadline, waiting = time.time() + timeout_s, None
    while time.time() < deadline and not waiting:
        waiting = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname=current_database() AND "
                               "wait_event_type='Lock' AND query ILIKE '%%INSERT INTO lectures%%'").fetchall()
        time.sleep(0.05)
    assert waiting, "the finish never reached the lectures table"
    return waiting
