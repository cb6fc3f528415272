"""Accounts: who is signed in (``/api/me``), sign-in by emailed link, sessions, instructor-role
requests (filed by anyone signed in, decided by admins) and the contact form."""

from __future__ import annotations

import logging

from flask import Blueprint, Response, g, jsonify, request, session

from .. import accounts, accounts_store, limits, responses as out, schemas
from ..access import a_uuid, limited, person, require
from ..context import ctx
from ..contract import accepts, returns
from ..errors import ApiError

log = logging.getLogger("services.gateway")
bp = Blueprint("accounts", __name__)


@bp.get("/api/me")
@returns(out.Me)
def me():
    """Who makes the request, their CSRF token (a session's) and their latest role request."""
    p = g.principal
    if p is None:
        return {"signed_in": False, "role": None, "email": None, "csrf_token": None, "role_request": None}
    req = accounts_store.latest_role_request(ctx().pool, p.email)
    return {"signed_in": True, "role": p.role, "email": p.email, "via": g.via, "csrf_token": g.csrf,
            "role_request": accounts.role_request_json(req) if req else None}


def _mail_link(email: str, link: str) -> None:
    """Mails the sign-in ``link``; ApiError 503 ``mail_unavailable`` / ``mail_off``."""
    s = ctx().settings
    try:
        sent = ctx().mail(email, "Your Lecture Copilot sign-in link",
                         f"Open this link to sign in to Lecture Copilot:\n\n{link}\n\n"
                         f"It works once, for {s.login_link_minutes:g} minutes. If you did not ask "
                         "for it, ignore this mail.\n")
    except Exception:
        log.exception("sending the sign-in link failed")
        raise ApiError(503, "mail_unavailable", "The sign-in mail could not be sent; try again shortly.") from None
    if not sent:
        raise _mail_off()


def _mail_off() -> ApiError:
    """The 503 ``mail_off`` of a server that sends no mail, naming the operator's way round it."""
    return ApiError(503, "mail_off", "Sign-in by email is not configured on this server (LC_SMTP_HOST). "
                    "Its operator can make you a sign-in link: lecture-copilot signin-link --email <address>.")


@bp.post("/api/auth/magic-link")
@accepts(schemas.MagicLink)
@returns(out.Sent, 202)
def magic_link(body: schemas.MagicLink):
    """Mails a single-use sign-in link (``LC_LOGIN_LINK_MINUTES``); 202 whether or not the
    address is known, 429 past ``LC_SIGNIN_LIMIT`` links an hour per visitor (or per address), 503
    ``mail_off`` on a server that sends no mail (before anything is counted or a link is made)."""
    c = ctx()
    email = accounts.normal_email(body.email)
    if email is None:
        raise ApiError(400, "invalid_email", "'email' must be an email address.", extra={"field": "email"})
    if not c.settings.smtp_host:
        raise _mail_off()
    visitor = limits.person_key(c.secret, None, request.remote_addr)
    address = limits.person_key(c.secret, email, None)  # and per address: no mail-bombing from many IPs
    limited([(f"signin:{visitor}", limits.HOUR_S, c.settings.signin_limit),
             (f"signin-to:{address}", limits.HOUR_S, c.settings.signin_limit)], "sign-in links")
    _mail_link(email, accounts.signin_link(c.pool, c.settings, email))
    return jsonify({"sent": True}), 202


@bp.post("/api/auth/verify")
@accepts(schemas.Verify)
@returns(out.SignedIn)
def verify(body: schemas.Verify):
    """Exchanges a sign-in token for a session cookie: 200 ``{"email", "role"}``, 400 when the
    link is unknown, used or expired."""
    c = ctx()
    email = accounts.consume_login_token(c.pool, body.token)
    if email is None:
        raise ApiError(400, "invalid_link", "This sign-in link is not valid any more; ask for a new one.")
    role = accounts.ensure_user(c.pool, email, c.admin_emails)
    old = session.get("sid")
    if old:
        accounts.end_session(c.pool, old)
    session.clear()
    session["sid"] = accounts.create_session(c.pool, email, c.settings.session_days)
    session.permanent = True
    return {"email": email, "role": role}


@bp.post("/api/auth/logout")
@returns(None, 204, media="")
def logout():
    """Ends the session (sign-out)."""
    accounts.end_session(ctx().pool, session.get("sid"))
    session.clear()
    return Response(status=204)


@bp.post("/api/role-requests")
@accepts(schemas.RoleRequest)
@returns(out.RoleRequestOut, 201)
def create_role_request(body: schemas.RoleRequest):
    """Asks for instructor access (a student); 409 ``already_instructor`` otherwise."""
    p = require("student", "instructor", "admin")
    if p.role != "student":
        raise ApiError(409, "already_instructor", f"You already have the {p.role} role.")
    return jsonify(accounts.request_role(ctx().pool, p.email, body.reason)), 201


@bp.get("/api/role-requests")
@returns(out.RoleRequests)
def list_role_requests():
    """The pending requests, oldest first (admins)."""
    require("admin")
    return {"requests": [accounts.role_request_json(r) for r in accounts_store.pending_role_requests(ctx().pool)]}


@bp.post("/api/role-requests/<request_id>/<decision>")
@returns(out.RoleRequestOut)
def decide_role_request(request_id: str, decision: str):
    """``decision`` is ``approve`` (the person becomes an instructor) or ``deny`` (admins)."""
    p = require("admin")
    if decision not in ("approve", "deny"):
        raise ApiError(404, "not_found", "Use /approve or /deny.")
    r = accounts.decide_role_request(ctx().pool, a_uuid(request_id, "request"), decision == "approve", p.email)
    if r is None:
        raise ApiError(404, "not_found", "No pending request with this id.")
    return r


@bp.post("/api/contact")
@accepts(schemas.Contact)
@returns(out.Sent, 202)
def contact(body: schemas.Contact):
    """Mails the operator (``LC_OPERATOR_EMAIL``): ``{"email", "message", "name"?}`` → 202;
    ``LC_CONTACT_LIMIT`` messages a day per person (429 beyond). A server with no operator address
    has no contact form: 404 ``contact_off`` (a setting, not a failure: no 5xx, nothing to retry)."""
    s = ctx().settings
    email = accounts.normal_email(body.email) if body.email else (g.principal.email if g.principal else None)
    if email is None:
        raise ApiError(400, "invalid_email", "'email' must be an email address we can answer.",
                       extra={"field": "email"})
    name = body.name or ""
    if not s.operator_email:  # before counting: a refused message uses up nothing
        raise ApiError(404, "contact_off", "This server has no contact form: its operator has not set an address "
                                           "for it (LC_OPERATOR_EMAIL).")
    limited([(f"contact:{person()}", limits.DAY_S, s.contact_limit)], "messages today")
    try:
        ctx().mail(s.operator_email, f"Lecture Copilot contact: {name or email}"[:150],
                   f"From: {name} <{email}>\n\n{body.message}\n")
    except Exception:
        log.exception("sending a contact message failed")
        raise ApiError(503, "mail_unavailable", "The message could not be sent; try again shortly.") from None
    return jsonify({"sent": True}), 202
