"""Starts and stops the whole stack on one machine: embedded Postgres and NATS (unless
``DATABASE_URL`` / ``NATS_URL`` are set) and the five services, each its own process.

Logs go to ``<data_dir>/logs/<service>.log``, pid files to ``<data_dir>/run/``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from . import bus, db, embedded
from .settings import Settings

SERVICES = ["ask", "ingest", "transcribe", "index", "gateway"]


def service_env(settings: Settings) -> dict[str, str]:
    """Environment for the service processes: resolved store URLs plus this process's settings."""
    env = dict(os.environ)
    env["DATABASE_URL"] = embedded.database_url(settings)
    env["NATS_URL"] = embedded.nats_url(settings)
    env["LC_DATA_DIR"] = str(settings.data_dir)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _health_urls(s: Settings) -> dict[str, str]:
    return {
        "ask": f"http://127.0.0.1:{s.health_port_ask}/healthz",
        "ingest": f"http://{s.ingest_host}:{s.ingest_port}/readyz",
        "transcribe": f"http://127.0.0.1:{s.health_port_transcribe}/readyz",
        "index": f"http://127.0.0.1:{s.health_port_index}/readyz",
        "gateway": f"http://{s.gateway_host}:{s.gateway_port}/readyz",
    }


def _ensure_stream(settings: Settings, url: str) -> None:
    import asyncio

    import nats

    async def go():
        nc = await nats.connect(url)
        try:
            await bus.ensure_stream(nc.jetstream(), settings.stream)
        finally:
            await nc.close()

    asyncio.run(go())


def up(settings: Settings, *, timeout_s: float = 180.0, quiet: bool = False) -> dict[str, subprocess.Popen]:
    """Starts every service (skipping ones whose pid is alive) and waits until all are healthy.

    Raises ``RuntimeError`` naming the service and its log when one does not come up.
    """
    env = service_env(settings)
    db.apply_schema(env["DATABASE_URL"])
    _ensure_stream(settings, env["NATS_URL"])
    logs = settings.data_dir / "logs"
    run = settings.data_dir / "run"
    logs.mkdir(parents=True, exist_ok=True)
    run.mkdir(parents=True, exist_ok=True)
    procs: dict[str, subprocess.Popen] = {}
    for name in SERVICES:
        pidfile = run / f"{name}.pid"
        if pidfile.exists() and _alive(int(pidfile.read_text())):
            continue
        log = open(logs / f"{name}.log", "ab")
        p = subprocess.Popen([sys.executable, "-m", f"services.{name}"], env=env, stdout=log, stderr=log,
                             start_new_session=True, cwd=str(Path(__file__).resolve().parent.parent))
        pidfile.write_text(str(p.pid))
        procs[name] = p
    urls = _health_urls(settings)
    deadline = time.time() + timeout_s
    for name, url in urls.items():
        while True:
            try:
                if requests.get(url, timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            p = procs.get(name)
            if (p is not None and p.poll() is not None) or time.time() > deadline:
                raise RuntimeError(f"service {name} did not become healthy; see {logs / (name + '.log')}")
            time.sleep(0.3)
        if not quiet:
            print(f"  {name:<10} up ({url})")
    return procs


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def down(settings: Settings, *, stop_embedded: bool = True) -> None:
    """Stops the services (SIGTERM, then SIGKILL after 10 s) and the embedded stores."""
    run = settings.data_dir / "run"
    pids = []
    for name in SERVICES:
        pidfile = run / f"{name}.pid"
        if pidfile.exists():
            try:
                pid = int(pidfile.read_text())
                os.killpg(pid, signal.SIGTERM)
                pids.append(pid)
            except (ProcessLookupError, ValueError, PermissionError):
                pass
            pidfile.unlink(missing_ok=True)
    deadline = time.time() + 10
    for pid in pids:
        while _alive(pid) and time.time() < deadline:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            time.sleep(0.1)
        if _alive(pid):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if stop_embedded:
        if not settings.nats_url:
            embedded.stop_embedded_nats(settings)
        if not settings.database_url:
            embedded.stop_embedded_postgres(settings)
