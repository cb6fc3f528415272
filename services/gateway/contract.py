"""How a view declares its HTTP contract, read by the request path and by the OpenAPI document
(``openapi.py``): the JSON body it takes (:func:`accepts`, validated before the view runs), what
it answers (:func:`returns`) and the query parameters it reads (:func:`query`).

:func:`accepts` reads the request's JSON (at most ``LC_MAX_JSON_BYTES``, finite numbers, no
deeper than Python's parser goes) and validates it against the model with
:func:`schemas.parse <services.gateway.schemas.parse>`; the view gets the model instance as its
``body`` argument. A body that is not a JSON object is 400 ``invalid_json``, one past the cap 413,
one that does not fit the model a :class:`~services.gateway.schemas.BodyError` (400 naming the field).
"""

from __future__ import annotations

import functools
import json
import math
from typing import Callable

from flask import g, request
from pydantic import BaseModel

from . import schemas
from .context import ctx
from .errors import ApiError


def _finite(text: str) -> float:
    """``json.loads``' float parser that refuses numbers out of a double's range (``1e400`` → inf)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:20]}")
    return value


def _no_constant(text: str):
    """``json.loads``' parser for ``NaN`` / ``Infinity``, which JSON (RFC 8259) does not allow."""
    raise ValueError(f"not JSON: {text}")


def too_large(limit: int) -> ApiError:
    """413 ``request_entity_too_large`` for a body over ``limit`` bytes."""
    return ApiError(413, "request_entity_too_large", f"The request body is larger than {limit} bytes.")


def json_object() -> dict:
    """The request's body as a JSON object. Raises ApiError 413 past ``max_json_bytes`` (also for a
    chunked body), 400 ``invalid_json`` when it is not sent as JSON (``Content-Type``) or is not a
    JSON object with finite numbers."""
    limit = ctx().settings.max_json_bytes
    raw = b""
    while chunk := request.stream.read(limit + 1 - len(raw)):
        raw += chunk
        if len(raw) > limit:
            raise too_large(limit)
    if not request.is_json:  # curl -d sends application/x-www-form-urlencoded
        raise ApiError(400, "invalid_json", "Send the body as JSON, with the header Content-Type: application/json.")
    try:
        data = json.loads(raw.decode("utf-8-sig"), parse_float=_finite, parse_constant=_no_constant)
    except UnicodeDecodeError as e:
        raise ApiError(400, "invalid_json", f"The body is not UTF-8 (byte {e.start}); send JSON as UTF-8.") from None
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's parser goes
        data = None
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_json", "The body must be a JSON object (with finite numbers).")
    return data


def accepts(model: type[schemas.Body]) -> Callable:
    """Declares and validates the JSON body of a view: ``@accepts(CourseCreate)`` before
    ``def view(course_id, body: CourseCreate)``. The body is parsed once per request (a view run
    again after a lost database connection gets the same one); ``view.body_model`` names the model."""
    def mark(view: Callable) -> Callable:
        @functools.wraps(view)
        def run(**kw):
            if "body" not in g:
                g.body = schemas.parse(model, json_object())
            return view(**kw, body=g.body)
        run.body_model = model
        return run
    return mark


def returns(model: type[BaseModel] | None = None, status: int = 200, *, media: str = "application/json",
            description: str | None = None, events: dict[str, type[BaseModel]] | None = None) -> Callable:
    """Declares one answer of a view for the OpenAPI document: ``status`` with a body of ``model``
    (JSON) or of ``media`` (e.g. ``text/csv``), or none (``model`` None, media ""). A stream of
    server-sent events (``media="text/event-stream"``) names its ``events``: event name → the
    model of its ``data`` (``events.py``). A status may be declared more than once, with different media."""
    def mark(view: Callable) -> Callable:
        view.responses = [(status, model, media, description, events or {}), *getattr(view, "responses", [])]
        return view
    return mark


def query(**params: str | tuple[str, dict]) -> Callable:
    """Declares the query parameters a view reads (OpenAPI only), each with its description, or a
    ``(description, JSON Schema)`` pair where the view refuses other values (default ``{"type": "string"}``)."""
    def mark(view: Callable) -> Callable:
        view.query_params = {**getattr(view, "query_params", {}), **params}
        return view
    return mark


def takes(media: str, model: type[BaseModel] | None = None) -> Callable:
    """Declares a body that is not JSON (a multipart form, raw bytes) for the OpenAPI document;
    the view reads and checks it itself (uploads stream to ingest, which checks them)."""
    def mark(view: Callable) -> Callable:
        view.request_media = (media, model)
        return view
    return mark
