"""The web client's pages (one HTML shell; the client routes on the path), the site icon, the
health checks and the OpenAPI document."""

from __future__ import annotations

import grpc
import psycopg
from flask import Blueprint, current_app

from lecturecopilot.ask.v1 import ask_pb2
from lecturecopilot.health import pid_header

from .. import openapi, responses as out, security, store
from ..access import course_row
from ..context import STATIC, ctx
from ..contract import returns
from ..errors import ApiError

bp = Blueprint("pages", __name__)

PAGES = ("/", "/signin", "/auth/verify", "/manage", "/manage/<path:rest>", "/help", "/contact", "/admin")


def page(**_) -> object:
    """The single-page shell (``static/index.html``) with this request's CSP nonce."""
    return security.page(STATIC / "index.html")


for _rule in PAGES:
    bp.add_url_rule(_rule, f"page:{_rule}", page)


@bp.get("/courses/<path:rest>")
def course_page(rest: str):
    """A course's page (``/courses/<course_id>[/practice]``): the shell, with the status
    ``GET /api/courses/<course_id>`` answers the viewer, so an unknown course (or one private to
    others) is a 404 page, which the shell shows as not found (503 while Postgres is unreachable)."""
    resp = page()
    try:
        course_row(rest.split("/", 1)[0])
    except ApiError as e:
        resp.status_code = e.status
    except psycopg.OperationalError:
        resp.status_code = 503
    return resp


@bp.get("/favicon.ico")
def favicon():
    """The site icon where browsers look for it without a <link rel="icon"> (static/favicon.ico,
    the same picture as static/favicon.svg)."""
    return current_app.send_static_file("favicon.ico")


# how long /readyz waits for ask's answer: under the 1 s a Kubernetes probe waits by default
ASK_READY_TIMEOUT_S = 0.8


@bp.get("/healthz")
@returns(out.Ok)
def healthz():
    """Alive: ``{"ok": true}``, naming the process (``LC-Pid``, :data:`~lecturecopilot.health.PID_HEADER`)."""
    return {"ok": True}, 200, pid_header()


@bp.get("/readyz")
@returns(out.Ok)
@returns(out.Error, 503, description="not ready: `database_unavailable` or `ask_unavailable` (with Retry-After)")
def readyz():
    """Ready: ``{"ok": true}`` (naming the process, ``LC-Pid``) when Postgres answers (else 503
    ``database_unavailable``) and ask answers a call (an empty ``Embed``, which runs no model) within
    :data:`ASK_READY_TIMEOUT_S` (else 503 ``ask_unavailable``): a gateway whose every question
    would fail is not ready (Kubernetes sends it no traffic meanwhile)."""
    store.ping(ctx().pool)
    try:
        ctx().ask.Embed(ask_pb2.EmbedRequest(), timeout=ASK_READY_TIMEOUT_S)
    except grpc.RpcError as e:
        raise ApiError(503, "ask_unavailable", f"The answering service does not answer ({e.code().name}).",
                       headers={"Retry-After": "5"}) from None
    return {"ok": True}, 200, pid_header()


@bp.get("/api/openapi.json")
@returns(description="this document (OpenAPI 3.1)")
def openapi_document():
    """The HTTP API as an OpenAPI 3.1 document, generated from the routes and their models (once per app)."""
    if "openapi" not in current_app.extensions:
        current_app.extensions["openapi"] = openapi.document(current_app)
    return current_app.extensions["openapi"]
