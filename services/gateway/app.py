"""The gateway: the public HTTP API (see README.md, "HTTP API") and the web client.

Reads courses and lectures from Postgres, forwards uploads, retries and deletions to ingest,
calls ask over gRPC (``Ask`` streamed and relayed as server-sent events). Every error is JSON
``{"error": {"code", "message"}}``.

Who may do what is decided here, for every route: bearer tokens (``auth.py``) or a browser
session (``accounts.py``; cookie writes need the ``X-CSRF-Token`` of ``GET /api/me``);
instructors manage only the courses they own (``courses.owner_email``), admins all; a private
course is a 404 for anyone who is not its owner, a member or an admin. Questions, sign-in links
and contact messages are rate-limited (``limits.py``).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import queue
import threading
import time
import uuid
from contextlib import contextmanager
from datetime import timedelta
from importlib import resources
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import grpc
import psycopg
import requests
import psycopg
from flask import Flask, Response, current_app, g, jsonify, request, send_file, session, stream_with_context
from werkzeug.exceptions import HTTPException
from werkzeug.middleware.proxy_fix import ProxyFix

from lecturecopilot import db, httpserve, telemetry
from lecturecopilot.ask.v1 import ask_pb2, ask_pb2_grpc
from lecturecopilot.mail import send_mail
from lecturecopilot.settings import get_settings

from . import accounts, insights, limits, quiz_routes, schemas, security
from .auth import principal_for
from .routes import captions
from .schemas import accepts

log = logging.getLogger("services.gateway")
STATIC = Path(str(resources.files("services.gateway").joinpath("static")))


class ApiError(Exception):
    """An error answered as JSON ``{"error": {"code", "message"}}`` with HTTP ``status`` (and ``headers``)."""

    def __init__(self, status: int, code: str, message: str, headers: dict | None = None, extra: dict | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}
        self.extra = extra or {}  # more fields of the error object, e.g. ``wait_s``


def _uuid(value: str, what: str) -> str:
    try:
        return str(uuid.UUID(value))
    except (ValueError, TypeError):
        raise ApiError(404, "not_found", f"Unknown {what}.") from None


def _lecture_json(r: dict) -> dict:
    return {"id": str(r["id"]), "number": r["number"], "title": r["title"], "duration_s": r["duration_s"],
            "status": r["status"], "stage": r["stage"], "progress": r["progress"], "error": r["error"]}


def _status_json(r: dict) -> dict:
    return {"status": r["status"], "stage": r["stage"], "progress": r["progress"], "error": r["error"]}


FIRST_EVENT_WAIT_S = 0.5  # how long a streamed ask waits for ask's first event before sending headers
KEEPALIVE_S = 1.0  # SSE comment interval while ask is still working


UPLOAD_ENDPOINTS = ("upload_lecture", "resumable_upload_chunk")  # their bodies stream to ingest
RETRIED_POSTS = ("ask_question", "search")  # before ask they only read (and count a question, rolled back on loss)


def _retry_on_disconnect(view, always: bool):
    """``view`` run once more when its connection to Postgres was lost (``db.retry_on_disconnect``),
    for the idempotent requests (GET, HEAD, OPTIONS) and, with ``always``, any."""
    retrying = db.retry_on_disconnect(view)

    @functools.wraps(view)
    def run(**kw):
        return retrying(**kw) if always or request.method in security.SAFE_METHODS else view(**kw)
    return run


def _finite(text: str) -> float:
    """``json.loads``' float parser that refuses numbers out of a double's range (``1e400`` → inf)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:20]}")
    return value


def _no_constant(text: str):
    """``json.loads``' parser for ``NaN`` / ``Infinity``, which JSON (RFC 8259) does not allow."""
    raise ValueError(f"not JSON: {text}")


def create_app() -> Flask:
    settings = get_settings()
    tracing = telemetry.setup("gateway")
    if tracing:  # calls to ingest carry the trace context; calls to ask carry it in their metadata
        from opentelemetry.instrumentation.requests import RequestsInstrumentor

        RequestsInstrumentor().instrument()
    pool = db.make_pool(settings, max_size=16)
    # round_robin: with several ask addresses (LC_ASK_TARGET_URI) every call goes to the next replica
    channel = grpc.insecure_channel(settings.ask_target, options=[
        ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]}))])
    ask = ask_pb2_grpc.AskServiceStub(channel)
    app = Flask("gateway", static_folder=str(STATIC), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = settings.max_upload_bytes + 10 * 1024 * 1024
    # every request body is bounded in time (httpserve); uploads get their own bounds in authenticate()
    app.wsgi_app = httpserve.bounded_bodies(app.wsgi_app, timeout_s=settings.body_timeout_s,
                                            stall_s=min(settings.body_timeout_s, settings.upload_stall_s))
    if tracing:
        from opentelemetry.instrumentation.flask import FlaskInstrumentor

        FlaskInstrumentor().instrument_app(app, excluded_urls="healthz,readyz,static")
    if settings.proxy_hops:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.proxy_hops, x_proto=settings.proxy_hops,
                                x_host=settings.proxy_hops)
    secret = accounts.server_secret(settings)
    https = settings.cookie_secure if settings.cookie_secure is not None else settings.public_url.startswith("https:")
    app.secret_key = secret
    app.config.update(SESSION_COOKIE_NAME="lc_session", SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax",
                      SESSION_COOKIE_SECURE=https, PERMANENT_SESSION_LIFETIME=timedelta(days=settings.session_days))
    admin_emails = {e.strip().lower() for e in settings.admin_emails.split(",") if e.strip()}
    security.install_headers(app, https=https)

    def error(status: int, code: str, message: str):
        return jsonify({"error": {"code": code, "message": message}}), status

    @app.errorhandler(ApiError)
    def api_error(e: ApiError):
        if e.extra:
            return jsonify({"error": {"code": e.code, "message": e.message, **e.extra}}), e.status, e.headers
        body, status = error(e.status, e.code, e.message)
        return body, status, e.headers

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException):
        body, status = error(e.code or 500, (e.name or "error").lower().replace(" ", "_"), e.description or e.name)
        # keep Werkzeug's own headers: Content-Range on a 416, Allow on a 405 (not its HTML Content-Type)
        return body, status, [(k, v) for k, v in e.get_headers() if k.lower() != "content-type"]

    @app.errorhandler(psycopg.OperationalError)
    def db_down(e: psycopg.OperationalError):
        log.warning("database unavailable: %s", e)
        return error(503, "database_unavailable", "The database is not reachable; try again shortly.") + (
            {"Retry-After": "5"},)

    @app.errorhandler(Exception)
    def internal_error(e: Exception):
        log.exception("unhandled error")
        return error(500, "internal", "Something went wrong on our side.")

    @app.before_request
    def authenticate():
        if request.endpoint not in UPLOAD_ENDPOINTS:  # uploads stream to ingest; the rest is small
            request.max_content_length = settings.max_json_bytes
            if (request.content_length or 0) > settings.max_json_bytes:
                raise ApiError(413, "request_entity_too_large",
                               f"The request body is larger than {settings.max_json_bytes} bytes.")
        else:
            httpserve.set_body_limits(request.environ, stall_s=settings.upload_stall_s, timeout_s=(
                settings.upload_timeout_s if request.endpoint == "upload_lecture" else settings.upload_chunk_timeout_s))
        g.via, g.csrf = None, None
        header = request.headers.get("Authorization")
        if header:
            g.principal = db.retry_on_disconnect(principal_for)(pool, settings.admin_token, header)
            if g.principal is None:
                raise ApiError(401, "unauthorized", "The token is not valid.")
            g.via = "token"  # bearer requests carry no ambient authority: no CSRF check
            return
        g.principal = None
        if "sid" in session:
            found = db.retry_on_disconnect(accounts.session_principal)(pool, session.get("sid"))
            if found is not None:
                g.principal, g.csrf = found
                g.via = "session"
        if g.via == "session" and request.method not in security.SAFE_METHODS and not security.csrf_ok(g.csrf):
            raise ApiError(403, "csrf_failed", "Missing or wrong X-CSRF-Token header (see GET /api/me).")

    def require(*roles: str):
        if g.principal is None:
            raise ApiError(401, "unauthorized", "Sign in (Authorization: Bearer <token>) to do this.")
        if g.principal.role not in roles:
            raise ApiError(403, "forbidden", f"This needs the {' or '.join(roles)} role.")
        return g.principal

    def person() -> str:
        """The keyed hash naming who makes this request (account, else IP); never the raw IP."""
        p = g.principal
        return limits.person_key(secret, p.email if p else None, request.remote_addr)

    def limited(checks: list[tuple[str, int, int]], what: str) -> limits.Use:
        """Counts one use of each limit (see limits.hit_all); 429 with ``Retry-After`` beyond one.
        Returns the use, for ``limits.refund`` when the request is refused after all."""
        use, retry = db.retry_on_disconnect(limits.hit_all)(pool, checks)
        if use is None:
            raise ApiError(429, "rate_limited", f"Too many {what}; try again in {retry // 60 + 1} minutes.",
                           headers={"Retry-After": str(retry)})
        return use

    def body() -> schemas.Body:
        """The request's JSON body validated against the model its view declares (``@accepts``):
        400 ``invalid_json`` for a body that is not a JSON object, 413 past ``max_json_bytes``,
        400 with the field's code and path (``error.field``) for one that does not fit the model."""
        model = getattr(current_app.view_functions[request.endpoint], "body_model", None)
        if model is None:
            raise RuntimeError(f"the view {request.endpoint} reads a body but declares none (@accepts)")
        try:
            return schemas.parse(model, json_object())
        except schemas.BodyError as e:
            raise ApiError(400, e.code, e.message, extra={"field": e.field}) from None

    def json_object() -> dict:
        raw = b""
        while chunk := request.stream.read(settings.max_json_bytes + 1 - len(raw)):  # bounds a chunked body too
            raw += chunk
            if len(raw) > settings.max_json_bytes:
                raise ApiError(413, "request_entity_too_large",
                               f"The request body is larger than {settings.max_json_bytes} bytes.")
        try:
            data = json.loads(raw, parse_float=_finite, parse_constant=_no_constant) if request.is_json else None
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's parser goes
            data = None
        if not isinstance(data, dict):
            raise ApiError(400, "invalid_json", "The body must be a JSON object (with finite numbers).")
        return data

    def viewer_sql() -> tuple[str, dict]:
        """SQL condition on ``c`` (courses) for the courses this request may see, and its params."""
        p = g.principal
        return ("(c.visibility='public' OR %(admin)s OR lower(coalesce(c.owner_email,''))=%(email)s OR EXISTS "
                "(SELECT 1 FROM course_members m WHERE m.course_id=c.id AND m.email=%(email)s))",
                {"admin": bool(p and p.role == "admin"), "email": (p.email.lower() if p else "")})

    def may_manage(c: dict) -> bool:
        p = g.principal
        return bool(p and (p.role == "admin" or (p.role == "instructor" and p.email.lower() == (c["owner_email"] or "").lower())))

    @db.retry_on_disconnect
    def course_row(course_id: str, *, manage: bool = False) -> dict:
        """The course if this request may see it (else 404, also for a private course it may not
        see); with ``manage``, 401 anonymous, 403 unless admin or the owning instructor."""
        cid = _uuid(course_id, "course")
        cond, params = viewer_sql()
        with pool.connection() as conn:
            row = conn.execute(f"SELECT c.id, c.title, c.owner_email, c.visibility, c.assessment_mode FROM courses c "
                               f"WHERE c.id=%(cid)s AND {cond}", {**params, "cid": cid}).fetchone()
        if row is None:
            raise ApiError(404, "not_found", "Unknown course.")
        if manage:
            require("instructor", "admin")
            if not may_manage(row):
                raise ApiError(403, "forbidden", "Only the course's instructor or an admin can do this.")
        return row

    @db.retry_on_disconnect
    def lecture_row(lecture_id: str, *, manage: bool = False) -> dict:
        """The lecture if its course may be seen (404 otherwise); ``manage`` as in course_row."""
        lid = _uuid(lecture_id, "lecture")
        with pool.connection() as conn:
            row = conn.execute("SELECT * FROM lectures WHERE id=%s", (lid,)).fetchone()
        if row is None:
            raise ApiError(404, "not_found", "Unknown lecture.")
        try:
            course_row(str(row["course_id"]), manage=manage)
        except ApiError as e:
            if e.status == 404:
                raise ApiError(404, "not_found", "Unknown lecture.") from None
            raise
        return row

    def grpc_error(e: grpc.RpcError, *, invalid: str = "invalid_question", exhausted: str = "rate_limited",
                   precondition: str = "failed_precondition") -> ApiError:
        """The HTTP error for a failed call to ask: NOT_FOUND 404; INVALID_ARGUMENT 400 ``invalid``;
        RESOURCE_EXHAUSTED 429 ``exhausted`` with Retry-After and ``wait_s`` from the trailing
        ``retry-after-s`` (300 s when absent); FAILED_PRECONDITION 422 ``precondition``; unreachable
        503; anything else 500. The codes name the call's errors (e.g. ``regenerate_too_soon``)."""
        code = e.code()
        if code == grpc.StatusCode.NOT_FOUND:
            return ApiError(404, "not_found", e.details())
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            return ApiError(400, invalid, e.details())
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            wait = next((int(v) for k, v in (e.trailing_metadata() or ()) if k == "retry-after-s"), 300)
            return ApiError(429, exhausted, e.details(), headers={"Retry-After": str(wait)}, extra={"wait_s": wait})
        if code == grpc.StatusCode.FAILED_PRECONDITION:
            return ApiError(422, precondition, e.details())
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return ApiError(503, "ask_unavailable", "The answering service is not reachable; try again shortly.")
        return ApiError(500, "ask_failed", "Answering failed.")

    # -- pages -------------------------------------------------------------------------------
    # One HTML shell for every page (the client routes on the path); its scripts carry the nonce.
    for rule in ("/", "/courses/<path:rest>", "/signin", "/auth/verify", "/manage", "/manage/<path:rest>",
                 "/help", "/contact", "/admin"):
        app.add_url_rule(rule, f"page:{rule}", lambda **_: security.page(STATIC / "index.html"))

    @app.get("/favicon.ico")
    def favicon():
        """The site icon where browsers look for it without a <link rel="icon"> (static/favicon.ico,
        the same picture as static/favicon.svg)."""
        return app.send_static_file("favicon.ico")

    @app.get("/healthz")
    def healthz():
        return {"ok": True}

    @app.get("/readyz")
    def readyz():
        with pool.connection() as conn:
            conn.execute("SELECT 1")
        return {"ok": True}

    # -- courses and lectures ----------------------------------------------------------------
    @app.post("/api/courses")
    @accepts(schemas.CourseCreate)
    def create_course():
        who = require("instructor", "admin")
        data = body()
        title, visibility = data.title, data.visibility
        cid = str(uuid.uuid4())
        with pool.connection() as conn:
            conn.execute("INSERT INTO courses (id, title, owner_email, visibility) VALUES (%s,%s,%s,%s)",
                         (cid, title, who.email, visibility))
        return jsonify({"id": cid, "title": title, "visibility": visibility}), 201

    @app.get("/api/courses")
    def list_courses():
        cond, params = viewer_sql()
        mine = request.args.get("mine") in ("1", "true")
        with pool.connection() as conn:
            rows = conn.execute(f"SELECT c.id, c.title, c.owner_email, c.visibility, count(l.id) AS lecture_count "
                                f"FROM courses c LEFT JOIN lectures l ON l.course_id=c.id WHERE {cond} "
                                "GROUP BY c.id ORDER BY c.created_at", params).fetchall()
        out = [{"id": str(r["id"]), "title": r["title"], "lecture_count": r["lecture_count"],
                "visibility": r["visibility"], "can_manage": may_manage(r)} for r in rows]
        return {"courses": [c for c in out if c["can_manage"]] if mine else out}

    @app.get("/api/courses/<course_id>")
    def get_course(course_id: str):
        c = course_row(course_id)
        with pool.connection() as conn:
            rows = conn.execute("SELECT * FROM lectures WHERE course_id=%s ORDER BY number, created_at",
                                (c["id"],)).fetchall()
        return {"id": str(c["id"]), "title": c["title"], "visibility": c["visibility"], "can_manage": may_manage(c),
                "assessment_mode": c["assessment_mode"], "lectures": [_lecture_json(r) for r in rows]}

    @app.patch("/api/courses/<course_id>")
    @accepts(schemas.CourseUpdate)
    def update_course(course_id: str):
        c = course_row(course_id, manage=True)
        data = body()
        title = c["title"] if data.title is None else data.title
        visibility = data.visibility or c["visibility"]
        assessment = c["assessment_mode"] if data.assessment_mode is None else data.assessment_mode
        with pool.connection() as conn:
            conn.execute("UPDATE courses SET title=%s, visibility=%s, assessment_mode=%s WHERE id=%s",
                         (title, visibility, assessment, c["id"]))
        return {"id": str(c["id"]), "title": title, "visibility": visibility, "assessment_mode": assessment}

    def ingest_call(method: str, path: str, *, timeout_s: float = 60, **kw) -> requests.Response:
        """``method path`` on the ingest service (``kw`` as for ``requests.request``); 503 when unreachable."""
        try:
            return requests.request(method, f"{settings.ingest_url}{path}", timeout=timeout_s, **kw)
        except requests.RequestException:
            raise ApiError(503, "ingest_unavailable", "The upload service is not reachable; try again shortly.")

    @app.delete("/api/courses/<course_id>")
    def delete_course(course_id: str):
        c = course_row(course_id, manage=True)
        r = ingest_call("DELETE", f"/v1/courses/{c['id']}")
        if r.status_code != 204:
            raise ApiError(502, "delete_failed", "Deleting the course failed; try again.")
        return Response(status=204)

    @app.post("/api/courses/<course_id>/members")
    @accepts(schemas.MemberAdd)
    def add_member(course_id: str):
        c = course_row(course_id, manage=True)
        email = accounts.normal_email(body().email)
        if email is None:
            raise ApiError(400, "invalid_email", "'email' must be an email address.")
        with pool.connection() as conn:
            conn.execute("INSERT INTO course_members (course_id, email) VALUES (%s,%s) ON CONFLICT DO NOTHING",
                         (c["id"], email))
        return Response(status=204)

    @app.get("/api/courses/<course_id>/members")
    def list_members(course_id: str):
        c = course_row(course_id, manage=True)
        with pool.connection() as conn:
            rows = conn.execute("SELECT email FROM course_members WHERE course_id=%s ORDER BY email", (c["id"],)).fetchall()
        return {"members": [r["email"] for r in rows]}

    @app.delete("/api/courses/<course_id>/members/<email>")
    def remove_member(course_id: str, email: str):
        c = course_row(course_id, manage=True)
        email = accounts.normal_email(email)
        if email is None:
            raise ApiError(400, "invalid_email", "The member must be an email address.")
        with pool.connection() as conn:
            conn.execute("DELETE FROM course_members WHERE course_id=%s AND email=%s", (c["id"], email))
        return Response(status=204)

    # Upload bodies stream through to ingest, each holding a thread while it arrives: at most
    # upload_relays_max at once (plain requests always find a thread), each bounded in time
    # (authenticate() sets the bounds). A refused upload's body is not read: the connection closes.
    relay_slots = threading.BoundedSemaphore(settings.upload_relays_max)

    @app.after_request
    def drop_refused_upload(resp: Response) -> Response:
        if request.endpoint in UPLOAD_ENDPOINTS and resp.status_code >= 400:
            httpserve.drop_body(request.environ)
        return resp

    def relay_upload(method: str, path: str, headers: dict, timeout_s: float) -> Response:
        """Streams this request's body to ``method path`` on ingest and answers with ingest's
        answer; 503 ``uploads_busy`` (Retry-After) when upload_relays_max bodies are streaming."""
        if not relay_slots.acquire(blocking=False):
            raise ApiError(503, "uploads_busy", "The server is receiving as many uploads as it can; try again in a "
                           "moment.", headers={"Retry-After": "10"})
        try:
            return relay_ingest(method, path, timeout_s=timeout_s, headers=headers,
                                data=iter(lambda: request.stream.read(1024 * 1024), b""))
        finally:
            relay_slots.release()

    @app.post("/api/courses/<course_id>/lectures")
    def upload_lecture(course_id: str):
        c = course_row(course_id, manage=True)
        # streamed to ingest chunked (no copy of the body in the gateway)
        return relay_upload("POST", f"/v1/courses/{c['id']}/lectures", {"Content-Type": request.headers.get(
            "Content-Type", "")}, settings.upload_timeout_s + 60)

    # -- resumable uploads: Content-Range chunks, relayed to ingest (services/ingest/resumable.py)
    def relay_ingest(method: str, path: str, *, timeout_s: float = 3600, **kw) -> Response:
        resp = ingest_call(method, path, timeout_s=timeout_s, **kw)
        keep = {k: resp.headers[k] for k in ("Retry-After",) if k in resp.headers}
        return Response(resp.content, status=resp.status_code, content_type="application/json", headers=keep)

    @app.post("/api/courses/<course_id>/uploads")
    @accepts(schemas.UploadStart)
    def start_resumable_upload(course_id: str):
        c = course_row(course_id, manage=True)
        who = g.principal  # who starts it: ingest caps open uploads per person (not for admins)
        return relay_ingest("POST", f"/v1/courses/{c['id']}/uploads", json=body().model_dump(exclude_none=True), timeout_s=60,
                            headers={"X-LC-Owner": who.email.lower(), "X-LC-Owner-Role": who.role})

    @db.retry_on_disconnect
    def upload_of_managed_course(upload_id: str) -> str:
        """The upload's id when this request may manage its course (404 for an unknown upload or
        one of a course it may not see; 403 when it may see but not manage it)."""
        uid = _uuid(upload_id, "upload")
        with pool.connection() as conn:
            row = conn.execute("SELECT course_id FROM uploads WHERE id=%s", (uid,)).fetchone()
        if row is None:
            require("instructor", "admin")
            raise ApiError(404, "not_found", "Unknown upload.")
        course_row(str(row["course_id"]), manage=True)
        return uid

    @app.get("/api/uploads/<upload_id>")
    def resumable_upload_status(upload_id: str):
        return relay_ingest("GET", f"/v1/uploads/{upload_of_managed_course(upload_id)}", timeout_s=300)

    @app.put("/api/uploads/<upload_id>")
    def resumable_upload_chunk(upload_id: str):
        return relay_upload("PUT", f"/v1/uploads/{upload_of_managed_course(upload_id)}",
                            {"Content-Range": request.headers.get("Content-Range", "")},
                            settings.upload_chunk_timeout_s + 300)

    @app.get("/api/lectures/<lecture_id>")
    def get_lecture(lecture_id: str):
        r = lecture_row(lecture_id)
        with pool.connection() as conn:
            chapters = conn.execute("SELECT start_s, end_s, title, bullets FROM chapters WHERE lecture_id=%s "
                                    "ORDER BY idx", (r["id"],)).fetchall()
        return {"id": str(r["id"]), "course_id": str(r["course_id"]), "number": r["number"], "title": r["title"],
                "status": r["status"], "stage": r["stage"], "progress": r["progress"], "error": r["error"],
                "duration_s": r["duration_s"],
                "chapters": [{"start_s": c["start_s"], "end_s": c["end_s"], "title": c["title"],
                              "summary": "\n".join(f"• {b}" for b in c["bullets"]), "bullets": c["bullets"]}
                             for c in chapters]}

    @app.patch("/api/lectures/<lecture_id>")
    @accepts(schemas.LectureUpdate)
    def update_lecture(lecture_id: str):
        """Renames or renumbers a lecture (owner or admin); 409 ``number_taken`` when another lecture
        of the course has the number, also when two requests race for it (the unique index decides).
        Ask reads numbers and titles from Postgres at every request, so answers, search, the outline
        and exam-prep pointers show the change at once."""
        r = lecture_row(lecture_id, manage=True)
        data = body()
        title = r["title"] if data.title is None else data.title
        number = r["number"] if data.number is None else data.number
        try:
            with pool.connection() as conn:
                row = conn.execute("UPDATE lectures SET title=%s, number=%s, updated_at=now() WHERE id=%s RETURNING *",
                                   (title, number, r["id"])).fetchone()
        except psycopg.errors.UniqueViolation:
            raise ApiError(409, "number_taken", f"The course already has a lecture {number}; citations name "
                                                "lectures by number, so each needs its own.") from None
        if row is None:
            raise ApiError(404, "not_found", "Unknown lecture.")
        return _lecture_json(row)

    @app.delete("/api/lectures/<lecture_id>")
    def delete_lecture(lecture_id: str):
        r = lecture_row(lecture_id, manage=True)
        resp = ingest_call("DELETE", f"/v1/lectures/{r['id']}")
        if resp.status_code != 204:
            raise ApiError(502, "delete_failed", "Deleting the lecture failed; try again.")
        return Response(status=204)

    @app.post("/api/lectures/<lecture_id>/retry")
    def retry_lecture(lecture_id: str):
        r = lecture_row(lecture_id, manage=True)
        resp = ingest_call("POST", f"/v1/lectures/{r['id']}/retry")
        return Response(resp.content, status=resp.status_code, content_type="application/json")

    # Live progress streams each hold one of the process's threads while open, so they are capped
    # (in total and per person) and each is closed after event_stream_max_s; beyond the cap a 429
    # tells the page to poll GET /api/lectures/{id} instead. Plain requests always keep threads.
    event_slots = threading.BoundedSemaphore(settings.max_event_streams)
    streams_of: dict[str, int] = {}
    streams_lock = threading.Lock()

    def take_stream_slot() -> Callable[[], None]:
        """Reserves a stream slot for this request's person; returns its (idempotent) release.
        Raises ApiError 429 ``too_many_streams`` when the person or the process is at its cap."""
        who = person()
        with streams_lock:
            if streams_of.get(who, 0) >= settings.max_event_streams_person or not event_slots.acquire(blocking=False):
                raise ApiError(429, "too_many_streams", "Too many live progress streams are open; poll "
                               "GET /api/lectures/{id} for the status instead, or retry shortly.",
                               headers={"Retry-After": "5"})
            streams_of[who] = streams_of.get(who, 0) + 1
        released = threading.Event()

        def release() -> None:
            with streams_lock:
                if released.is_set():
                    return
                released.set()
                streams_of[who] -= 1
                if not streams_of[who]:
                    del streams_of[who]
                event_slots.release()
        return release

    @app.get("/api/lectures/<lecture_id>/events")
    def lecture_events(lecture_id: str):
        """SSE: ``status`` events ``{"status", "stage", "progress", "error"}`` whenever they change
        (Postgres polled every 0.5 s), a comment every 5 s; the stream ends after ready/failed, or
        after ``event_stream_max_s`` (the browser's EventSource reconnects in 3 s). 429
        ``too_many_streams`` beyond the caps (see ``take_stream_slot``)."""
        r = lecture_row(lecture_id)
        lid = r["id"]
        release = take_stream_slot()

        @db.retry_on_disconnect
        def poll() -> dict | None:
            with pool.connection() as conn:
                return conn.execute("SELECT status, stage, progress, error FROM lectures WHERE id=%s", (lid,)).fetchone()

        def stream():
            try:
                yield "retry: 3000\n\n"
                last, last_sent = None, time.time()
                deadline = time.time() + settings.event_stream_max_s
                while time.time() < deadline:
                    row = poll()
                    if row is None:
                        yield f"event: deleted\ndata: {json.dumps({'lecture_id': str(lid)})}\n\n"
                        return
                    cur = _status_json(row)
                    if cur != last:
                        yield f"event: status\ndata: {json.dumps(cur)}\n\n"
                        last, last_sent = cur, time.time()
                        if cur["status"] in ("ready", "failed"):
                            return
                    elif time.time() - last_sent > 5:  # a client gone is noticed at a write: its slot comes back
                        yield ": keep-alive\n\n"
                        last_sent = time.time()
                    time.sleep(0.5)
            finally:
                release()

        resp = Response(stream_with_context(stream()), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        resp.call_on_close(release)  # also when the stream never started
        return resp

    @app.get("/api/lectures/<lecture_id>/video")
    def get_video(lecture_id: str):
        r = lecture_row(lecture_id)
        path = r["web_path"] or r["media_path"]
        if not path or not Path(path).exists():
            raise ApiError(404, "no_video", "This lecture has no playable video (yet).")
        # werkzeug answers Range requests (206 Partial Content) for conditional=True
        return send_file(path, mimetype="video/mp4", conditional=True, max_age=3600)

    @app.get("/api/lectures/<lecture_id>/transcript")
    def get_transcript(lecture_id: str):
        r = lecture_row(lecture_id)
        with pool.connection() as conn:
            rows = conn.execute("SELECT start_s, end_s, text, kind FROM sentences WHERE lecture_id=%s ORDER BY idx",
                                (r["id"],)).fetchall()
        return {"segments": [{"start_s": x["start_s"], "end_s": x["end_s"], "text": x["text"], "kind": x["kind"]}
                             for x in rows]}

    # -- search and ask ----------------------------------------------------------------------
    def lecture_in(c: dict, lecture_id: str | None) -> str:
        """The lecture a search or question is scoped to: '' for the whole course, else the id of a
        lecture of course ``c`` (404 otherwise, checked before anything is counted)."""
        if not lecture_id:
            return ""
        try:
            lid = str(uuid.UUID(lecture_id))
        except ValueError:
            raise ApiError(404, "not_found", "Unknown lecture in this course.") from None
        with pool.connection() as conn:
            found = conn.execute("SELECT 1 FROM lectures WHERE id=%s AND course_id=%s", (lid, c["id"])).fetchone()
        if found is None:
            raise ApiError(404, "not_found", "Unknown lecture in this course.")
        return lid

    def unlimited() -> bool:
        """The operator (admin) is not rate-limited."""
        return bool(g.principal and g.principal.role == "admin")

    @app.post("/api/courses/<course_id>/search")
    @accepts(schemas.SearchQuery)
    def search(course_id: str):
        """``{"results": [{"lecture_id", "lecture_number", "start_s", "end_s", "text", "score"}]}``,
        best first. Counted against ``LC_SEARCH_LIMIT_VISITOR`` / ``LC_SEARCH_LIMIT_USER`` searches a
        day per person (429 with ``Retry-After`` beyond) once the course, lecture and body are
        checked; a search ask refuses or cannot take gives its use back."""
        c = course_row(course_id)
        data = body()
        lecture_id = lecture_in(c, data.lecture_id)
        use = None
        if not unlimited():
            budget = settings.search_limit_user if g.principal else settings.search_limit_visitor
            use = limited([(f"search:{person()}", limits.DAY_S, budget)], "searches today")
        try:
            resp = ask.Search(ask_pb2.SearchRequest(course_id=str(c["id"]), query=data.query, k=data.k,
                                                    lecture_id=lecture_id),
                              timeout=30, metadata=telemetry.grpc_metadata())
        except grpc.RpcError as e:
            limits.refund(pool, use)
            raise grpc_error(e) from None
        return {"results": [{"lecture_id": p.lecture_id, "lecture_number": p.lecture_number, "start_s": p.start_s,
                             "end_s": p.end_s, "text": p.text, "score": p.score} for p in resp.results]}

    def done_json(d: ask_pb2.Done) -> dict:
        return {
            "answer_id": d.answer_id, "conversation_id": d.conversation_id, "declined": d.declined,
            "answer": d.answer,
            "sentences": [sentence_json(s) for s in d.sentences],
            "sources": [{"lecture_id": s.lecture_id, "lecture_number": s.lecture_number, "start_s": s.start_s,
                         "end_s": s.end_s} for s in d.sources],
            "timings": {"retrieve_ms": round(d.retrieve_ms, 1), "first_sentence_ms": round(d.first_sentence_ms, 1),
                        "total_ms": round(d.total_ms, 1)},
            "writer": d.writer, "reason": d.reason or None,
            "rewritten_question": d.rewritten_question or None,
        }

    def sentence_json(s: ask_pb2.Sentence) -> dict:
        return {"text": s.text, "citations": [{"lecture_id": c.lecture_id, "lecture_number": c.lecture_number,
                                               "t_s": c.t_s, "label": c.label} for c in s.citations]}

    @app.post("/api/courses/<course_id>/ask")
    @accepts(schemas.AskQuestion)
    def ask_question(course_id: str):
        """An answer as JSON, or streamed as SSE with ``Accept: text/event-stream``. Counted against
        the day's questions (per course and across courses, ``LC_ASK_LIMIT_*``) once the course,
        lecture and body are checked; a question ask refuses, cannot take or does not finish gives
        its use back, so only answered questions use up the budget."""
        c = course_row(course_id)
        data = body()
        lecture_id = lecture_in(c, data.lecture_id)
        use = None
        if not unlimited():
            who = person()
            per_course, total = ((settings.ask_limit_user, settings.ask_limit_user_total) if g.principal else
                                 (settings.ask_limit_visitor, settings.ask_limit_visitor_total))
            use = limited([(f"ask:{c['id']}:{who}", limits.DAY_S, per_course), (f"ask-all:{who}", limits.DAY_S, total)],
                          "questions today")
        req = ask_pb2.AskRequest(course_id=str(c["id"]), question=data.question, lecture_id=lecture_id,
                                 conversation_id=data.conversation_id or "",
                                 asker=person(), staff=may_manage(c))  # staff are not counted as students
        # the trace context goes in the metadata by hand: the gRPC client instrumentation would wrap
        # the call in a generator that cannot be cancelled when the client goes away
        call = ask.Ask(req, timeout=60, metadata=telemetry.grpc_metadata())
        if "text/event-stream" in request.headers.get("Accept", ""):
            return ask_streamed(call, use)
        try:
            for ev in call:
                if ev.HasField("done"):
                    return done_json(ev.done)
        except grpc.RpcError as e:
            limits.refund(pool, use)
            raise grpc_error(e) from None
        limits.refund(pool, use)
        raise ApiError(500, "ask_failed", "The answer ended without a result.")

    def ask_streamed(call, use: limits.Use | None) -> Response:
        """Relays ask's stream as SSE (``delta``, ``sentence``, ``done``, or ``error``). The stream is
        read by a thread into a queue, so the relay can send keep-alive comments while ask works: a
        client that has gone away is noticed at the next write (within KEEPALIVE_S) and the call is
        cancelled, which stops the work in ask. A stream that ends without ``done`` gives ``use`` back."""
        events: queue.Queue = queue.Queue()

        def pump() -> None:
            try:
                for ev in call:
                    events.put(("event", ev))
                events.put(("end", None))
            except grpc.RpcError as e:
                events.put(("error", e))

        threading.Thread(target=pump, daemon=True, name="ask-stream").start()
        # Fail before streaming starts when the request itself is bad (404/400 as JSON): ask
        # refuses those at once.
        try:
            first = events.get(timeout=FIRST_EVENT_WAIT_S)
        except queue.Empty:
            first = None
        if first is not None and first[0] == "error":
            limits.refund(pool, use)
            raise grpc_error(first[1]) from None
        return Response(stream_with_context(relay(call, events, first, use)), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    def relay(call, events: queue.Queue, item, use: limits.Use | None):
        """The SSE lines of ask's events as ``ask_streamed``'s thread queues them (``item``: the first)."""
        def sse(event: str, payload: dict) -> str:
            return f"event: {event}\ndata: {json.dumps(payload)}\n\n"

        try:
            while True:
                if item is None:
                    try:
                        item = events.get(timeout=KEEPALIVE_S)
                    except queue.Empty:
                        yield ": keep-alive\n\n"
                        continue
                kind, ev = item
                item = None
                if kind in ("end", "error"):
                    limits.refund(pool, use)  # no answer came (a done ends the relay first)
                if kind == "end":
                    return
                if kind == "error":
                    err = grpc_error(ev)
                    yield sse("error", {"code": err.code, "message": err.message})
                    return
                which = ev.WhichOneof("event")
                if which == "delta":
                    yield sse("delta", {"text": ev.delta})
                elif which == "sentence":
                    yield sse("sentence", sentence_json(ev.sentence))
                elif which == "done":
                    yield sse("done", done_json(ev.done))
                    return
        except GeneratorExit:  # the client went away: stop the work in ask
            log.info("client went away; cancelling the answer")
            call.cancel()
            raise

    @app.post("/api/answers/<answer_id>/feedback")
    @accepts(schemas.Feedback)
    def feedback(answer_id: str):
        """Rates an answer → 204. One rating per person (the keyed hash the limits use) per answer:
        a new one replaces the person's earlier rating and comment. ``LC_FEEDBACK_LIMIT`` ratings an
        hour per person (429 beyond), counted once the answer and body are checked."""
        aid = _uuid(answer_id, "answer")
        data = body()
        with pool.connection() as conn:
            row = conn.execute("SELECT course_id FROM answers WHERE id=%s", (aid,)).fetchone()
        if row is None:
            raise ApiError(404, "not_found", "Unknown answer.")
        try:
            course_row(str(row["course_id"]))
        except ApiError:
            raise ApiError(404, "not_found", "Unknown answer.") from None
        rater = person()
        limited([(f"feedback:{rater}", limits.HOUR_S, settings.feedback_limit)], "ratings this hour")
        with pool.connection() as conn:
            conn.execute("INSERT INTO feedback (answer_id, rater, rating, comment) VALUES (%s,%s,%s,%s) "
                         "ON CONFLICT (answer_id, rater) DO UPDATE SET rating=EXCLUDED.rating, "
                         "comment=EXCLUDED.comment, created_at=now()", (aid, rater, data.rating, data.comment))
        return Response(status=204)

    # -- accounts: sign-in by emailed link, sessions, role requests ---------------------------
    @app.get("/api/me")
    def me():
        p = g.principal
        if p is None:
            return {"signed_in": False, "role": None, "email": None, "csrf_token": None, "role_request": None}
        with pool.connection() as conn:
            req = conn.execute("SELECT * FROM role_requests WHERE email=%s ORDER BY created_at DESC LIMIT 1",
                               (p.email,)).fetchone()
        return {"signed_in": True, "role": p.role, "email": p.email, "via": g.via, "csrf_token": g.csrf,
                "role_request": accounts.role_request_json(req) if req else None}

    @app.post("/api/auth/magic-link")
    @accepts(schemas.MagicLink)
    def magic_link():
        """Mails a single-use sign-in link (``LC_LOGIN_LINK_MINUTES``); 202 whether or not the
        address is known, 429 past ``LC_SIGNIN_LIMIT`` links an hour per visitor (or per address)."""
        email = accounts.normal_email(body().email)
        if email is None:
            raise ApiError(400, "invalid_email", "'email' must be an email address.", extra={"field": "email"})
        visitor = limits.person_key(secret, None, request.remote_addr)
        address = limits.person_key(secret, email, None)  # and per address: no mail-bombing from many IPs
        limited([(f"signin:{visitor}", limits.HOUR_S, settings.signin_limit),
                 (f"signin-to:{address}", limits.HOUR_S, settings.signin_limit)], "sign-in links")
        token = accounts.new_login_token(pool, email, settings.login_link_minutes)
        link = f"{settings.public_url.rstrip('/')}/auth/verify?token={token}"
        try:
            sent = send_mail(settings, email, "Your Lecture Copilot sign-in link",
                             f"Open this link to sign in to Lecture Copilot:\n\n{link}\n\n"
                             f"It works once, for {settings.login_link_minutes:g} minutes. If you did not ask "
                             "for it, ignore this mail.\n")
        except Exception:
            log.exception("sending the sign-in link failed")
            raise ApiError(503, "mail_unavailable", "The sign-in mail could not be sent; try again shortly.")
        if not sent:
            raise ApiError(503, "mail_off", "Sign-in by email is not configured on this server (LC_SMTP_HOST).")
        return jsonify({"sent": True}), 202

    @app.post("/api/auth/verify")
    @accepts(schemas.Verify)
    def verify():
        """Exchanges a sign-in token for a session cookie: 200 ``{"email", "role"}``, 400 when the
        link is unknown, used or expired."""
        email = accounts.consume_login_token(pool, body().token)
        if email is None:
            raise ApiError(400, "invalid_link", "This sign-in link is not valid any more; ask for a new one.")
        role = accounts.ensure_user(pool, email, admin_emails)
        old = session.get("sid")
        if old:
            accounts.end_session(pool, old)
        session.clear()
        session["sid"] = accounts.create_session(pool, email, settings.session_days)
        session.permanent = True
        return {"email": email, "role": role}

    @app.post("/api/auth/logout")
    def logout():
        accounts.end_session(pool, session.get("sid"))
        session.clear()
        return Response(status=204)

    @app.post("/api/role-requests")
    @accepts(schemas.RoleRequest)
    def create_role_request():
        p = require("student", "instructor", "admin")
        if p.role != "student":
            raise ApiError(409, "already_instructor", f"You already have the {p.role} role.")
        return jsonify(accounts.request_role(pool, p.email, body().reason)), 201

    @app.get("/api/role-requests")
    def list_role_requests():
        require("admin")
        with pool.connection() as conn:
            rows = conn.execute("SELECT * FROM role_requests WHERE status='pending' ORDER BY created_at").fetchall()
        return {"requests": [accounts.role_request_json(r) for r in rows]}

    @app.post("/api/role-requests/<request_id>/<decision>")
    def decide_role_request(request_id: str, decision: str):
        p = require("admin")
        if decision not in ("approve", "deny"):
            raise ApiError(404, "not_found", "Use /approve or /deny.")
        r = accounts.decide_role_request(pool, _uuid(request_id, "request"), decision == "approve", p.email)
        if r is None:
            raise ApiError(404, "not_found", "No pending request with this id.")
        return r

    # -- contact -------------------------------------------------------------------------------
    @app.post("/api/contact")
    @accepts(schemas.Contact)
    def contact():
        """Mails the operator (``LC_OPERATOR_EMAIL``): ``{"email", "message", "name"?}`` → 202;
        ``LC_CONTACT_LIMIT`` messages a day per person (429 beyond)."""
        data = body()
        email = accounts.normal_email(data.email) if data.email else (g.principal.email if g.principal else None)
        if email is None:
            raise ApiError(400, "invalid_email", "'email' must be an email address we can answer.",
                           extra={"field": "email"})
        message, name = data.message, data.name or ""
        if not settings.operator_email:  # before counting: a refused message uses up nothing
            raise ApiError(503, "contact_off", "The contact form is not configured on this server (LC_OPERATOR_EMAIL).")
        limited([(f"contact:{person()}", limits.DAY_S, settings.contact_limit)], "messages today")
        try:
            send_mail(settings, settings.operator_email, f"Lecture Copilot contact: {name or email}"[:150],
                      f"From: {name} <{email}>\n\n{message}\n")
        except Exception:
            log.exception("sending a contact message failed")
            raise ApiError(503, "mail_unavailable", "The message could not be sent; try again shortly.")
        return jsonify({"sent": True}), 202

    # -- exam prep (quiz_routes.py) and insights (insights.py) ------------------------------------
    helpers = SimpleNamespace(course_row=course_row, lecture_row=lecture_row, require=require, body=body,
                              limited=limited, person=person, may_manage=may_manage,
                              ask=ask, grpc_error=grpc_error)
    quiz_routes.install(app, pool, helpers, ApiError, settings)
    insights.install(app, pool, helpers, ApiError, settings)
    app.register_blueprint(captions.blueprint(pool, lecture_row, ApiError))
    for endpoint, view in list(app.view_functions.items()):  # a lost connection costs no idempotent request
        app.view_functions[endpoint] = _retry_on_disconnect(view, endpoint in RETRIED_POSTS)

    return app
