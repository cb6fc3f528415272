"""The throw-away stack of tests and evals (``lecturecopilot_ops.stack.ephemeral``) cleans up after a
SIGTERM: services left running would keep consuming the next session's pipeline events."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def test_sigterm_stops_the_services_and_drops_the_database(tmp_path):
    import psycopg

    script = textwrap.dedent(f"""
        import os, sys, time
        from pathlib import Path
        from lecturecopilot_ops.stack import ephemeral
        with ephemeral(Path({str(tmp_path / 'data')!r})) as eph:
            pids = [int(p.read_text()) for p in (eph.settings.data_dir / "run").glob("*.pid")]
            print("UP", os.environ.get("DATABASE_URL", ""), *pids, flush=True)
            time.sleep(600)
    """)
    env = {**os.environ, "LC_TEST_NATS": "embedded"}  # its own nats-server: no effect on this session's
    p = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        line = ""
        deadline = time.time() + 300
        while not line.startswith("UP") and time.time() < deadline:
            line = p.stdout.readline()
            assert line or p.poll() is None, "the stack did not start"
        _, db_url, *pids = line.split()
        pids = [int(x) for x in pids]
        assert len(pids) == 5 and all(_alive(x) for x in pids)
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=60) == -signal.SIGTERM  # it still dies of the signal, after cleaning up
        assert not [x for x in pids if _alive(x)], "services left running after SIGTERM"
        if db_url.startswith("postgresql://postgres@127.0.0.1:5432/"):
            dbname = db_url.rsplit("/", 1)[1]
            with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres") as c:
                assert c.execute("SELECT 1 FROM pg_database WHERE datname=%s", (dbname,)).fetchone() is None
    finally:
        if p.poll() is None:
            p.kill()
