"""Serving a Flask app with gunicorn (threaded workers stream SSE responses as they are written)."""

from __future__ import annotations

from gunicorn.app.base import BaseApplication


class _App(BaseApplication):
    def __init__(self, factory, options: dict):
        self._factory = factory
        self._options = options
        super().__init__()

    def load_config(self):
        for key, value in self._options.items():
            self.cfg.set(key, value)

    def load(self):
        return self._factory()


def run_wsgi(factory, *, host: str, port: int, threads: int = 16, timeout_s: int = 600) -> None:
    """Runs ``factory()``'s WSGI app under gunicorn: one gthread worker, ``threads`` threads.

    One worker keeps the models and pools of a process single; scale with more processes.
    """
    _App(factory, {"bind": f"{host}:{port}", "workers": 1, "worker_class": "gthread", "threads": threads,
                   "timeout": timeout_s, "graceful_timeout": 10, "accesslog": None, "errorlog": "-",
                   "loglevel": "info"}).run()
