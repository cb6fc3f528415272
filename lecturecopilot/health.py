"""Health and readiness endpoints for the worker services (``/healthz``, ``/readyz``)."""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


# Every /healthz and /readyz answer names the service's process in this header, so that ``up``
# (lecturecopilot_ops.stack) counts a service as up only when its own process answers, not another
# program that happens to answer 200 on the port.
PID_HEADER = "LC-Pid"
# the service's process: the one ``up`` started (pid file); a gunicorn worker answers with its
# arbiter's pid (set by lecturecopilot.httpserve.run_wsgi before the worker forks)
MAIN_PID = os.getpid()


def pid_header() -> dict[str, str]:
    """The header that names this service's process (:data:`PID_HEADER`)."""
    return {PID_HEADER: str(MAIN_PID)}


def serve_health(host: str, port: int, ready: Callable[[], bool]) -> ThreadingHTTPServer:
    """Serves ``GET /healthz`` (200 while the process runs) and ``GET /readyz`` (200 when
    ``ready()`` is true, else 503) on a daemon thread, each with :data:`PID_HEADER`. ``port=0`` picks
    a free port."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server API
            if self.path == "/healthz":
                code = 200
            elif self.path == "/readyz":
                code = 200 if ready() else 503
            else:
                code = 404
            body = b'{"ok": true}' if code == 200 else b'{"ok": false}'
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header(PID_HEADER, str(MAIN_PID))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="health").start()
    return server
