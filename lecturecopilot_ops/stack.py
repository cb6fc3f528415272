"""Starts and stops the whole stack on one machine: embedded Postgres and NATS (unless
``DATABASE_URL`` / ``NATS_URL`` are set) and the five services, each its own process, kept running
by a supervisor (:mod:`lecturecopilot_ops.supervisor`) that starts a service again when it ends.

Logs go to ``<data_dir>/logs/<service>.log``, pid files to ``<data_dir>/run/``. A service counts as
up when *its* process answers its health URL (the answer's ``LC-Pid`` header names the pid in its pid
file), not when any program on its port answers 200; a port another process holds is an error that
names the port and the setting that moves it (:class:`~lecturecopilot.netports.PortTaken`).
"""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager
import subprocess
import time
from pathlib import Path

import requests

from lecturecopilot import bus, db, embedded
from lecturecopilot.netports import free_port as _free_port  # noqa: F401 (the name the tests and benchmarks import)
from lecturecopilot.netports import free_ports
from lecturecopilot.netports import stop_processes
from lecturecopilot.settings import Settings, keep_port_offset, kept_port_offset

from . import supervisor
from .running import (SERVICES, check_ports, client_host, ended_services, log_tail, pid_alive,  # noqa: F401
                      running_names, service_pid, spawn_service, wait_healthy, wait_until_up)


def admin_token(settings: Settings) -> str:
    """The operator's admin token: ``LC_ADMIN_TOKEN`` if set, else the one kept in
    ``<data_dir>/admin_token`` (created on first use, mode 600), so it survives restarts."""
    if settings.admin_token:
        return settings.admin_token
    import secrets

    f = settings.data_dir / "admin_token"
    if not f.exists():
        f.write_text("lc_admin_" + secrets.token_urlsafe(24))
        f.chmod(0o600)
    return f.read_text().strip()


def service_env(settings: Settings) -> dict[str, str]:
    """Environment for the service processes: resolved store URLs plus this process's settings."""
    env = dict(os.environ)
    env["LC_ADMIN_TOKEN"] = admin_token(settings)
    env["DATABASE_URL"] = embedded.database_url(settings)
    env["NATS_URL"] = embedded.nats_url(settings)
    env["LC_DATA_DIR"] = str(settings.data_dir)
    env["LC_PORT_OFFSET"] = str(settings.port_offset)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _ensure_stream(settings: Settings, url: str) -> None:
    import asyncio

    async def go():
        nc = await bus.connect(url, name="lecture-copilot-stack", settings=settings)
        try:
            await bus.publish_retrying(
                lambda: bus.ensure_stream(nc.jetstream(), settings.stream, settings.stream_replicas),
                settings.publish_retry_s)
        finally:
            await nc.close()

    asyncio.run(go())


def up(settings: Settings, *, timeout_s: float = 180.0, quiet: bool = False,
       supervise: bool | None = None) -> dict[str, subprocess.Popen]:
    """Starts every service (skipping ones whose pid is alive) and waits until each is healthy:
    its own process answers its health URL. With ``supervise`` a supervisor
    (:mod:`lecturecopilot_ops.supervisor`) starts them and starts again any that ends; without (test
    stacks, which fail at once when a service ends) they are started here. Unset (``make up``,
    ``process``, ``demo``): supervised, unless the data folder's services run already without a
    supervisor (a test session's stack, whose missing service is then started here). Keeps the port
    offset in the data folder (:func:`~lecturecopilot.settings.keep_port_offset`). Returns the
    processes started here (the supervisor's, or the services').

    Raises :class:`~lecturecopilot.netports.PortTaken` when another process holds a port the stack
    needs (checked before anything starts, and again when a service fails to start), ``RuntimeError``
    naming the service and its log when one does not come up, or when a stack already runs in this
    data folder at another port offset.
    """
    run = settings.data_dir / "run"
    logs = settings.data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    run.mkdir(parents=True, exist_ok=True)
    _same_offset(settings)
    check_ports(settings)
    env = service_env(settings)  # starts the embedded stores (PortTaken for NATS's port)
    db.apply_schema(env["DATABASE_URL"])
    _ensure_stream(settings, env["NATS_URL"])
    keep_port_offset(settings)
    procs: dict[str, subprocess.Popen] = {}
    if _supervised(settings, supervise):
        sup = supervisor.start(settings, env, timeout_s)
        if sup is not None:
            procs["supervisor"] = sup
    else:
        for name in SERVICES:
            pid = service_pid(settings, name)
            if pid is None or not pid_alive(pid):
                procs[name] = spawn_service(settings, name, env)
    wait_healthy(settings, procs, time.time() + timeout_s, quiet)
    return procs


def _supervised(settings: Settings, supervise: bool | None) -> bool:
    """``supervise``, or when unset: a supervisor runs, or was started for this stack (``run/supervised``,
    until ``down``), or none of its services runs (a fresh start)."""
    if supervise is not None:
        return supervise
    running = set(running_names(settings))
    return "supervisor" in running or not running or (settings.data_dir / "run" / "supervised").exists()


def _same_offset(settings: Settings) -> None:
    """``RuntimeError`` when this data folder's stack runs at another port offset than ``settings``'."""
    kept = kept_port_offset(settings.data_dir)
    if kept != settings.port_offset and running_names(settings):
        raise RuntimeError(f"the stack in {settings.data_dir} runs with LC_PORT_OFFSET={kept}, not "
                           f"{settings.port_offset}: stop it first (make down) to move it")


def down(settings: Settings, *, stop_embedded: bool = True) -> None:
    """Stops the supervisor (so that it starts nothing again), the services (SIGTERM, then SIGKILL
    after 10 s) and the embedded stores."""
    run = settings.data_dir / "run"
    supervisor.stop(settings)
    (run / "supervised").unlink(missing_ok=True)
    pids = []
    for name in SERVICES:
        pidfile = run / f"{name}.pid"
        if pidfile.exists():
            try:
                pids.append(int(pidfile.read_text()))
            except ValueError:
                pass
            pidfile.unlink(missing_ok=True)
    stop_processes(pids, 10.0, group=True)
    if stop_embedded:
        if not settings.nats_url:
            embedded.stop_embedded_nats(settings)
        if not settings.database_url:
            embedded.stop_embedded_postgres(settings)


# -- an ephemeral stack for tests, evals and benchmarks -----------------------------------

def _reachable(host: str, port: int) -> bool:
    import socket

    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


async def _drop_lecture_streams(url: str, name: str) -> None:
    nc = await bus.connect(url, name="lecture-copilot-stack")
    try:
        js = nc.jetstream()
        for info in await js.streams_info():
            subjects = info.config.subjects or []
            if info.config.name == name or any(x.startswith("lecture.") for x in subjects):
                await js.delete_stream(info.config.name)
    finally:
        await nc.close()


class Ephemeral:
    """A running throw-away stack: ``base`` URL, ``admin`` headers, resolved store URLs."""

    def __init__(self, settings: Settings, db_url: str, nats_url: str, admin_token: str):
        self.settings = settings
        self.base = f"http://127.0.0.1:{settings.gateway_port}"
        self.db_url = db_url
        self.nats_url = nats_url
        self.admin = {"Authorization": f"Bearer {admin_token}"}

    def create_course(self, title: str) -> str:
        r = requests.post(f"{self.base}/api/courses", json={"title": title}, headers=self.admin, timeout=10)
        if r.status_code != 201:
            raise RuntimeError(f"creating a course failed: {r.status_code} {r.text}")
        return r.json()["id"]

    def wait_ready(self, lecture_id: str, timeout_s: float = 300) -> dict:
        deadline = time.time() + timeout_s
        st: dict = {}
        while time.time() < deadline:
            st = requests.get(f"{self.base}/api/lectures/{lecture_id}", timeout=10).json()
            if st["status"] in ("ready", "failed"):
                return st
            time.sleep(0.3)
        raise TimeoutError(f"lecture {lecture_id} not ready after {timeout_s} s: {st}")


def _test_env(data_dir: Path, whisper_model: str, admin_token: str, extra_env: dict | None,
              whisper_beam_size: int | None = 1) -> dict[str, str]:
    """The environment of an ephemeral stack: its data dir, stream, free ports, test-sized limits,
    then ``extra_env``. ``whisper_beam_size`` None leaves the product's beam width."""
    gateway_port, ingest, ask, health_transcribe, health_index, health_ask, nats = free_ports(7)
    beam = {} if whisper_beam_size is None else {"LC_WHISPER_BEAM_SIZE": str(whisper_beam_size)}
    return {
        "LC_DATA_DIR": str(data_dir), "LC_STREAM": "LC_TEST", "LC_WHISPER_MODEL": whisper_model, **beam,
        "LC_ADMIN_TOKEN": admin_token, "LC_GATEWAY_PORT": str(gateway_port),
        "LC_PUBLIC_URL": f"http://127.0.0.1:{gateway_port}", "LC_INGEST_PORT": str(ingest),
        "LC_ASK_PORT": str(ask), "LC_HEALTH_PORT_TRANSCRIBE": str(health_transcribe),
        "LC_HEALTH_PORT_INDEX": str(health_index), "LC_HEALTH_PORT_ASK": str(health_ask),
        "LC_EMBEDDED_NATS_PORT": str(nats), "LC_ACK_WAIT_S": "20", "LC_MAX_DELIVER": "3",
        # tests and evals ask hundreds of questions from 127.0.0.1; rate-limit tests start a gateway of their own
        "LC_ASK_LIMIT_VISITOR": "1000000", "LC_ASK_LIMIT_USER": "1000000", "LC_ASK_LIMIT_VISITOR_TOTAL": "1000000",
        "LC_ASK_LIMIT_USER_TOTAL": "1000000", "LC_SIGNIN_LIMIT": "1000000", "LC_CONTACT_LIMIT": "1000000",
        "LC_SEARCH_LIMIT_VISITOR": "1000000", "LC_SEARCH_LIMIT_USER": "1000000", "LC_FEEDBACK_LIMIT": "1000000",
        # tests race a dozen uploads at once; the relay cap has a test with a gateway of its own
        "LC_UPLOAD_RELAYS_MAX": "16",
        **(extra_env or {}),
    }


def _machine_stores(env: dict[str, str], dbname: str) -> str | None:
    """Points ``env`` at the machine's Postgres (a new database ``dbname``, created here) and NATS
    when they answer on 127.0.0.1 (NATS not with ``LC_TEST_NATS=embedded``, Postgres not with
    ``LC_TEST_PG=embedded``: the embedded one has pgvector, the machine's 15 none); returns the admin URL
    of that Postgres (to drop the database afterwards), or None when the embedded one is used."""
    import psycopg

    admin_url = None
    if os.environ.get("LC_TEST_PG") != "embedded" and _reachable("127.0.0.1", 5432):
        admin_url = "postgresql://postgres@127.0.0.1:5432/postgres"
        with psycopg.connect(admin_url, autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{dbname}"')
        env["DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/{dbname}"
    if "NATS_URL" not in env and os.environ.get("LC_TEST_NATS") != "embedded" and _reachable("127.0.0.1", 4222):
        env["NATS_URL"] = "nats://127.0.0.1:4222"
    return admin_url


def _stopper(settings: Settings, env: dict[str, str], nats_url: str, admin_url: str | None, dbname: str):
    """A function that stops the services and drops the stream and the database (any order of
    calls, once)."""
    import asyncio

    import psycopg

    def stop_stack() -> None:
        if getattr(stop_stack, "done", False):
            return
        stop_stack.done = True
        down(settings)
        if "NATS_URL" in env:  # an embedded server is stopped by down(), its stream with it
            try:
                asyncio.run(asyncio.wait_for(_drop_lecture_streams(nats_url, settings.stream), 20))
            except Exception:
                pass
        if admin_url:
            with psycopg.connect(admin_url, autocommit=True) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')

    return stop_stack


def _stop_on_sigterm(stop_stack):
    """In the main thread, installs a SIGTERM handler that runs ``stop_stack`` and then dies of the
    signal as the process would have; returns the previous handler (None: nothing installed)."""
    import threading

    def on_sigterm(signum, frame):
        try:
            stop_stack()
        finally:
            signal.signal(signum, previous if previous not in (None, on_sigterm) else signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, on_sigterm)
    return previous


@contextmanager
def ephemeral(data_dir: Path, *, whisper_model: str = "tiny.en", whisper_beam_size: int | None = 1,
              extra_env: dict | None = None):
    """Starts a whole stack in ``data_dir`` on free ports and yields an :class:`Ephemeral`.

    Speech recognition is test-sized by default (``tiny.en``, greedy: ``whisper_beam_size`` 1); a
    benchmark of the product passes ``whisper_model="base"`` and ``whisper_beam_size=None`` (the
    product's beam width, ``LC_WHISPER_BEAM_SIZE``).

    Uses the machine's Postgres (127.0.0.1:5432, a new database, dropped afterwards) and NATS
    (127.0.0.1:4222, its own stream) when they answer, else embedded ones; ``LC_TEST_NATS=embedded``
    forces an embedded nats-server on a free port, so two test sessions can run side by side
    (sessions sharing the machine's NATS drop each other's ``lecture.*`` streams). Restores the
    environment and stops everything on exit, also when the process gets SIGTERM (``kill``, a CI
    time-out): left running, its services would keep consuming the next session's events.
    Raises ``RuntimeError`` when a service does not come up (see :func:`up`).
    """
    import asyncio
    import secrets
    import uuid

    admin_token = "lc_test_" + secrets.token_urlsafe(12)
    dbname = f"lc_test_{uuid.uuid4().hex[:10]}"
    env = _test_env(data_dir, whisper_model, admin_token, extra_env, whisper_beam_size)
    admin_url = _machine_stores(env, dbname)
    # forced embedded: not the URL another stack of this process put in the environment (a second
    # stack inside a test session would share the session's stream and drop it)
    forced = [k for k, flag in (("NATS_URL", "LC_TEST_NATS"), ("DATABASE_URL", "LC_TEST_PG"))
              if k not in env and os.environ.get(flag) == "embedded"]
    old = {k: os.environ.get(k) for k in [*env, *forced]}
    for k in forced:
        os.environ.pop(k, None)
    os.environ.update(env)
    settings = Settings()
    settings.data_dir = settings.data_dir.resolve()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    nats_url = embedded.nats_url(settings)
    asyncio.run(_drop_lecture_streams(nats_url, settings.stream))
    stop_stack = _stopper(settings, env, nats_url, admin_url, dbname)
    previous = _stop_on_sigterm(stop_stack)
    try:
        up(settings, quiet=True, timeout_s=240, supervise=False)
        yield Ephemeral(settings, embedded.database_url(settings), nats_url, admin_token)
    finally:
        stop_stack()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
