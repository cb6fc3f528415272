"""Accounts for the web client: sign-in by emailed link, server-side sessions, roles.

Tokens (sign-in links, session ids) are random (``secrets``); only their SHA-256 is stored.
The session cookie is Flask's signed session (itsdangerous) holding the session id; the row
in ``web_sessions`` decides whether it is still valid (sign-out deletes it). Roles live in
``users``; emails in ``LC_ADMIN_EMAILS`` become admins when they sign in.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid

from psycopg_pool import ConnectionPool

from lecturecopilot.settings import Settings

from .auth import Principal

EMAIL_RE = re.compile(r"^[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f]+\.[^@\s\x00-\x1f\x7f]{2,}$")  # no control chars


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


def normal_email(value) -> str | None:
    """The email lower-cased and stripped, or None when it does not look like an address."""
    if not isinstance(value, str):
        return None
    value = value.strip().lower()
    return value if len(value) <= 254 and EMAIL_RE.match(value) else None


def new_login_token(pool: ConnectionPool, email: str, minutes: float) -> str:
    """Creates a single-use sign-in token for ``email`` valid ``minutes``; returns the token."""
    token = secrets.token_urlsafe(32)
    with pool.connection() as conn:
        conn.execute("INSERT INTO login_tokens (token_sha256, email, expires_at) "
                     "VALUES (%s, %s, now() + make_interval(secs => %s))", (_sha(token), email, minutes * 60))
    return token


def consume_login_token(pool: ConnectionPool, token: str) -> str | None:
    """Marks the token used and returns its email; None when unknown, expired or already used."""
    if not isinstance(token, str) or not token or len(token) > 200:
        return None
    with pool.connection() as conn:
        row = conn.execute("UPDATE login_tokens SET used_at=now() WHERE token_sha256=%s AND used_at IS NULL "
                           "AND expires_at > now() RETURNING email", (_sha(token),)).fetchone()
    return row["email"] if row else None


def ensure_user(pool: ConnectionPool, email: str, admin_emails: set[str]) -> str:
    """Creates the user (role student, or admin when listed) if new; returns the current role."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO users (email, role) VALUES (%s, %s) ON CONFLICT (email) DO NOTHING",
                     (email, "admin" if email in admin_emails else "student"))
        if email in admin_emails:
            conn.execute("UPDATE users SET role='admin' WHERE email=%s", (email,))
        return conn.execute("SELECT role FROM users WHERE email=%s", (email,)).fetchone()["role"]


def create_session(pool: ConnectionPool, email: str, days: float) -> str:
    """A new session for ``email``; returns its id (to keep in the signed cookie)."""
    sid = secrets.token_urlsafe(32)
    with pool.connection() as conn:
        conn.execute("INSERT INTO web_sessions (id_sha256, email, csrf_token, expires_at) "
                     "VALUES (%s, %s, %s, now() + make_interval(secs => %s))",
                     (_sha(sid), email, secrets.token_urlsafe(32), days * 86400))
    return sid


def session_principal(pool: ConnectionPool, sid) -> tuple[Principal, str] | None:
    """``(principal, csrf_token)`` of a live session id, else None."""
    if not isinstance(sid, str) or not sid:
        return None
    with pool.connection() as conn:
        row = conn.execute("SELECT u.email, u.role, s.csrf_token FROM web_sessions s JOIN users u USING (email) "
                           "WHERE s.id_sha256=%s AND s.expires_at > now()", (_sha(sid),)).fetchone()
    return (Principal(row["role"], row["email"]), row["csrf_token"]) if row else None


def end_session(pool: ConnectionPool, sid) -> None:
    """Deletes the session (sign-out)."""
    if isinstance(sid, str) and sid:
        with pool.connection() as conn:
            conn.execute("DELETE FROM web_sessions WHERE id_sha256=%s", (_sha(sid),))


def request_role(pool: ConnectionPool, email: str, reason: str | None) -> dict:
    """Files a pending instructor-access request (one pending per person); returns it as JSON."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO users (email) VALUES (%s) ON CONFLICT DO NOTHING", (email,))
        row = conn.execute("SELECT * FROM role_requests WHERE email=%s AND status='pending'", (email,)).fetchone()
        if row is None:
            row = conn.execute("INSERT INTO role_requests (id, email, reason) VALUES (%s, %s, %s) "
                               "ON CONFLICT DO NOTHING RETURNING *", (str(uuid.uuid4()), email, reason)).fetchone() \
                or conn.execute("SELECT * FROM role_requests WHERE email=%s AND status='pending'", (email,)).fetchone()
    return role_request_json(row)


def role_request_json(r: dict) -> dict:
    """A ``role_requests`` row as JSON: ``{"id", "email", "role", "reason", "status", "created_at"}`` (ISO 8601)."""
    return {"id": str(r["id"]), "email": r["email"], "role": r["role"], "reason": r["reason"],
            "status": r["status"], "created_at": r["created_at"].isoformat()}


def decide_role_request(pool: ConnectionPool, request_id: str, approve: bool, admin_email: str) -> dict | None:
    """Approves (the user becomes an instructor, unless already admin) or denies a pending
    request; returns it, or None when there is no such pending request."""
    with pool.connection() as conn:
        with conn.transaction():
            row = conn.execute("UPDATE role_requests SET status=%s, decided_by=%s, decided_at=now() "
                               "WHERE id=%s AND status='pending' RETURNING *",
                               ("approved" if approve else "denied", admin_email, request_id)).fetchone()
            if row and approve:
                conn.execute("UPDATE users SET role='instructor' WHERE email=%s AND role='student'", (row["email"],))
    return role_request_json(row) if row else None
