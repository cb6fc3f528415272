"""Local ports: free ones for the services of a test or benchmark stack (``make up``, tests, benchmarks),
whether one is taken and by whom, and the error that says so (:class:`PortTaken`); whether a process
still runs (:func:`pid_alive`) and how one is stopped (:func:`stop_processes`), so that the port it
held is free again."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Iterable


def free_port() -> int:
    """A port free now on 127.0.0.1, chosen below the kernel's range for outgoing connections
    (``ip_local_port_range``, 32768–60999 by default on Linux). A port the kernel hands out for
    ``bind(0)`` lies in that range, so any outgoing connection (to Postgres, to NATS) may take it
    between this check and the service's own bind: a test stack's ask service once failed to start
    with EADDRINUSE that way. Falls back to ``bind(0)`` when 50 random tries find nothing free."""
    import random
    import socket

    try:
        first = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first = 32768
    for _ in range(50):
        port = random.randint(20000, max(20001, first - 1))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_ports(n: int) -> list[int]:
    """``n`` ports free now (:func:`free_port`), no two the same: each call of :func:`free_port`
    reserves nothing, so a stack's seven calls may draw one port twice (CI once did: the stack then
    meets its own port taken)."""
    ports: list[int] = []
    while len(ports) < n:
        if (port := free_port()) not in ports:
            ports.append(port)
    return ports


class PortTaken(RuntimeError):
    """A port the stack needs is held by another process: names the port, what needed it and the
    setting that moves it (and ``LC_PORT_OFFSET``, which moves every port of the stack); ``hint``, a
    sentence said before that advice (another stack's: how to use it instead)."""

    def __init__(self, port: int, what: str, setting: str, host: str = "127.0.0.1", holder: str = "",
                 hint: str = ""):
        self.port, self.what, self.setting = port, what, setting
        by = f" ({holder})" if holder else ""
        super().__init__(
            f"port {port} on {host} is taken by another process{by}, so {what} cannot listen there.{hint} Stop that "
            f"process, or move this stack off it: {setting}=<free port> moves this one port, LC_PORT_OFFSET=<n> "
            f"adds n to every port of the stack (e.g. LC_PORT_OFFSET=100 make up: the gateway on "
            f"{8080 + 100}); the offset is kept in the data folder, so later commands use it too.")


def port_free(host: str, port: int) -> bool:
    """True when a server could listen on ``host:port`` now: a test bind with ``SO_REUSEADDR`` (as
    the services bind), so a port left in TIME_WAIT by a stopped stack counts as free and one another
    process listens on (on this address or on all of them) does not."""
    import socket

    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError:
        return True  # an address we cannot resolve: the service's own bind will say so
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError:
            return False
    return True


def listener_pids(port: int) -> list[int]:
    """The pids of this machine's processes listening on TCP ``port`` that this user may look into
    (from ``/proc``; [] elsewhere or when none is visible): for a message naming who holds a port."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f[9])
    if not inodes:
        return []
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                link = os.readlink(fd)
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    pids.append(int(proc.name))
                    break
        except OSError:
            continue
    return sorted(pids)


def describe_pid(pid: int) -> str:
    """``pid 123: python -m http.server 8080`` (its command line from ``/proc``, cut at 80 characters)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmd = ""
    return f"pid {pid}: {cmd[:80]}" if cmd else f"pid {pid}"


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a dead child of ours is reaped, and another's that its parent has not
    reaped yet, a zombie, is not mistaken for alive either)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _signal(pid: int, sig: int, group: bool) -> bool:
    """Sends ``sig`` to ``pid`` (to its process group with ``group``); False when there is no such
    process or it is not ours to signal."""
    try:
        (os.killpg if group else os.kill)(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _wait_gone(pids: list[int], deadline: float, poll_s: float) -> list[int]:
    """``pids`` still running at ``deadline`` (``time.monotonic()``), polled every ``poll_s`` seconds;
    returns as soon as none runs."""
    alive = [p for p in pids if pid_alive(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(poll_s)
        alive = [p for p in alive if pid_alive(p)]
    return alive


def stop_processes(pids: Iterable[int], timeout_s: float = 10.0, *, group: bool = False,
                   poll_s: float = 0.05) -> list[int]:
    """Ends the processes ``pids`` and waits until they have: SIGTERM to each (with ``group``, to the
    process group it leads, as a process started with ``start_new_session=True`` does: its children
    too), then SIGKILL to those still running ``timeout_s`` seconds later (one deadline for all, so
    they shut down side by side), then up to 1 s more for the killed ones to be gone. A pid that
    runs no more, or is not ours to signal, is passed over; a child of ours is reaped (see
    :func:`pid_alive`). Returns the pids still running at the end: none, unless a process could not
    be killed (not ours, or stuck in the kernel). Raises nothing for a process that is gone."""
    signalled = [p for p in pids if _signal(p, signal.SIGTERM, group)]
    stubborn = _wait_gone(signalled, time.monotonic() + timeout_s, poll_s)
    for p in stubborn:
        _signal(p, signal.SIGKILL, group)
    return _wait_gone(stubborn, time.monotonic() + 1.0, poll_s)


def stop_process(pid: int, timeout_s: float = 10.0, *, group: bool = False) -> bool:
    """Ends one process as :func:`stop_processes` does (SIGTERM; SIGKILL after ``timeout_s``
    seconds); True when it is gone on return."""
    return not stop_processes([pid], timeout_s, group=group)
