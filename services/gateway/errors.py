"""The gateway's errors and where they become HTTP answers: every error is JSON
``{"error": {"code", "message", ...}}`` (see README.md, "HTTP API").

- :class:`ApiError` (raised by views and helpers) → its status, code, message, extra fields and headers;
- :class:`~services.gateway.schemas.BodyError` (a body that does not fit its model) → 400 with
  ``error.field``;
- Werkzeug's HTTP exceptions (404 of an unknown path, 405, 413, 416) → their status, the code their
  name (``method_not_allowed``), their own headers (``Allow``, ``Content-Range``); the one exception
  to JSON: a browser's request for an unknown page (:func:`wants_page`) is the web client's page with
  status 404, which says the page is not found and links home;
- ``psycopg.OperationalError`` (Postgres unreachable) → 503 ``database_unavailable``, ``Retry-After: 5``;
- anything else → 500 ``internal`` (logged).

:func:`grpc_error` maps a failed call to ask onto an :class:`ApiError`.
"""

from __future__ import annotations

import logging
from typing import Callable

import grpc
import psycopg
from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from .schemas import BodyError

log = logging.getLogger("services.gateway")


class ApiError(Exception):
    """An error answered as JSON ``{"error": {"code", "message", **extra}}`` with HTTP ``status``
    and ``headers`` (e.g. ``Retry-After``); ``extra`` holds more fields, e.g. ``wait_s``, ``field``."""

    def __init__(self, status: int, code: str, message: str, headers: dict | None = None, extra: dict | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}
        self.extra = extra or {}


def not_found(what: str) -> ApiError:
    """404 ``not_found``: "Unknown <what>."."""
    return ApiError(404, "not_found", f"Unknown {what}.")


def _json(status: int, code: str, message: str, extra: dict | None = None, headers=None):
    return jsonify({"error": {"code": code, "message": message, **(extra or {})}}), status, headers or {}


def wants_page() -> bool:
    """A browser asking for a page: a GET or HEAD outside ``/api/`` whose ``Accept`` prefers HTML to
    JSON (``*/*`` alone, as curl and HTTP libraries send it, is JSON)."""
    return (request.method in ("GET", "HEAD") and not request.path.startswith("/api/")
            and request.accept_mimetypes.best_match(("application/json", "text/html")) == "text/html")


def register(app: Flask, page: Callable[[], Response] | None = None) -> None:
    """Installs the error handlers above on ``app``; ``page`` (the web client's page), when given,
    answers a browser's request for an unknown page with status 404."""

    @app.errorhandler(ApiError)
    def api_error(e: ApiError):
        return _json(e.status, e.code, e.message, e.extra, e.headers)

    @app.errorhandler(BodyError)
    def body_error(e: BodyError):
        return _json(400, e.code, e.message, {"field": e.field})

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException):
        if e.code == 404 and page is not None and wants_page():
            resp = page()
            resp.status_code = 404
            return resp
        # keep Werkzeug's own headers: Content-Range on a 416, Allow on a 405 (not its HTML Content-Type)
        return _json(e.code or 500, (e.name or "error").lower().replace(" ", "_"), e.description or e.name,
                     headers=[(k, v) for k, v in e.get_headers() if k.lower() != "content-type"])

    @app.errorhandler(psycopg.OperationalError)
    def db_down(e: psycopg.OperationalError):
        log.warning("database unavailable in %s %s: %s (SQLSTATE %s): %s", request.method, request.path,
                    type(e).__name__, getattr(e, "sqlstate", None), e)
        return _json(503, "database_unavailable", "The database is not reachable; try again shortly.",
                     headers={"Retry-After": "5"})

    @app.errorhandler(Exception)
    def internal_error(e: Exception):
        log.exception("unhandled error")
        return _json(500, "internal", "Something went wrong on our side.")


def grpc_error(e: grpc.RpcError, *, invalid: str = "invalid_question", exhausted: str = "rate_limited",
               precondition: str = "failed_precondition") -> ApiError:
    """The HTTP error for a failed call to ask: NOT_FOUND 404; INVALID_ARGUMENT 400 ``invalid``;
    RESOURCE_EXHAUSTED 429 ``exhausted`` with Retry-After and ``wait_s`` from the trailing
    ``retry-after-s`` (300 s when absent); FAILED_PRECONDITION 422 ``precondition``; unreachable
    503 ``ask_unavailable``; the call's time-out (DEADLINE_EXCEEDED) 504 ``ask_timeout``, "took too
    long"; anything else 500. The codes name the call's errors (e.g. ``regenerate_too_soon``)."""
    code = e.code()
    if code == grpc.StatusCode.NOT_FOUND:
        return ApiError(404, "not_found", e.details())
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return ApiError(400, invalid, e.details())
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        wait = next((int(v) for k, v in (e.trailing_metadata() or ()) if k == "retry-after-s"), 300)
        return ApiError(429, exhausted, e.details(), headers={"Retry-After": str(wait)}, extra={"wait_s": wait})
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return ApiError(422, precondition, e.details())
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ApiError(504, "ask_timeout", "The answering service took too long; try again.",
                        headers={"Retry-After": "5"})
    if code == grpc.StatusCode.UNAVAILABLE:
        return ApiError(503, "ask_unavailable", "The answering service is not reachable; try again shortly.",
                        headers={"Retry-After": "5"})
    return ApiError(500, "ask_failed", "Answering failed.")
