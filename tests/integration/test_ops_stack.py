"""``make up`` as an operator meets it (issue 31, items 6 and 7), each test a stack of its own started
with the real CLI (``python -m lecturecopilot up``) in a temporary data folder, on ports no other stack
uses, and stopped with ``down``:

- a port another process holds (answering HTTP 200, or in NATS's place) is an error naming the port and
  the setting that moves it, not "gateway up";
- one setting, ``LC_PORT_OFFSET``, moves every port, and a command in another shell (without it) finds the
  running stack's ports in the data folder: ``signin-link`` links to it, ``down`` stops it;
- a service that ends is started again by the supervisor, which says so; meanwhile the gateway's
  ``/readyz`` says ask does not answer, and questions are answered again as soon as ask is back; ask's
  log on a full device (``/dev/full``) does not stop it serving.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
import requests

from lecturecopilot.netports import free_ports, pid_alive, port_free
from lecturecopilot_ops.running import SERVICES
from web_helpers import upload_captions

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PORTS = {"LC_GATEWAY_PORT": 8080, "LC_INGEST_PORT": 8081, "LC_ASK_PORT": 50051, "LC_HEALTH_PORT_TRANSCRIBE": 8091,
         "LC_HEALTH_PORT_INDEX": 8092, "LC_HEALTH_PORT_ASK": 8093, "LC_EMBEDDED_NATS_PORT": 4223}
# what this session's own stack put in the environment, or a developer's shell: none of it may leak in
FOREIGN = ("DATABASE_URL", "NATS_URL", "QDRANT_URL", "GROQ_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
           "OPENAI_API_KEY", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")


def _cli(env: dict, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lecturecopilot", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _free_offset() -> int:
    """An offset (10000-15000) whose seven ports are free now."""
    for _ in range(200):
        n = random.randint(100, 150) * 100
        if all(port_free("127.0.0.1", p + n) for p in PORTS.values()):
            return n
    raise RuntimeError("no free port offset")


@contextlib.contextmanager
def _data_folder(tmp_path: Path, **env):
    """A clean environment for the CLI (nothing of this session's stack), its data folder under
    ``tmp_path``, the machine's Postgres when it answers (a database of its own, dropped at the end;
    else the embedded one), the embedded NATS; stops whatever it started at the end."""
    data = tmp_path / "data"
    (data / "logs").mkdir(parents=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "OTEL_")) and k not in FOREIGN}
    base.update({"LC_DATA_DIR": str(data), "LC_WHISPER_MODEL": "tiny.en", "PYTHONUNBUFFERED": "1", **env})
    admin_url, dbname = None, f"lc_ops_{random.randrange(16**8):08x}"
    if os.environ.get("LC_TEST_PG") != "embedded" and not port_free("127.0.0.1", 5432):
        admin_url = "postgresql://postgres@127.0.0.1:5432/postgres"
        with psycopg.connect(admin_url, autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{dbname}"')
        base["DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/{dbname}"
    try:
        yield base
    finally:
        _cli(base, "down", timeout=120)
        for f in (data / "run").glob("*.pid"):  # whatever down did not stop (a version without a supervisor)
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.killpg(int(f.read_text()), signal.SIGKILL)
        if admin_url:
            with psycopg.connect(admin_url, autocommit=True) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


@contextlib.contextmanager
def _answering_200(port: int):
    """Another program on ``port``: an HTTP server that answers 200 ``ok`` to every GET."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _explicit_ports() -> dict[str, str]:
    """Every port of a stack set on its own, each free now and no two the same (a stack that ignored
    LC_PORT_OFFSET would otherwise start on the default ports, maybe another stack's; ``free_port``
    reserves nothing, so two calls may draw one port: CI once drew the NATS port for ingest too, and
    ``up`` named the ingest port where the test expected the NATS one)."""
    return {var: str(port) for var, port in zip(PORTS, free_ports(len(PORTS)))}


def _pids(data: Path) -> dict[str, int]:
    return {f.stem: int(f.read_text()) for f in (data / "run").glob("*.pid")}


@pytest.mark.parametrize("taken", ["LC_GATEWAY_PORT", "LC_EMBEDDED_NATS_PORT"])
def test_up_names_a_port_another_process_holds(tmp_path, taken):
    """Item 7: another process answering HTTP 200 on the gateway's port (or listening on the embedded
    NATS server's) stops ``up`` with an error naming that port and the settings that move it; it was
    reported "gateway up" (and "Open http://…") while our gateway's log said "Address already in use"."""
    ports = _explicit_ports()
    port = int(ports[taken])
    with _answering_200(port), _data_folder(tmp_path, **ports) as env:
        try:
            r = _cli(env, "up", timeout=150)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"up did not finish with port {port} taken; it wrote: {(e.stderr or b'')[-1500:]!r}")
        assert r.returncode == 1, r.stdout + r.stderr
        assert f"port {port} " in r.stderr and taken in r.stderr and "LC_PORT_OFFSET" in r.stderr, r.stderr
        assert "another process" in r.stderr and f"pid {os.getpid()}" in r.stderr, r.stderr  # and who holds it
        assert "Open http" not in r.stdout and " up (" not in r.stdout, r.stdout
        assert not _pids(tmp_path / "data"), "services started although a port was taken"


def test_one_setting_moves_every_port_and_another_shell_finds_the_stack(tmp_path):
    """Item 7: ``LC_PORT_OFFSET`` alone moves all seven ports; ``up`` keeps it in the data folder, so
    ``signin-link`` in a shell without it links to this stack's gateway (not 8080) and ``down`` there
    stops this stack."""
    n = _free_offset()
    with _data_folder(tmp_path, LC_PORT_OFFSET=str(n)) as env:
        # a version without the setting would start this stack on the default ports, maybe another stack's
        probe = subprocess.run([sys.executable, "-c", "from lecturecopilot.settings import Settings; "
                                "print(Settings().gateway_port)"], cwd=ROOT, env=env, capture_output=True, text=True)
        assert probe.stdout.strip() == str(8080 + n), f"LC_PORT_OFFSET={n} does not move the gateway: {probe}"
        r = _cli(env, "up")
        assert r.returncode == 0, r.stdout + r.stderr
        gateway = f"http://127.0.0.1:{8080 + n}"
        assert f"Open {gateway}/" in r.stdout, r.stdout
        data = tmp_path / "data"
        assert (data / "port_offset").read_text().strip() == str(n)
        pids = _pids(data)
        assert set(SERVICES) | {"supervisor"} <= set(pids), pids
        health = {"gateway": f"{gateway}/readyz", "ingest": f"http://127.0.0.1:{8081 + n}/readyz",
                  "ask": f"http://127.0.0.1:{8093 + n}/healthz", "transcribe": f"http://127.0.0.1:{8091 + n}/readyz",
                  "index": f"http://127.0.0.1:{8092 + n}/readyz"}
        for name, url in health.items():  # each on its moved port, answered by its own process
            got = requests.get(url, timeout=5)
            assert got.status_code == 200 and got.headers.get("LC-Pid") == str(pids[name]), (name, got.headers)
        assert not port_free("127.0.0.1", 50051 + n) and not port_free("127.0.0.1", 4223 + n)  # ask, NATS

        # a command with another data folder (run in another folder: .lc-data there) on the same ports is
        # told that this stack holds them, and how to use it instead (a newcomer ran `process` from /tmp)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        second = subprocess.run([sys.executable, "-m", "lecturecopilot", "up"], cwd=elsewhere, capture_output=True,
                                text=True, timeout=150, env={k: v for k, v in env.items() if k != "LC_DATA_DIR"})
        assert second.returncode == 1, second.stdout + second.stderr
        assert f"another data folder, {data}" in second.stderr and f"LC_DATA_DIR={data}" in second.stderr, second.stderr
        assert str(elsewhere / ".lc-data") in second.stderr, second.stderr  # its own, absolute

        other_shell = {k: v for k, v in env.items() if k != "LC_PORT_OFFSET"}
        link = _cli(other_shell, "signin-link", "--email", "second.shell@example.edu", timeout=60)
        assert link.returncode == 0, link.stderr
        assert link.stdout.startswith(f"{gateway}/auth/verify?token="), link.stdout
        token = link.stdout.strip().split("token=", 1)[1]
        assert requests.post(f"{gateway}/api/auth/verify", json={"token": token}, timeout=10).status_code == 200

        stopped = _cli(other_shell, "down", timeout=120)
        assert stopped.returncode == 0, stopped.stderr
        assert not [name for name, pid in pids.items() if pid_alive(pid)], "down from another shell left these running"
        assert port_free("127.0.0.1", 8080 + n) and port_free("127.0.0.1", 4223 + n)


def _ask(gateway: str, course: str, admin: dict) -> requests.Response:
    return requests.post(f"{gateway}/api/courses/{course}/ask", json={"question": "What is a heap?"}, headers=admin,
                         timeout=60)


def _until(check, timeout_s: float, what: str, interval_s: float = 0.25):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        got = check()
        if got:
            return got
        time.sleep(interval_s)
    pytest.fail(f"{what} (waited {timeout_s:g} s)")


def _readyz(gateway: str) -> tuple[int, str]:
    r = requests.get(f"{gateway}/readyz", timeout=5)
    return r.status_code, (r.json().get("error") or {}).get("code", "")


def test_a_service_that_ends_is_started_again_and_the_gateway_is_unready_meanwhile(tmp_path):
    """Item 6: ask's log is on a device that is always full and it still answers; killed (as it ended
    silently on a full disk), the supervisor ``make up`` started says so in its log and starts it again;
    meanwhile the gateway's ``/readyz`` is 503 ``ask_unavailable`` (it said 200 while every question was a
    503), and once ask answers again so do questions (they were 503 for about 30 s more)."""
    ports = _explicit_ports()
    with _data_folder(tmp_path, **ports) as env:
        data = tmp_path / "data"
        (data / "logs" / "ask.log").symlink_to("/dev/full")
        r = _cli(env, "up")
        assert r.returncode == 0, r.stdout + r.stderr
        gateway = f"http://127.0.0.1:{ports['LC_GATEWAY_PORT']}"
        admin = {"Authorization": f"Bearer {(data / 'admin_token').read_text().strip()}"}
        course = requests.post(f"{gateway}/api/courses", json={"title": "Heaps"}, headers=admin, timeout=10).json()["id"]
        lecture = upload_captions(gateway, course, headers=admin)
        assert lecture.status_code == 202, lecture.text
        _until(lambda: requests.get(f"{gateway}/api/lectures/{lecture.json()['lecture_id']}", timeout=10)
               .json()["status"] == "ready", 180, "the lecture was not ready")
        answer = _ask(gateway, course, admin)
        assert answer.status_code == 200 and "heap" in answer.json()["answer"].lower(), answer.text
        assert _readyz(gateway) == (200, "")

        ask_pid = int((data / "run" / "ask.pid").read_text())
        os.kill(ask_pid, signal.SIGKILL)
        _until(lambda: _readyz(gateway) == (503, "ask_unavailable"), 10, "/readyz did not say that ask is gone")
        assert _ask(gateway, course, admin).status_code == 503
        new_pid = _until(lambda: (p := int((data / "run" / "ask.pid").read_text())) != ask_pid and p, 20,
                         "the supervisor did not start ask again")
        log = (data / "logs" / "supervisor.log").read_text()
        assert f"SERVICE ASK (pid {ask_pid}) killed by SIGKILL" in log, log[-2000:]
        _until(lambda: _readyz(gateway) == (200, ""), 180, "/readyz did not come back with ask")
        back = time.time()
        _until(lambda: _ask(gateway, course, admin).status_code == 200, 5, "questions failed after ask was back")
        assert time.time() - back < 5
        assert pid_alive(new_pid)


@pytest.mark.parametrize("command", [("signin-link", "--email", "lost@example.edu"), ("reindex", "--course", "x")])
def test_a_command_in_a_folder_without_a_stack_says_so_and_sets_nothing_up(tmp_path, command):
    """A newcomer ran ``signin-link`` in another folder: it set up an empty embedded Postgres there, left
    its server running and printed a link to a gateway nobody ran."""
    env = {k: v for k, v in os.environ.items() if k not in ("LC_DATA_DIR", "DATABASE_URL", "LC_DATABASE_URL")}
    env["LC_DATA_DIR"] = str(tmp_path / "elsewhere")
    got = _cli(env, *command, timeout=60)
    assert got.returncode == 2 and "no stack's database" in got.stderr and "LC_DATA_DIR" in got.stderr, got
    assert not got.stdout.strip() and not (tmp_path / "elsewhere" / "pg").exists()
