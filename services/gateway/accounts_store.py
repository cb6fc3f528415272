"""The gateway's SQL of accounts (rows come back as dicts): users, sign-in links (``login_tokens``),
web sessions, API tokens and role requests, all the gateway's own tables. As :mod:`.store`, each
function takes the pool, runs on one connection and returns plain rows or values (a missing row is
None, never an exception). Tokens and session ids are stored by their SHA-256 only: the callers
(``accounts.py``, ``auth.py``) hash them."""

from __future__ import annotations

from psycopg_pool import ConnectionPool


# -- role requests (read side; accounts.py files and decides them) ---------------------------
def latest_role_request(pool: ConnectionPool, email: str) -> dict | None:
    """The newest ``role_requests`` row of ``email``, or None."""
    with pool.connection() as conn:
        return conn.execute("SELECT * FROM role_requests WHERE email=%s ORDER BY created_at DESC LIMIT 1",
                            (email,)).fetchone()


def pending_role_requests(pool: ConnectionPool) -> list[dict]:
    """The pending ``role_requests`` rows, oldest first."""
    with pool.connection() as conn:
        return conn.execute("SELECT * FROM role_requests WHERE status='pending' ORDER BY created_at").fetchall()


# -- accounts: sign-in links, sessions, users, role requests (accounts.py) --------------------
def save_login_token(pool: ConnectionPool, token_sha256: str, email: str, minutes: float) -> None:
    """Stores a sign-in token (its hash) for ``email``, valid ``minutes``."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO login_tokens (token_sha256, email, expires_at) "
                     "VALUES (%s, %s, now() + make_interval(secs => %s))", (token_sha256, email, minutes * 60))


def use_login_token(pool: ConnectionPool, token_sha256: str) -> str | None:
    """Marks the token used and returns its email; None when unknown, expired or already used."""
    with pool.connection() as conn:
        row = conn.execute("UPDATE login_tokens SET used_at=now() WHERE token_sha256=%s AND used_at IS NULL "
                           "AND expires_at > now() RETURNING email", (token_sha256,)).fetchone()
    return row["email"] if row else None


def ensure_user(pool: ConnectionPool, email: str, admin: bool) -> str:
    """Creates the user (role student, or admin) if new, makes an ``admin`` one admin; returns the role."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO users (email, role) VALUES (%s, %s) ON CONFLICT (email) DO NOTHING",
                     (email, "admin" if admin else "student"))
        if admin:
            conn.execute("UPDATE users SET role='admin' WHERE email=%s", (email,))
        return conn.execute("SELECT role FROM users WHERE email=%s", (email,)).fetchone()["role"]


def user_role(pool: ConnectionPool, email: str) -> str | None:
    """The role of the account ``email`` (``admin``, ``instructor`` or ``student``), None when there is none."""
    with pool.connection() as conn:
        row = conn.execute("SELECT role FROM users WHERE email=%s", (email,)).fetchone()
    return row["role"] if row else None


def save_session(pool: ConnectionPool, sid_sha256: str, email: str, csrf_token: str, days: float) -> None:
    """Stores a web session (its id's hash) of ``email`` with its CSRF token, valid ``days``."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO web_sessions (id_sha256, email, csrf_token, expires_at) "
                     "VALUES (%s, %s, %s, now() + make_interval(secs => %s))",
                     (sid_sha256, email, csrf_token, days * 86400))


def session_user(pool: ConnectionPool, sid_sha256: str) -> dict | None:
    """``{"email", "role", "csrf_token"}`` of a live session, else None."""
    with pool.connection() as conn:
        return conn.execute("SELECT u.email, u.role, s.csrf_token FROM web_sessions s JOIN users u USING (email) "
                            "WHERE s.id_sha256=%s AND s.expires_at > now()", (sid_sha256,)).fetchone()


def delete_session(pool: ConnectionPool, sid_sha256: str) -> None:
    """Deletes a web session (sign-out)."""
    with pool.connection() as conn:
        conn.execute("DELETE FROM web_sessions WHERE id_sha256=%s", (sid_sha256,))


def file_role_request(pool: ConnectionPool, request_id: str, email: str, reason: str | None) -> dict:
    """The pending ``role_requests`` row of ``email``, filed now (as ``request_id``) if there was none."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO users (email) VALUES (%s) ON CONFLICT DO NOTHING", (email,))
        pending = "SELECT * FROM role_requests WHERE email=%s AND status='pending'"
        return conn.execute(pending, (email,)).fetchone() or conn.execute(
            "INSERT INTO role_requests (id, email, reason) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING RETURNING *",
            (request_id, email, reason)).fetchone() or conn.execute(pending, (email,)).fetchone()


def decide_role_request(pool: ConnectionPool, request_id: str, approve: bool, admin_email: str) -> dict | None:
    """Approves (a student becomes an instructor) or denies a pending request, in one transaction;
    the row, or None when there is no such pending request."""
    with pool.connection() as conn:
        with conn.transaction():
            row = conn.execute("UPDATE role_requests SET status=%s, decided_by=%s, decided_at=now() "
                               "WHERE id=%s AND status='pending' RETURNING *",
                               ("approved" if approve else "denied", admin_email, request_id)).fetchone()
            if row and approve:
                conn.execute("UPDATE users SET role='instructor' WHERE email=%s AND role='student'", (row["email"],))
    return row


# -- API tokens (auth.py) ---------------------------------------------------------------------
def save_api_token(pool: ConnectionPool, token_sha256: str, role: str, email: str, days: int) -> None:
    """Stores an API token (its hash) of ``email`` with ``role``, valid for ``days`` days; an instructor's
    makes the account an instructor too (created if new; an admin stays admin)."""
    with pool.connection() as conn:
        conn.execute("INSERT INTO api_tokens (token_sha256, role, email, expires_at) "
                     "VALUES (%s,%s,%s, now() + make_interval(days => %s))", (token_sha256, role, email, days))
        if role == "instructor":
            conn.execute("INSERT INTO users (email, role) VALUES (%s, 'instructor') ON CONFLICT (email) DO UPDATE "
                         "SET role='instructor' WHERE users.role='student'", (email,))


def api_token(pool: ConnectionPool, token_sha256: str) -> dict | None:
    """``{"role", "email"}`` of an API token that has not expired, else None."""
    with pool.connection() as conn:
        return conn.execute("SELECT role, email FROM api_tokens WHERE token_sha256=%s "
                            "AND (expires_at IS NULL OR expires_at > now())", (token_sha256,)).fetchone()


def delete_api_tokens(pool: ConnectionPool, email: str) -> int:
    """Deletes every API token of ``email`` (lower-cased, as stored); how many there were."""
    with pool.connection() as conn:
        return conn.execute("DELETE FROM api_tokens WHERE email=%s", (email.lower(),)).rowcount


def delete_sessions_of(pool: ConnectionPool, email: str) -> int:
    """Ends every web session of ``email`` (lower-cased, as stored); how many there were."""
    with pool.connection() as conn:
        return conn.execute("DELETE FROM web_sessions WHERE lower(email)=%s", (email.lower(),)).rowcount


def demote(pool: ConnectionPool, email: str, role: str) -> bool:
    """A user of ``role`` becomes a ``student`` again (an admin no longer listed in LC_ADMIN_EMAILS, an
    instructor whose tokens were revoked); True when one did."""
    with pool.connection() as conn:
        return conn.execute("UPDATE users SET role='student' WHERE email=%s AND role=%s RETURNING email",
                            (email, role)).fetchone() is not None
