"""Clients that stop reading a response (the hostile probe's 16 sockets that never read a public
video held every gateway thread; /healthz went unanswered for minutes): each send waits at most
``send_timeout_s`` for the client, then the connection is closed and its thread is free. The real
gunicorn worker of the services (``lecturecopilot.httpserve.run_wsgi``) serves a large response."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
import requests

from lecturecopilot_ops.stack import _free_port, wait_until_up

pytestmark = pytest.mark.slow

SIZE = 64 * 1024 * 1024  # far more than a socket's buffers hold
THREADS, SEND_TIMEOUT_S = 4, 2.0
SERVER = f"""
import logging
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
from lecturecopilot.httpserve import ServerLimits, run_wsgi
BLOCK = b"x" * 65536

def app(environ, start_response):
    if environ["PATH_INFO"] == "/healthz":
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]
    start_response("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", "{SIZE}")])
    return (BLOCK for _ in range({SIZE} // 65536))

run_wsgi(lambda: app, host="127.0.0.1", port=int(__import__("sys").argv[1]),
         limits=ServerLimits(threads={THREADS}, send_timeout_s={SEND_TIMEOUT_S}))
"""


def _serve() -> tuple[subprocess.Popen, int]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], stderr=subprocess.PIPE, text=True)
    if not wait_until_up(f"http://127.0.0.1:{port}/healthz", proc, 30, own=False):  # its app sends no LC-Pid
        proc.kill()
        raise RuntimeError(f"the test server did not start: {proc.communicate()[1][-2000:]}")
    return proc, port


def test_clients_that_stop_reading_lose_their_connection_and_free_their_thread():
    proc, port = _serve()
    socks = []
    try:
        for _ in range(2 * THREADS):  # twice the threads: before, each held one until it read or left
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            socks.append(s)
        time.sleep(SEND_TIMEOUT_S + 2)  # every stalled send has passed its bound
        t0 = time.monotonic()
        r = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=15)
        waited = time.monotonic() - t0
        assert r.status_code == 200 and waited < 2.0, f"a plain request waited {waited:.1f} s"
        for s in socks:  # each stalled response was cut: what the client can still read ends well short of it
            s.settimeout(10)
            got = 0
            try:
                while chunk := s.recv(1 << 20):
                    got += len(chunk)
            except (ConnectionResetError, socket.timeout):
                pass
            assert got < SIZE, got
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "stopped reading its response" in err, err[-2000:]
    assert "Traceback" not in err, err[-2000:]


def test_clients_that_never_close_do_not_hold_up_the_server():
    """gunicorn closes a finished "Connection: close" request in its main loop, waiting up to 2 s for
    the client's FIN: 8 clients that read their answer and never closed held up every other client
    for 16 s. The wait is now in the connection's own thread, and half a second."""
    proc, port = _serve()
    socks = []
    try:
        for _ in range(2 * THREADS):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert s.recv(1024).startswith(b"HTTP/1.1 200")
            socks.append(s)  # kept open: it never sends its FIN
        t0 = time.monotonic()
        for _ in range(3):
            assert requests.get(f"http://127.0.0.1:{port}/healthz", timeout=20).status_code == 200
        waited = time.monotonic() - t0
        assert waited < 1.5, f"three plain requests took {waited:.1f} s"  # 16 s before
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        proc.communicate(timeout=20)
