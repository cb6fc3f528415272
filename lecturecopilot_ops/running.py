"""Which services of a stack run, and whether the process answering a service's health URL is that
service's own: pid files in ``<data_dir>/run/``, the ``LC-Pid`` header of every health answer
(:data:`~lecturecopilot.health.PID_HEADER`), and the ports each service needs
(:func:`check_ports` raises :class:`~lecturecopilot.netports.PortTaken` for one another process holds).
Used by :mod:`lecturecopilot_ops.stack` (``up``) and :mod:`lecturecopilot_ops.supervisor`.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import requests

from lecturecopilot.health import PID_HEADER
from lecturecopilot.netports import PortTaken, describe_pid, listener_pids, pid_alive, port_free
from lecturecopilot.settings import Settings

SERVICES = ["ask", "ingest", "transcribe", "index", "gateway"]
ROOT = Path(__file__).resolve().parent.parent


def spawn_service(settings: Settings, name: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Starts ``python -m services.<name>`` (its own session, output appended to its log, ``env`` or
    this process's environment) and writes its pid file."""
    with open(settings.data_dir / "logs" / f"{name}.log", "ab") as log:
        p = subprocess.Popen([sys.executable, "-m", f"services.{name}"], env=env, stdout=log, stderr=log,
                             start_new_session=True, cwd=str(ROOT))
    (settings.data_dir / "run" / f"{name}.pid").write_text(str(p.pid))
    return p


def running_names(settings: Settings) -> list[str]:
    """The services (and ``supervisor``) of this data folder whose pid is alive."""
    return [n for n in ["supervisor", *SERVICES] if (pid := service_pid(settings, n)) is not None and pid_alive(pid)]


def _answer(url: str) -> tuple[int | None, str | None]:
    """``(status, LC-Pid header)`` of ``GET url``; ``(None, None)`` when nothing answers."""
    try:
        r = requests.get(url, timeout=1)
    except requests.RequestException:
        return None, None
    return r.status_code, r.headers.get(PID_HEADER)


def wait_until_up(url: str, proc: subprocess.Popen, timeout_s: float, interval_s: float = 0.3, *,
                  own: bool = True) -> bool:
    """True once ``url`` answers 200 within ``timeout_s`` seconds from ``proc`` itself (its
    ``LC-Pid`` header names ``proc.pid``; with ``own=False`` any 200 will do, for a server that does
    not send the header); False when it does not, or when ``proc`` (the server) exits first: another
    program answering on the port is not ``proc`` being up. Polls every ``interval_s`` seconds."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        status, pid = _answer(url)
        if status == 200 and (not own or pid == str(proc.pid)):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(interval_s)
    return False


def service_ports(s: Settings) -> dict[str, list[tuple[str, int, str]]]:
    """The ports each service listens on: ``(host, port, the variable that sets it)``."""
    return {"ask": [(s.ask_host, s.ask_port, "LC_ASK_PORT"), (s.health_host, s.health_port_ask, "LC_HEALTH_PORT_ASK")],
            "ingest": [(s.ingest_host, s.ingest_port, "LC_INGEST_PORT")],
            "transcribe": [(s.health_host, s.health_port_transcribe, "LC_HEALTH_PORT_TRANSCRIBE")],
            "index": [(s.health_host, s.health_port_index, "LC_HEALTH_PORT_INDEX")],
            "gateway": [(s.gateway_host, s.gateway_port, "LC_GATEWAY_PORT")]}


def _holder(port: int) -> str:
    """Who listens on ``port``, for a message ("pid 123: python -m http.server"), or ""."""
    return "; ".join(describe_pid(p) for p in listener_pids(port)[:3])


def stack_data_dir(pid: int) -> Path | None:
    """The data folder of the Lecture Copilot stack whose service is process ``pid`` (a ``python -m
    services.<name>`` with ``LC_DATA_DIR`` in its environment, as :func:`spawn_service` starts it),
    read from ``/proc``; None for any other process or one we may not read."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        env = dict(v.split(b"=", 1) for v in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if b"=" in v)
    except OSError:
        return None
    if not any(a.startswith(b"services.") for a in cmd) or b"LC_DATA_DIR" not in env:
        return None
    return Path(env[b"LC_DATA_DIR"].decode(errors="replace"))


def _other_stack(port: int, settings: Settings) -> str:
    """A sentence for a port held by another Lecture Copilot stack (another data folder): how to use
    it or stop it; "" when the holder is not one."""
    for pid in listener_pids(port)[:3]:
        other = stack_data_dir(pid)
        if other is not None and other != settings.data_dir:
            return (f" It is a Lecture Copilot stack with another data folder, {other} (this command's is "
                    f"{settings.data_dir}: LC_DATA_DIR, or .lc-data in the folder a command runs in). To use "
                    f"that stack, run this command in {other.parent} or with LC_DATA_DIR={other}; to stop it, "
                    f"LC_DATA_DIR={other} lecture-copilot down.")
    return ""


def check_ports(settings: Settings, names: list[str] | None = None) -> None:
    """Raises :class:`PortTaken` for the first port of the services ``names`` (default: those not
    running, by their pid files) that another process holds; when that is another stack's service,
    the message says how to use or stop that stack instead (:func:`_other_stack`)."""
    running = {n for n in SERVICES if (pid := service_pid(settings, n)) is not None and pid_alive(pid)}
    for name in names if names is not None else [n for n in SERVICES if n not in running]:
        for host, port, var in service_ports(settings)[name]:
            if not port_free(host, port):
                raise PortTaken(port, f"the {name} service", var, host, _holder(port), _other_stack(port, settings))


def service_pid(settings: Settings, name: str) -> int | None:
    """The pid in ``run/<name>.pid`` (a service, or ``supervisor``), None when there is none."""
    try:
        return int((settings.data_dir / "run" / f"{name}.pid").read_text())
    except (OSError, ValueError):
        return None


def _health_urls(s: Settings) -> dict[str, str]:
    return {
        "ask": f"http://127.0.0.1:{s.health_port_ask}/healthz",
        "ingest": f"http://{client_host(s.ingest_host)}:{s.ingest_port}/readyz",
        "transcribe": f"http://127.0.0.1:{s.health_port_transcribe}/readyz",
        "index": f"http://127.0.0.1:{s.health_port_index}/readyz",
        "gateway": f"http://{client_host(s.gateway_host)}:{s.gateway_port}/readyz",
    }


def client_host(host: str) -> str:
    """Where to reach a server bound to ``host`` from this machine (all addresses: 127.0.0.1)."""
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host


def wait_healthy(settings: Settings, procs: dict[str, subprocess.Popen], deadline: float, quiet: bool) -> None:
    """Waits, service by service, until the process in its pid file answers its health URL with 200
    and its own pid. Raises when it ends first (or is started again), or at ``deadline``; under a
    supervisor, which starts an ended service again, only once it was started :data:`STARTS_WHILE_UP`
    times, or when the supervisor ends."""
    for name, url in _health_urls(settings).items():
        pids, others = {service_pid(settings, name)}, set()
        while True:
            pid = service_pid(settings, name)
            pids.add(pid)
            p = procs.get(name)
            ended = pid is None or (p is not None and p.poll() is not None) or not pid_alive(pid)
            if not _supervisor_runs(settings, procs):
                if ended or len(pids) > 1:
                    raise _not_up(settings, name, "ended before it answered")
            elif len(pids - {None}) > STARTS_WHILE_UP:
                raise _not_up(settings, name, f"was started {len(pids - {None})} times and ended each time")
            status, answered_by = _answer(url) if not ended else (None, None)
            if status == 200 and answered_by == str(pid):
                break
            if status is not None and answered_by != str(pid):
                others.add(f"pid {answered_by}" if answered_by else "a process that is none of ours")
            if time.time() > deadline:
                raise _not_up(settings, name, "did not answer in time", others)
            time.sleep(0.3)
        if not quiet:
            print(f"  {name:<10} up ({url}, pid {pid})")


STARTS_WHILE_UP = 3  # starts of one service ``up`` waits through under a supervisor


def _supervisor_runs(settings: Settings, procs: dict[str, subprocess.Popen]) -> bool:
    """True while this data folder's supervisor runs; raises when the one ``up`` started has ended."""
    sup = procs.get("supervisor")
    if sup is not None and sup.poll() is not None:
        logfile = settings.data_dir / "logs" / "supervisor.log"
        raise RuntimeError(f"the supervisor ended; its log ({logfile}) ends:\n{log_tail(logfile)}")
    pid = service_pid(settings, "supervisor")
    return pid is not None and pid_alive(pid)


def _not_up(settings: Settings, name: str, what: str, others: set | None = None) -> RuntimeError:
    """The error for a service that did not come up: :class:`PortTaken` when another process holds
    one of its ports (or answered in its place), else one naming its log and quoting its end."""
    for host, port, var in service_ports(settings)[name]:
        if not port_free(host, port) and not _listens(service_pid(settings, name), port):
            return PortTaken(port, f"the {name} service", var, host, _holder(port))
    if others:
        host, port, var = service_ports(settings)[name][-1 if name == "ask" else 0]
        return PortTaken(port, f"the {name} service", var, host, f"{', '.join(sorted(others))} answered there")
    logfile = settings.data_dir / "logs" / f"{name}.log"
    return RuntimeError(f"service {name} {what}; see {logfile}; its log ends:\n{log_tail(logfile)}")


def _listens(pid: int | None, port: int) -> bool:
    """True when ``pid`` (or a child of it, a gunicorn worker) is among ``port``'s listeners."""
    if pid is None:
        return False
    return pid in listener_pids(port)


def log_tail(path: Path, lines: int = 40, max_bytes: int = 64 * 1024) -> str:
    """The last ``lines`` lines of a service log (so a start-up failure explains itself in CI output),
    read from its last ``max_bytes`` bytes; a log that is no regular file (a device) is not read."""
    try:
        with open(path, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return f"(the log {path} is not a file)"
            f.seek(max(0, os.fstat(f.fileno()).st_size - max_bytes))
            return "\n".join(f.read().decode(errors="replace").splitlines()[-lines:])
    except OSError as e:
        return f"(log unreadable: {e})"


def ended_services(settings: Settings) -> dict[str, str]:
    """The services of the stack in ``settings.data_dir`` (by their pid files in ``run/``) whose
    process has ended, as ``{name: how}`` ("exited with 1", "killed by SIGKILL", "ended"); {} while
    all run. A test session checks it before each test, so a worker that died (the kernel's OOM killer,
    a crash) fails the tests at once instead of letting each one wait out its time-outs against it."""
    ended = {}
    for pidfile in sorted((settings.data_dir / "run").glob("*.pid")):
        try:
            pid = int(pidfile.read_text())
        except (OSError, ValueError):
            continue
        try:
            got, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not our child, or reaped already
            got, status = 0, None
        if got == pid:
            code = os.waitstatus_to_exitcode(status)
            ended[pidfile.stem] = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with {code}"
        elif not pid_alive(pid):
            ended[pidfile.stem] = "ended"
    return ended

