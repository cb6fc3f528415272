"""Stopping a process (``lecturecopilot.netports.stop_process`` / ``stop_processes``, which ``down``,
the supervisor's stop and the embedded NATS stop share), on real child processes: one that ends on
SIGTERM, one that ignores it (SIGKILL after the timeout), and a process group whose leader ignores
SIGTERM while its child ends on it."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from lecturecopilot.netports import pid_alive, stop_process, stop_processes

# A child that reports "ready" once its SIGTERM handling is set, then sleeps; with "exit" it writes
# the file named by argv[2] and exits on SIGTERM, with "ignore" it ignores SIGTERM.
CHILD = """
import signal, sys, time
def ended(*_):
    open(sys.argv[2], "w").write("sigterm")
    sys.exit(0)
signal.signal(signal.SIGTERM, signal.SIG_IGN if sys.argv[1] == "ignore" else ended)
print("ready", flush=True)
time.sleep(120)
"""

# A group leader that ignores SIGTERM and starts an "exit" child in its group (its pid on stdout).
LEADER = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], "exit", sys.argv[2]], stdout=subprocess.PIPE, text=True)
child.stdout.readline()
print(child.pid, flush=True)
time.sleep(120)
"""


def _start(mode: str, marker, script: str = CHILD, session: bool = False) -> tuple[subprocess.Popen, str]:
    """A started child and the first line it printed (once its signal handling is set)."""
    args = [sys.executable, "-c", script] + ([CHILD, str(marker)] if script is LEADER else [mode, str(marker)])
    p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, start_new_session=session)
    line = p.stdout.readline().strip()
    assert line, "the child did not start"
    return p, line


def _gone(pid: int, within_s: float = 2.0) -> bool:
    """Whether ``pid`` has ended within ``within_s`` seconds (a child reparented away is reaped by
    its new parent, so this polls)."""
    deadline = time.monotonic() + within_s
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_process_that_ends_on_sigterm_is_gone_without_waiting_the_timeout(tmp_path):
    marker = tmp_path / "ended"
    p, _ = _start("exit", marker)
    t0 = time.monotonic()
    assert stop_process(p.pid, timeout_s=5.0) is True
    assert time.monotonic() - t0 < 4.0
    assert marker.read_text() == "sigterm"
    assert not pid_alive(p.pid)
    p.stdout.close()


def test_a_process_that_ignores_sigterm_is_killed_after_the_timeout(tmp_path):
    marker = tmp_path / "ended"
    p, _ = _start("ignore", marker)
    t0 = time.monotonic()
    assert stop_process(p.pid, timeout_s=0.5) is True
    assert time.monotonic() - t0 >= 0.5
    assert not marker.exists()
    assert not pid_alive(p.pid)
    try:
        os.kill(p.pid, 0)
        raise AssertionError("the process is still there")
    except ProcessLookupError:
        pass  # reaped: nothing of it is left
    p.stdout.close()


def test_several_share_one_deadline_and_a_gone_pid_is_passed_over(tmp_path):
    a, _ = _start("ignore", tmp_path / "a")
    b, _ = _start("ignore", tmp_path / "b")
    c, _ = _start("exit", tmp_path / "c")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    t0 = time.monotonic()
    assert stop_processes([a.pid, b.pid, c.pid, gone.pid], timeout_s=0.6) == []
    assert 0.6 <= time.monotonic() - t0 < 1.2 + 1.0  # one deadline, not 0.6 s per process
    assert (tmp_path / "c").read_text() == "sigterm" and not (tmp_path / "a").exists()
    assert not any(pid_alive(x.pid) for x in (a, b, c))
    for x in (a, b, c):
        x.stdout.close()


def test_group_reaches_the_leaders_children(tmp_path):
    marker = tmp_path / "child"
    leader, line = _start("", marker, script=LEADER, session=True)
    child_pid = int(line)
    assert pid_alive(child_pid)
    assert stop_process(leader.pid, timeout_s=0.5, group=True) is True
    assert marker.read_text() == "sigterm"  # the child got the group's SIGTERM
    assert _gone(child_pid)
    leader.stdout.close()
