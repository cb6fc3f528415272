"""Health and readiness endpoints for the worker services (``/healthz``, ``/readyz``)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


def serve_health(host: str, port: int, ready: Callable[[], bool]) -> ThreadingHTTPServer:
    """Serves ``GET /healthz`` (200 while the process runs) and ``GET /readyz`` (200 when
    ``ready()`` is true, else 503) on a daemon thread. ``port=0`` picks a free port."""

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
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="health").start()
    return server
