"""``python -m lecturecopilot_ops.supervisor``: keeps the services of a ``make up`` stack running.

:func:`lecturecopilot_ops.running.up` starts it, detached, with the services' environment; it writes to
``<data_dir>/logs/supervisor.log`` and its pid is ``<data_dir>/run/supervisor.pid``. It starts each
service whose pid file names no live process (one that runs already is watched as it is), and when a
service ends (a crash, the kernel's OOM killer, a log it could not write on a full disk) it says so in
its log, loudly (which service, how it ended, after how long, the end of the service's own log), and
starts it again: after 1 s, and after 2, 4, 8, 15, then 30 s while each new start ends within a minute
(a service that cannot start is not restarted in a tight loop). On SIGTERM or SIGINT it exits and
leaves the services running: :func:`lecturecopilot_ops.running.down` stops it first, then the services.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time

from lecturecopilot import logsafe
from lecturecopilot.netports import stop_process
from lecturecopilot.settings import Settings, get_settings

from . import running

log = logging.getLogger("lecturecopilot_ops.supervisor")

RESTART_DELAYS_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
STABLE_S = 60.0  # a service that ran this long before it ended is restarted after the first delay again
POLL_S = 0.5


class _Watched:
    """One service: its process (``proc`` when we started it; an adopted one has only ``pid``), when it
    started, how many starts in a row ended early, and when it is due to start again."""

    def __init__(self, name: str):
        self.name = name
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None
        self.started = 0.0
        self.quick_ends = 0
        self.due: float | None = None  # ended; start again at this time

    def ended(self) -> str | None:
        """How the process ended ("exited with 1", "killed by SIGKILL", "ended"), None while it runs."""
        if self.proc is not None:
            code = self.proc.poll()
            if code is None:
                return None
            return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with {code}"
        return None if self.pid is not None and running.pid_alive(self.pid) else "ended"


def supervise(settings: Settings, stopping: threading.Event) -> None:
    """Starts and restarts the stack's services (see the module doc) until ``stopping`` is set."""
    watched = {name: _Watched(name) for name in running.SERVICES}
    for w in watched.values():
        pid = running.service_pid(settings, w.name)
        if pid is not None and running.pid_alive(pid):
            w.pid, w.started = pid, time.time()
            log.info("%s runs already (pid %s); watching it", w.name, pid)
        else:
            _start(settings, w)
    while not stopping.is_set():
        for w in watched.values():
            try:
                _tend(settings, w, stopping)
            except Exception:  # the supervisor itself must not end over one service
                log.exception("watching %s failed", w.name)
        stopping.wait(POLL_S)
    log.info("supervisor stopping; the services keep running")


def _tend(settings: Settings, w: _Watched, stopping: threading.Event) -> None:
    """One look at service ``w``: when it has ended, says so and sets when it starts again; when that
    time has come, starts it."""
    now = time.time()
    if w.due is None:
        how = w.ended()
        if how is None:
            return
        ran = now - w.started
        w.quick_ends = w.quick_ends + 1 if ran < STABLE_S else 0
        delay = RESTART_DELAYS_S[min(max(w.quick_ends - 1, 0), len(RESTART_DELAYS_S) - 1)]
        w.due = now + delay
        logfile = settings.data_dir / "logs" / f"{w.name}.log"
        log.error("SERVICE %s (pid %s) %s after %.0f s; starting it again in %g s. Its log (%s) ends:\n%s",
                  w.name.upper(), w.pid, how, ran, delay, logfile, running.log_tail(logfile, 15) or "(empty)")
    elif now >= w.due and not stopping.is_set():
        _start(settings, w)


def _start(settings: Settings, w: _Watched) -> None:
    try:
        w.proc = running.spawn_service(settings, w.name)
    except OSError as e:  # no room for its log, no fork: try again later
        w.proc, w.due = None, time.time() + RESTART_DELAYS_S[-1]
        log.error("starting %s failed (%s); trying again in %g s", w.name, e, RESTART_DELAYS_S[-1])
        return
    w.pid, w.started, w.due = w.proc.pid, time.time(), None
    log.info("started %s (pid %s)", w.name, w.pid)


def start(settings: Settings, env: dict[str, str], timeout_s: float) -> subprocess.Popen | None:
    """Starts the supervisor unless it runs (it takes over the services that run already) and waits
    until it has written every service's pid file; returns its process (None when it ran already)."""
    run = settings.data_dir / "run"
    if "supervisor" in running.running_names(settings):
        return None
    (run / "supervised").touch()
    for name in running.SERVICES:  # pid files of services that ended: the supervisor starts those again
        pid = running.service_pid(settings, name)
        if pid is not None and not running.pid_alive(pid):
            (run / f"{name}.pid").unlink(missing_ok=True)
    logfile = settings.data_dir / "logs" / "supervisor.log"
    with open(logfile, "ab") as log:
        p = subprocess.Popen([sys.executable, "-m", "lecturecopilot_ops.supervisor"], env=env, stdout=log, stderr=log,
                             start_new_session=True, cwd=str(running.ROOT))
    (run / "supervisor.pid").write_text(str(p.pid))
    deadline = time.time() + min(timeout_s, 60)
    while not all((run / f"{n}.pid").exists() for n in running.SERVICES):
        if p.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"the supervisor did not start the services; its log ({logfile}) ends:\n"
                               f"{running.log_tail(logfile)}")
        time.sleep(0.1)
    return p


def stop(settings: Settings) -> None:
    """SIGTERM to the supervisor, SIGKILL when it has not ended after 10 s; removes its pid file."""
    pidfile = settings.data_dir / "run" / "supervisor.pid"
    pid = running.service_pid(settings, "supervisor")
    if pid is not None and running.pid_alive(pid):
        stop_process(pid, 10.0)
    pidfile.unlink(missing_ok=True)


def main() -> None:
    logsafe.install()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s supervisor %(levelname)s %(message)s")
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    supervise(get_settings(), stopping)


if __name__ == "__main__":
    main()
