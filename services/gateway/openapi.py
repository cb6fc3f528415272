"""The OpenAPI 3.1 document of the HTTP API, generated from the app's routes under ``/api/`` and
its health probes (:data:`PROBES`), and what their views declare (``contract.py``): the JSON body
model (``@accepts``), other bodies (``@takes``), the answers (``@returns``) and query parameters
(``@query``); the schemas are the pydantic models' own (``model_json_schema``, so a model's bounds
are the document's ``minLength``, ``maximum``, ``enum``...), the descriptions the views' docstrings.
Served at ``GET /api/openapi.json``.

A stream of server-sent events (``text/event-stream``) is described event by event, as OpenAPI
before 3.2 reads a sequential media type's ``schema`` (3.2 calls it ``itemSchema``): an object
``{"event", "data", "id"?, "retry"?}`` whose ``event`` names one of the view's events and whose
``data`` is JSON (``contentMediaType``) of that event's model (``contentSchema``).
"""

from __future__ import annotations

import inspect
import re

from flask import Flask
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from . import responses

VERSION = "1"
PROBES = ("/healthz", "/readyz")  # documented beside /api/: load balancers and Kubernetes ask them
SSE = "text/event-stream"
_PARAM = re.compile(r"<(?:[^:>]+:)?([^>]+)>")


def path_of(rule: str) -> str:
    """A Flask rule as an OpenAPI path: ``/api/courses/<course_id>`` → ``/api/courses/{course_id}``."""
    return _PARAM.sub(r"{\1}", rule)


def documented(rule: str) -> bool:
    """Whether the document describes the Flask route ``rule``: those under ``/api/`` and :data:`PROBES`."""
    return rule.startswith("/api/") or rule in PROBES


def api_operations(app: Flask) -> list[tuple[str, str, object, object]]:
    """``(OpenAPI path, lower-case method, view, rule)`` of every :func:`documented` route, HEAD and OPTIONS aside."""
    ops = []
    for rule in app.url_map.iter_rules():
        if documented(rule.rule):
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
                ops.append((path_of(rule.rule), method.lower(), app.view_functions[rule.endpoint], rule))
    return ops


def _models(ops) -> list[tuple[type[BaseModel], str]]:
    found: dict = {(responses.Error, "serialization"): None}
    for _, _, view, _ in ops:
        if getattr(view, "body_model", None):
            found[(view.body_model, "validation")] = None
        media, form = getattr(view, "request_media", ("", None))
        if form:
            found[(form, "validation")] = None
        for _, model, _, _, events in getattr(view, "responses", []):
            for m in (model, *events.values()):
                if m:
                    found[(m, "serialization")] = None
    return list(found)


def event_schema(events: dict, refs: dict) -> dict:
    """The JSON Schema of one server-sent event of a stream whose ``events`` map names to models."""
    return {"type": "object", "required": ["event", "data"],
            "description": "one server-sent event: `data` is JSON of the event's model",
            "properties": {"event": {"type": "string", "enum": list(events)}, "data": {"type": "string"},
                           "id": {"type": "string"}, "retry": {"type": "integer", "minimum": 0}},
            "oneOf": [{"title": name, "properties": {"event": {"const": name}, "data": {
                "contentMediaType": "application/json", "contentSchema": refs[(model, "serialization")]}}}
                for name, model in events.items()]}


def _content(model, media: str, refs: dict, mode: str, events: dict | None = None) -> dict:
    if model is not None:
        return {media or "application/json": {"schema": refs[(model, mode)]}}
    if events:
        return {media: {"schema": event_schema(events, refs)}}
    return {media: {"schema": {"type": "string"}}} if media else {}


def _parameters(view, rule) -> list[dict]:
    """The path parameters of ``rule`` and the query parameters ``view`` declares (``@query``)."""
    params = [{"name": a, "in": "path", "required": True, "schema": {"type": "string"}} for a in sorted(rule.arguments)]
    for name, spec in getattr(view, "query_params", {}).items():
        desc, schema = spec if isinstance(spec, tuple) else (spec, {"type": "string"})
        params.append({"name": name, "in": "query", "required": False, "description": desc, "schema": schema})
    return params


def _operation(view, rule, refs: dict) -> dict:
    doc = inspect.cleandoc(view.__doc__ or view.__name__)
    op: dict = {"operationId": rule.endpoint.replace(".", "_").replace(":", "_"), "summary": doc.split("\n")[0],
                "description": doc, "tags": [rule.endpoint.split(".")[0]]}
    if params := _parameters(view, rule):
        op["parameters"] = params
    answers: dict = {}
    for status, model, media, desc, events in sorted(getattr(view, "responses", []), key=lambda x: x[0]):
        if not desc:
            desc = (model.__doc__ or model.__name__).split("\n")[0] if model else "no content"
        entry = answers.setdefault(str(status), {"description": desc})
        if content := _content(model, media, refs, "serialization", events):
            entry.setdefault("content", {}).update(content)
    error = {"description": 'an error: {"error": {"code", "message", ...}}',
             "content": {"application/json": {"schema": refs[(responses.Error, "serialization")]}}}
    if getattr(view, "body_model", None):
        op["requestBody"] = {"required": True, "content": _content(view.body_model, "", refs, "validation")}
        answers.setdefault("400", {**error, "description": "the body does not fit (error.field names the field)"})
    elif hasattr(view, "request_media"):
        media, form = view.request_media
        op["requestBody"] = {"required": True, "content": _content(form, media, refs, "validation") if form
                             else {media: {"schema": {"type": "string", "format": "binary"}}}}
    answers["default"] = error
    op["responses"] = answers
    return op


def document(app: Flask) -> dict:
    """The OpenAPI 3.1 document (a JSON-able dict) of ``app``'s :func:`documented` routes."""
    ops = api_operations(app)
    refs, defs = models_json_schema(_models(ops), ref_template="#/components/schemas/{model}")
    paths: dict = {}
    for path, method, view, rule in ops:
        paths.setdefault(path, {})[method] = _operation(view, rule, refs)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Lecture Copilot", "version": VERSION,
                 "description": "Ask questions about a course's recorded lectures; answers cite the moment they "
                                "come from. Errors are JSON {\"error\": {\"code\", \"message\"}}."},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": defs.get("$defs", {}), "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer", "description": "an API token (lecture-copilot mint-token)"},
            "session": {"type": "apiKey", "in": "cookie", "name": "lc_session",
                        "description": "the web client's session; writes also need X-CSRF-Token (GET /api/me)"}}},
        "security": [{}, {"bearer": []}, {"session": []}],
    }
