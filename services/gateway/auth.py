"""Bearer-token auth. ``LC_ADMIN_TOKEN`` (if set) is an admin token; other tokens are minted
by ``lecture-copilot mint-token`` and stored as SHA-256 hashes in ``api_tokens``."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from psycopg_pool import ConnectionPool

from . import store

ROLES = ("admin", "instructor", "student")


@dataclass(frozen=True)
class Principal:
    """Who makes a request: ``role`` (one of ROLES) and ``email`` ("operator" for LC_ADMIN_TOKEN)."""

    role: str
    email: str


def mint_token(pool: ConnectionPool, role: str, email: str) -> str:
    """Creates an API token for ``email`` with ``role``; returns the token (shown once). ValueError
    for an unknown role, or an address the sign-in and member routes would refuse
    (:func:`.accounts.normal_email`: a token for it could never be made a course member). The
    address is stored as those routes store it (lower-cased)."""
    from .accounts import normal_email  # accounts imports this module

    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}")
    address = normal_email(email)
    if address is None:
        raise ValueError(f"{email!r} is not an email address sign-in accepts (e.g. name@university.edu)")
    token = "lc_" + secrets.token_urlsafe(32)
    store.save_api_token(pool, hashlib.sha256(token.encode()).hexdigest(), role, address)
    return token


def principal_for(pool: ConnectionPool, admin_token: str | None, header: str | None) -> Principal | None:
    """The principal of an ``Authorization: Bearer <token>`` header, or None (anonymous/unknown)."""
    if not header or not header.lower().startswith("bearer "):
        return None
    token = header[7:].strip()
    if not token:
        return None
    if admin_token and hmac.compare_digest(token.encode(), admin_token.encode()):
        return Principal("admin", "operator")
    row = store.api_token(pool, hashlib.sha256(token.encode()).hexdigest())
    return Principal(row["role"], row["email"]) if row else None
