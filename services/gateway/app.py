"""The gateway: the public HTTP API (see README.md, "HTTP API"; ``GET /api/openapi.json``) and the
web client. The app factory only wires: settings and telemetry, the shared dependencies
(:class:`~services.gateway.context.GatewayContext`: Postgres pool, ask's gRPC stub, secret, caps),
the cookie session, the security headers, the request hooks, the blueprints (``routes/``) and the
error handlers (``errors.py``).

Who may do what is decided per route (``access.py``): bearer tokens (``auth.py``) or a browser
session (``accounts.py``; cookie writes need the ``X-CSRF-Token`` of ``GET /api/me``);
instructors manage only the courses they own (``courses.owner_email``), admins all; a private
course is a 404 for anyone who is not its owner, a member or an admin. Questions, sign-in links
and contact messages are rate-limited (``limits.py``).
"""

from __future__ import annotations

import functools
import json
import threading
from datetime import timedelta

import grpc
from flask import Flask, request
from werkzeug.middleware.proxy_fix import ProxyFix

from lecturecopilot import db, httpserve, telemetry
from lecturecopilot.ask.v1 import ask_pb2_grpc
from lecturecopilot.mail import send_mail
from lecturecopilot.mediastores import media_store
from lecturecopilot.settings import Settings, get_settings

from . import access, accounts, errors, ingest_client, routes, security
from .context import STATIC, GatewayContext, StreamSlots
from .routes.answers import RETRIED


def _retry_on_disconnect(view, always: bool):
    """``view`` run again when its connection to Postgres was lost (``db.retry_on_disconnect``),
    for the idempotent requests (GET, HEAD, OPTIONS) and, with ``always``, any."""
    retrying = db.retry_on_disconnect(view)

    @functools.wraps(view)
    def run(**kw):
        return retrying(**kw) if always or request.method in security.SAFE_METHODS else view(**kw)
    return run


def _context(settings: Settings) -> GatewayContext:
    """The shared dependencies: a pool of 16, ask's stub balanced round-robin over the addresses of
    ``LC_ASK_TARGET_URI`` (every call goes to the next replica; a lost connection is tried again within
    2 s), the server secret, the caps, the mailer."""
    channel = grpc.insecure_channel(settings.ask_target, options=[
        ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})),
        # an ask that went away is tried again within 2 s, not after gRPC's default backoff (which
        # grows to 2 minutes): questions failed for half a minute after a restarted ask was up again
        ("grpc.initial_reconnect_backoff_ms", 250), ("grpc.min_reconnect_backoff_ms", 250),
        ("grpc.max_reconnect_backoff_ms", 2000)])
    return GatewayContext(
        settings=settings, pool=db.make_pool(settings, max_size=16), ask=ask_pb2_grpc.AskServiceStub(channel),
        secret=accounts.server_secret(settings),
        admin_emails=settings.admin_email_set,
        relay_slots=threading.BoundedSemaphore(settings.upload_relays_max),
        streams=StreamSlots(settings.max_event_streams, settings.max_event_streams_person),
        videos=StreamSlots(settings.max_video_streams, settings.max_video_streams_person,
                           "Too many videos are being sent at once; retry in a moment.", retry_after_s=2,
                           signed_out=max(1, settings.max_video_streams // 2)),
        mail=functools.partial(send_mail, settings), media=media_store(settings))


def _wrap_wsgi(app: Flask, settings: Settings, tracing: bool) -> None:
    """Every request body bounded in time (uploads get their own bounds in ``access.authenticate``),
    traced when telemetry is on, ``X-Forwarded-*`` trusted from ``LC_PROXY_HOPS`` proxies (outermost)."""
    app.wsgi_app = httpserve.bounded_bodies(app.wsgi_app, timeout_s=settings.body_timeout_s,
                                            stall_s=min(settings.body_timeout_s, settings.upload_stall_s))
    if tracing:
        from opentelemetry.instrumentation.flask import FlaskInstrumentor

        FlaskInstrumentor().instrument_app(app, excluded_urls="healthz,readyz,static")
    if settings.proxy_hops:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.proxy_hops, x_proto=settings.proxy_hops,
                                x_host=settings.proxy_hops)


def create_app() -> Flask:
    """The gateway's Flask app, configured from the environment (``get_settings()``)."""
    settings = get_settings()
    tracing = telemetry.setup("gateway")
    if tracing:  # calls to ingest carry the trace context; calls to ask carry it in their metadata
        from opentelemetry.instrumentation.requests import RequestsInstrumentor

        RequestsInstrumentor().instrument()
    app = Flask("gateway", static_folder=str(STATIC), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = settings.max_upload_bytes + 10 * 1024 * 1024
    _wrap_wsgi(app, settings, tracing)
    context = app.extensions["gateway"] = _context(settings)
    https = settings.cookie_secure if settings.cookie_secure is not None else settings.public_url.startswith("https:")
    app.secret_key = context.secret
    app.config.update(SESSION_COOKIE_NAME="lc_session", SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax",
                      SESSION_COOKIE_SECURE=https, PERMANENT_SESSION_LIFETIME=timedelta(days=settings.session_days))
    security.install_headers(app, https=https, media_origin=context.media.media_origin())
    errors.register(app, page=routes.pages.page)  # a browser asking for an unknown page: "not found"
    app.before_request(access.authenticate)
    app.after_request(ingest_client.drop_refused_upload)
    routes.register(app)
    for endpoint, view in list(app.view_functions.items()):  # a lost connection costs no idempotent request
        app.view_functions[endpoint] = _retry_on_disconnect(view, endpoint in RETRIED)
    return app
