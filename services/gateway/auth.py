"""Bearer-token auth. ``LC_ADMIN_TOKEN`` (if set) is an admin token; other tokens are minted
by ``lecture-copilot mint-token`` (valid 90 days unless ``--days`` says otherwise), stored as
SHA-256 hashes in ``api_tokens`` and revoked by ``lecture-copilot revoke-tokens``."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from psycopg_pool import ConnectionPool

from . import accounts_store
from .emails import normal_email

ROLES = ("admin", "instructor", "student")


@dataclass(frozen=True)
class Principal:
    """Who makes a request: ``role`` (one of ROLES) and ``email`` ("operator" for LC_ADMIN_TOKEN)."""

    role: str
    email: str


TOKEN_DAYS = 90  # a minted token's default life; a leaked one stops working by itself
MAX_TOKEN_DAYS = 3650


def mint_token(pool: ConnectionPool, role: str, email: str, days: int = TOKEN_DAYS) -> str:
    """Creates an API token for ``email`` with ``role``, valid for ``days`` days (1..3650); returns
    the token (shown once). ValueError for an unknown role, a life out of range, or an address the
    sign-in and member routes would refuse (:func:`.emails.normal_email`: a token for it could
    never be made a course member). The address is stored as those routes store it (lower-cased).
    An instructor token also makes the address's account an instructor, as an approved role request
    does: signed in with a browser, the person can manage courses too (they were a student there)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}")
    if not 1 <= days <= MAX_TOKEN_DAYS:
        raise ValueError(f"days must be between 1 and {MAX_TOKEN_DAYS}")
    address = normal_email(email)
    if address is None:
        raise ValueError(f"{email!r} is not an email address sign-in accepts (e.g. name@university.edu)")
    token = "lc_" + secrets.token_urlsafe(32)
    accounts_store.save_api_token(pool, hashlib.sha256(token.encode()).hexdigest(), role, address, days)
    return token


def revoke_tokens(pool: ConnectionPool, email: str) -> tuple[int, int, bool]:
    """Revokes every API token and ends every browser session of ``email`` at once (the next request
    with one is anonymous), and makes an instructor account a student again (an instructor token
    made it one, :func:`mint_token`; a person cut off does not keep managing courses by signing in
    again); returns how many tokens and sessions there were and whether the account was demoted.
    The address is normalised as :func:`mint_token` stores it (an internationalised domain in its
    ASCII form: "zed@bücher.example" revoked nothing)."""
    email = normal_email(email) or email.strip()
    return (accounts_store.delete_api_tokens(pool, email), accounts_store.delete_sessions_of(pool, email),
            accounts_store.demote(pool, email, "instructor"))


def principal_for(pool: ConnectionPool, admin_token: str | None, header: str | None) -> Principal | None:
    """The principal of an ``Authorization: Bearer <token>`` header, or None (anonymous/unknown)."""
    if not header or not header.lower().startswith("bearer "):
        return None
    token = header[7:].strip()
    if not token:
        return None
    if admin_token and hmac.compare_digest(token.encode(), admin_token.encode()):
        return Principal("admin", "operator")
    row = accounts_store.api_token(pool, hashlib.sha256(token.encode()).hexdigest())
    return Principal(row["role"], row["email"]) if row else None
