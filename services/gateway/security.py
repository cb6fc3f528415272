"""Browser-facing safety for the gateway: a CSP nonce per request, security headers, CSRF
checks for cookie-authenticated writes, and the HTML shell with the nonce filled in."""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path

from flask import Flask, Response, g, request

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def csp(nonce: str, media_origin: str | None = None) -> str:
    """The Content-Security-Policy for a page whose only scripts carry ``nonce``; videos may also
    come from ``media_origin`` (the object store the player is redirected to, see
    :meth:`lecturecopilot.storage.MediaStore.media_origin`)."""
    media = f"'self' {media_origin}" if media_origin else "'self'"
    return ("default-src 'self'; "
            f"script-src 'self' 'nonce-{nonce}'; "
            f"style-src 'self'; img-src 'self' data:; media-src {media}; connect-src 'self'; font-src 'self'; "
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")


def install_headers(app: Flask, *, https: bool, media_origin: str | None = None) -> None:
    """Gives every request a fresh ``g.nonce`` and every response the security headers:
    CSP with that nonce, nosniff, no framing, no referrer, COOP/CORP, a permissions policy,
    HSTS when served over https, and ``Cache-Control: no-store`` on API answers that set none; an
    empty answer (a 204, Flask's own answer to ``OPTIONS``) carries no ``Content-Type``."""

    @app.before_request
    def _nonce():
        g.nonce = secrets.token_urlsafe(18)

    @app.after_request
    def _headers(resp: Response) -> Response:
        h = resp.headers
        h["Content-Security-Policy"] = csp(g.get("nonce") or secrets.token_urlsafe(18), media_origin)
        h["X-Content-Type-Options"] = "nosniff"
        h["X-Frame-Options"] = "DENY"
        h["Referrer-Policy"] = "no-referrer"
        h["Cross-Origin-Opener-Policy"] = "same-origin"
        h["Cross-Origin-Resource-Policy"] = "same-origin"
        h["Permissions-Policy"] = "camera=(), microphone=(), geolocation=(), payment=()"
        if https:
            h["Strict-Transport-Security"] = "max-age=31536000; includeSubDomains"
        if request.path.startswith("/api/") and "Cache-Control" not in h:
            h["Cache-Control"] = "no-store"
        if resp.status_code == 204 or (request.method == "OPTIONS" and not resp.is_streamed and not resp.get_data()):
            h.pop("Content-Type", None)  # an empty answer has no media type (Flask labels it text/html)
        return resp


def csrf_ok(expected: str | None) -> bool:
    """True when the request's ``X-CSRF-Token`` header equals the session's token (constant time)
    and any ``Origin`` header names this host. Only called for cookie-authenticated writes."""
    origin = request.headers.get("Origin")
    if origin and origin != request.host_url.rstrip("/"):
        return False
    sent = request.headers.get("X-CSRF-Token", "")
    return bool(expected and sent) and hmac.compare_digest(sent.encode(), expected.encode())


def page(shell: Path) -> Response:
    """The single-page shell (``index.html``) with this request's nonce on its script tags."""
    html = shell.read_text().replace("{{NONCE}}", g.nonce)
    return Response(html, mimetype="text/html", headers={"Cache-Control": "no-store"})
