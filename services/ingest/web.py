"""What ingest's HTTP routes share: the service's parts (:class:`Ingest`, on the app), the JSON
error body, the one place errors become answers, and the bounds on request bodies."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import psycopg
from flask import Flask, Request, current_app, jsonify, request
from werkzeug.exceptions import HTTPException
from werkzeug.formparser import FormDataParser

from lecturecopilot import httpserve
from lecturecopilot.points import PointWriter
from lecturecopilot.settings import Settings
from lecturecopilot.storage import MediaStore

from .errors import IngestError
from .spool import GuardedSpool
from .store import IngestStore

log = logging.getLogger("services.ingest")
# ingest's own bounds on a body lie this far beyond the gateway's, so that the gateway, which
# faces the client, is the one that drops a slow upload and says why
BOUND_MARGIN_S = 30.0


@dataclass
class Ingest:
    """The parts the routes use: settings, the rows, the media files, and ``publish(subject,
    data, msg_id)`` onto the bus."""

    settings: Settings
    records: IngestStore
    store: MediaStore
    publish: Callable[[str, bytes, str], None]
    points: PointWriter | None = None  # with QDRANT_URL: the search points a deletion removes


class _StrictFormParser(FormDataParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{**kwargs, "silent": False})


class StrictFormRequest(Request):
    """Flask's request whose multipart form raises ``ValueError`` when it cannot be parsed (no
    boundary, not multipart, cut off before its end): werkzeug's parser is silent by default, so such
    a form read as an empty one and the upload was refused as ``missing_file``. Its file parts are
    spooled in the media store, keeping the upload reserve (:class:`~.spool.GuardedSpool`)."""

    form_data_parser_class = _StrictFormParser

    def _get_file_stream(self, total_content_length, content_type, filename=None, content_length=None):
        parts = ingest()
        return GuardedSpool(parts.store.root, parts.settings.upload_disk_reserve_bytes)


def ingest() -> Ingest:
    """The :class:`Ingest` of the app serving this request (set by :func:`install`)."""
    return current_app.extensions["ingest"]


def err(status: int, code: str, message: str, headers: dict | None = None, extra: dict | None = None):
    """The answer ``{"error": {"code", "message", **extra}}`` with ``status`` and ``headers``."""
    return jsonify({"error": {"code": code, "message": message, **(extra or {})}}), status, headers or {}


def _ingest_error(e: IngestError):
    return err(e.status, e.code, str(e), e.headers, e.extra)


def _http_error(e: HTTPException):
    return err(e.code or 500, (e.name or "error").lower().replace(" ", "_"), e.description or e.name)


def _internal(e: Exception):
    log.exception("unhandled error in %s %s", request.method, request.path)
    return err(500, "internal", "Something went wrong on our side.")  # JSON, as the gateway relays it


def _db_down(e: psycopg.OperationalError):
    log.warning("database unavailable in %s %s: %s (SQLSTATE %s): %s", request.method, request.path,
                type(e).__name__, getattr(e, "sqlstate", None), e)
    return err(503, "database_unavailable", "The database is not reachable; try again shortly.", {"Retry-After": "5"})


# the endpoints whose bodies are uploads, and the setting that bounds each (seconds)
_UPLOAD_BODIES = {"lectures.upload": "upload_timeout_s", "uploads.resumable_chunk": "upload_chunk_timeout_s"}


def _body_bounds() -> None:
    """Gives an upload's body its time bound (the gateway's plus :data:`BOUND_MARGIN_S`)."""
    settings = ingest().settings
    timeout = _UPLOAD_BODIES.get(request.endpoint)
    if timeout is not None:
        httpserve.set_body_limits(request.environ, timeout_s=getattr(settings, timeout) + BOUND_MARGIN_S,
                                  stall_s=settings.upload_stall_s + BOUND_MARGIN_S)


def install(app: Flask, parts: Ingest) -> None:
    """Puts ``parts`` on ``app``, maps errors to JSON answers (:class:`IngestError` → its status and
    code, an HTTP error → its status, an unreachable database → 503 with ``Retry-After``, anything
    else → 500 ``internal``, logged) and
    bounds upload bodies in time (every body: ``LC_BODY_TIMEOUT_S``; an upload's: its own)."""
    settings = parts.settings
    app.extensions["ingest"] = parts
    app.request_class = StrictFormRequest
    app.config["MAX_CONTENT_LENGTH"] = settings.max_upload_bytes + 10 * 1024 * 1024
    app.register_error_handler(IngestError, _ingest_error)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(psycopg.OperationalError, _db_down)
    app.register_error_handler(Exception, _internal)
    app.before_request(_body_bounds)
    app.wsgi_app = httpserve.bounded_bodies(app.wsgi_app, timeout_s=settings.body_timeout_s + BOUND_MARGIN_S,
                                            stall_s=settings.upload_stall_s + BOUND_MARGIN_S)
