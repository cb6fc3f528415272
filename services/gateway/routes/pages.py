"""The web client's pages (one HTML shell; the client routes on the path), the site icon, the
health checks and the OpenAPI document."""

from __future__ import annotations

from flask import Blueprint, current_app

from .. import openapi, security, store
from ..context import STATIC, ctx
from ..contract import returns

bp = Blueprint("pages", __name__)

PAGES = ("/", "/courses/<path:rest>", "/signin", "/auth/verify", "/manage", "/manage/<path:rest>",
         "/help", "/contact", "/admin")


def page(**_) -> object:
    """The single-page shell (``static/index.html``) with this request's CSP nonce."""
    return security.page(STATIC / "index.html")


for _rule in PAGES:
    bp.add_url_rule(_rule, f"page:{_rule}", page)


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
