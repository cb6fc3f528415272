"""The web client's pages (one HTML shell; the client routes on the path), the site icon, the
health checks and the OpenAPI document."""

from __future__ import annotations

import psycopg
from flask import Blueprint, current_app

from .. import openapi, security, store
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


@bp.get("/healthz")
def healthz():
    """Alive: ``{"ok": true}``."""
    return {"ok": True}


@bp.get("/readyz")
def readyz():
    """Ready: ``{"ok": true}`` when Postgres answers (503 ``database_unavailable`` otherwise)."""
    store.ping(ctx().pool)
    return {"ok": True}


@bp.get("/api/openapi.json")
@returns(description="this document (OpenAPI 3.1)")
def openapi_document():
    """The HTTP API as an OpenAPI 3.1 document, generated from the routes and their models (once per app)."""
    if "openapi" not in current_app.extensions:
        current_app.extensions["openapi"] = openapi.document(current_app)
    return current_app.extensions["openapi"]
