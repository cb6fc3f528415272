"""Accounts for the web client: sign-in by emailed link, server-side sessions, roles.

Tokens (sign-in links, session ids) are random (``secrets``); only their SHA-256 is stored.
The session cookie is Flask's signed session (itsdangerous) holding the session id; the row
in ``web_sessions`` decides whether it is still valid (sign-out deletes it). Roles live in
``users``; emails in ``LC_ADMIN_EMAILS`` become admins when they sign in.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid

from psycopg_pool import ConnectionPool

from lecturecopilot.settings import Settings

from . import accounts_store
from .auth import Principal
from .emails import normal_email



def _sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def server_secret(settings: Settings) -> bytes:
    """``LC_SECRET_KEY``, else a random secret kept in ``<data_dir>/secret_key`` (mode 600)."""
    if settings.secret_key:
        return settings.secret_key.encode()
    f = settings.data_dir / "secret_key"
    if not f.exists():
        f.write_text(secrets.token_urlsafe(48))
        f.chmod(0o600)
    return f.read_text().strip().encode()


def new_login_token(pool: ConnectionPool, email: str, minutes: float) -> str:
    """Creates a single-use sign-in token for ``email`` valid ``minutes``; returns the token."""
    token = secrets.token_urlsafe(32)
    accounts_store.save_login_token(pool, _sha(token), email, minutes)
    return token


def signin_link(pool: ConnectionPool, settings: Settings, email: str) -> str:
    """A single-use sign-in link (``LC_PUBLIC_URL``/auth/verify?token=…, valid ``LC_LOGIN_LINK_MINUTES``)
    for ``email``: what the sign-in mail carries, and what ``lecture-copilot signin-link`` prints for an
    operator whose server sends no mail. Raises ``ValueError`` when ``email`` is not an address."""
    address = normal_email(email)
    if address is None:
        raise ValueError(f"{email!r} is not an email address")
    token = new_login_token(pool, address, settings.login_link_minutes)
    return f"{settings.public_url.rstrip('/')}/auth/verify?token={token}"


def consume_login_token(pool: ConnectionPool, token: str) -> str | None:
    """Marks the token used and returns its email; None when unknown, expired or already used."""
    if not isinstance(token, str) or not token or len(token) > 200:
        return None
    return accounts_store.use_login_token(pool, _sha(token))


def ensure_user(pool: ConnectionPool, email: str, admin_emails: set[str] | frozenset[str]) -> str:
    """Creates the user (role student, or admin when listed) if new, makes a listed one admin and an
    admin no longer listed a student; returns the current role."""
    if email not in admin_emails:
        accounts_store.demote(pool, email, "admin")
    return accounts_store.ensure_user(pool, email, email in admin_emails)


def create_session(pool: ConnectionPool, email: str, days: float) -> str:
    """A new session for ``email``; returns its id (to keep in the signed cookie)."""
    sid = secrets.token_urlsafe(32)
    accounts_store.save_session(pool, _sha(sid), email, secrets.token_urlsafe(32), days)
    return sid


def session_principal(pool: ConnectionPool, sid, admin_emails: frozenset[str] = frozenset()) -> tuple[Principal, str] | None:
    """``(principal, csrf_token)`` of a live session id, else None. The admin role is LC_ADMIN_EMAILS':
    an admin whose address is no longer listed is a student again from this request on."""
    if not isinstance(sid, str) or not sid:
        return None
    row = accounts_store.session_user(pool, _sha(sid))
    if row is None:
        return None
    role = row["role"]
    if role == "admin" and row["email"].lower() not in admin_emails:
        accounts_store.demote(pool, row["email"], "admin")
        role = "student"
    return Principal(role, row["email"]), row["csrf_token"]


def end_session(pool: ConnectionPool, sid) -> None:
    """Deletes the session (sign-out)."""
    if isinstance(sid, str) and sid:
        accounts_store.delete_session(pool, _sha(sid))


def request_role(pool: ConnectionPool, email: str, reason: str | None) -> dict:
    """Files a pending instructor-access request (one pending per person); returns it as JSON."""
    return role_request_json(accounts_store.file_role_request(pool, str(uuid.uuid4()), email, reason))


def role_request_json(r: dict) -> dict:
    """A ``role_requests`` row as JSON: ``{"id", "email", "role", "reason", "status", "created_at"}`` (ISO 8601)."""
    return {"id": str(r["id"]), "email": r["email"], "role": r["role"], "reason": r["reason"],
            "status": r["status"], "created_at": r["created_at"].isoformat()}


def decide_role_request(pool: ConnectionPool, request_id: str, approve: bool, admin_email: str) -> dict | None:
    """Approves (the user becomes an instructor, unless already admin) or denies a pending
    request; returns it, or None when there is no such pending request."""
    row = accounts_store.decide_role_request(pool, request_id, approve, admin_email)
    return role_request_json(row) if row else None
