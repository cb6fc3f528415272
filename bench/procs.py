"""Starting and stopping extra service processes for benchmarks (more workers, more replicas)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from lecturecopilot_ops.stack import wait_until_up

ROOT = Path(__file__).resolve().parent.parent


def spawn(module: str, env: dict, log: Path, ready_url: str, timeout_s: float = 240) -> subprocess.Popen:
    """Starts ``python -m module`` with ``env`` (its own process group, output to ``log``) and waits
    until ``ready_url`` answers 200. Raises ``RuntimeError`` when it exits or is not ready in time."""
    p = subprocess.Popen([sys.executable, "-m", module], env=env, cwd=str(ROOT), stdout=open(log, "ab"),
                         stderr=subprocess.STDOUT, start_new_session=True)
    if wait_until_up(ready_url, p, timeout_s, interval_s=0.5):
        return p
    if p.poll() is not None:
        raise RuntimeError(f"{module} exited at start; see {log}")
    raise RuntimeError(f"{module} did not become ready in {timeout_s} s; see {log}")


def stop(procs: list[subprocess.Popen], timeout_s: float = 30) -> None:
    """SIGTERM to each process group, SIGKILL after ``timeout_s``."""
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for p in procs:
        try:
            p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
