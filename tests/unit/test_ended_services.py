"""``lecturecopilot_ops.stack.ended_services``: which of a stack's services (by pid file) have ended, and how."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from types import SimpleNamespace

from lecturecopilot_ops.stack import ended_services


def _first_sight(settings, name: str) -> dict[str, str]:
    """ended_services' first answer that names ``name`` (within 30 s)."""
    deadline = time.time() + 30
    while time.time() < deadline:
        ended = ended_services(settings)
        if name in ended:
            return ended
        time.sleep(0.05)
    raise AssertionError(f"{name} was never seen ended")


def test_running_killed_and_exited_services_are_told_apart(tmp_path):
    (tmp_path / "run").mkdir()
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    procs = {"ask": subprocess.Popen(sleep), "index": subprocess.Popen(sleep),
             "ingest": subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])}
    for name, p in procs.items():
        (tmp_path / "run" / f"{name}.pid").write_text(str(p.pid))
    settings = SimpleNamespace(data_dir=tmp_path)
    try:
        assert _first_sight(settings, "ingest") == {"ingest": "exited with 3"}
        procs["index"].send_signal(signal.SIGKILL)
        assert _first_sight(settings, "index") == {"ingest": "ended", "index": "killed by SIGKILL"}
    finally:
        for p in procs.values():
            p.kill()


def test_a_test_stack_s_ports_lie_below_the_range_outgoing_connections_take():
    import socket

    from lecturecopilot_ops.stack import _free_port

    first = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    ports = {_free_port() for _ in range(20)}
    assert all(20000 <= p < first for p in ports), ports
    with socket.socket() as s:  # and free: a service can bind it
        s.bind(("127.0.0.1", ports.pop()))
