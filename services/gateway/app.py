"""The gateway: the public HTTP API (see README.md, "HTTP API") and the web client.

Reads courses and lectures from Postgres, forwards uploads to ingest, calls ask over gRPC
(``Ask`` streamed and relayed as server-sent events). Every error is JSON
``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import json
import logging
import uuid
from importlib import resources
from pathlib import Path

import grpc
import requests
from flask import Flask, Response, g, jsonify, request, send_file, stream_with_context
from werkzeug.exceptions import HTTPException

from lecturecopilot import db, telemetry
from lecturecopilot.ask.v1 import ask_pb2, ask_pb2_grpc
from lecturecopilot.settings import get_settings

from .auth import principal_for

log = logging.getLogger("services.gateway")
STATIC = Path(str(resources.files("services.gateway").joinpath("static")))


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _uuid(value: str, what: str) -> str:
    try:
        return str(uuid.UUID(value))
    except (ValueError, TypeError):
        raise ApiError(404, "not_found", f"Unknown {what}.") from None


def _clean_text(value, field: str, max_chars: int) -> str:
    """A user-supplied string, stripped; 400 when missing, too long, or holding characters no
    store can keep (NUL, unpaired UTF-16 surrogates)."""
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, f"invalid_{field}", f"'{field}' must be a non-empty string.")
    if "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise ApiError(400, f"invalid_{field}", f"'{field}' contains characters that are not allowed (NUL or "
                                                "unpaired surrogates).")
    value = " ".join(value.split()) if field != "comment" else value.strip()
    if len(value) > max_chars:
        raise ApiError(400, f"invalid_{field}", f"'{field}' must be at most {max_chars} characters.")
    return value


def _lecture_json(r: dict) -> dict:
    return {"id": str(r["id"]), "number": r["number"], "title": r["title"], "duration_s": r["duration_s"],
            "status": r["status"]}


def create_app() -> Flask:
    settings = get_settings()
    tracing = telemetry.setup("gateway")
    if tracing:  # before the channel exists, so its calls carry the trace context to ask (and ingest)
        from opentelemetry.instrumentation.grpc import GrpcInstrumentorClient
        from opentelemetry.instrumentation.requests import RequestsInstrumentor

        GrpcInstrumentorClient().instrument()
        RequestsInstrumentor().instrument()
    pool = db.make_pool(settings, max_size=16)
    # round_robin: with several ask addresses (LC_ASK_TARGET_URI) every call goes to the next replica
    channel = grpc.insecure_channel(settings.ask_target, options=[
        ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]}))])
    ask = ask_pb2_grpc.AskServiceStub(channel)
    app = Flask("gateway", static_folder=str(STATIC), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = settings.max_upload_bytes + 10 * 1024 * 1024
    if tracing:
        from opentelemetry.instrumentation.flask import FlaskInstrumentor

        FlaskInstrumentor().instrument_app(app, excluded_urls="healthz,readyz,static")

    def error(status: int, code: str, message: str):
        return jsonify({"error": {"code": code, "message": message}}), status

    @app.errorhandler(ApiError)
    def api_error(e: ApiError):
        return error(e.status, e.code, e.message)

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException):
        return error(e.code or 500, (e.name or "error").lower().replace(" ", "_"), e.description or e.name)

    @app.errorhandler(Exception)
    def internal_error(e: Exception):
        log.exception("unhandled error")
        return error(500, "internal", "Something went wrong on our side.")

    @app.before_request
    def authenticate():
        g.principal = principal_for(pool, settings.admin_token, request.headers.get("Authorization"))
        if request.headers.get("Authorization") and g.principal is None:
            raise ApiError(401, "unauthorized", "The token is not valid.")

    def require(*roles: str):
        if g.principal is None:
            raise ApiError(401, "unauthorized", "Sign in (Authorization: Bearer <token>) to do this.")
        if g.principal.role not in roles:
            raise ApiError(403, "forbidden", f"This needs the {' or '.join(roles)} role.")
        return g.principal

    def body() -> dict:
        data = request.get_json(silent=True)
        if not isinstance(data, dict):
            raise ApiError(400, "invalid_json", "The body must be a JSON object.")
        return data

    def course_row(course_id: str) -> dict:
        cid = _uuid(course_id, "course")
        with pool.connection() as conn:
            row = conn.execute("SELECT id, title FROM courses WHERE id=%s", (cid,)).fetchone()
        if row is None:
            raise ApiError(404, "not_found", "Unknown course.")
        return row

    def lecture_row(lecture_id: str) -> dict:
        lid = _uuid(lecture_id, "lecture")
        with pool.connection() as conn:
            row = conn.execute("SELECT * FROM lectures WHERE id=%s", (lid,)).fetchone()
        if row is None:
            raise ApiError(404, "not_found", "Unknown lecture.")
        return row

    def grpc_error(e: grpc.RpcError):
        code = e.code()
        if code == grpc.StatusCode.NOT_FOUND:
            return ApiError(404, "not_found", e.details())
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            return ApiError(400, "invalid_question", e.details())
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return ApiError(503, "ask_unavailable", "The answering service is not reachable; try again shortly.")
        return ApiError(500, "ask_failed", "Answering failed.")

    # -- pages -------------------------------------------------------------------------------
    @app.get("/")
    def home():
        return send_file(STATIC / "index.html")

    @app.get("/courses/<course_id>")
    def course_page(course_id: str):
        return send_file(STATIC / "index.html")

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
    def create_course():
        who = require("instructor", "admin")
        title = _clean_text(body().get("title"), "title", 200)
        cid = str(uuid.uuid4())
        with pool.connection() as conn:
            conn.execute("INSERT INTO courses (id, title, owner_email) VALUES (%s,%s,%s)", (cid, title, who.email))
        return jsonify({"id": cid, "title": title}), 201

    @app.get("/api/courses")
    def list_courses():
        with pool.connection() as conn:
            rows = conn.execute("SELECT c.id, c.title, count(l.id) AS lecture_count FROM courses c "
                                "LEFT JOIN lectures l ON l.course_id=c.id GROUP BY c.id ORDER BY c.created_at").fetchall()
        return {"courses": [{"id": str(r["id"]), "title": r["title"], "lecture_count": r["lecture_count"]}
                            for r in rows]}

    @app.get("/api/courses/<course_id>")
    def get_course(course_id: str):
        c = course_row(course_id)
        with pool.connection() as conn:
            rows = conn.execute("SELECT * FROM lectures WHERE course_id=%s ORDER BY number, created_at",
                                (c["id"],)).fetchall()
        return {"id": str(c["id"]), "title": c["title"], "lectures": [_lecture_json(r) for r in rows]}

    @app.post("/api/courses/<course_id>/lectures")
    def upload_lecture(course_id: str):
        require("instructor", "admin")
        c = course_row(course_id)
        # streamed to ingest chunked (no copy of the body in the gateway)
        headers = {"Content-Type": request.headers.get("Content-Type", "")}
        try:
            resp = requests.post(f"{settings.ingest_url}/v1/courses/{c['id']}/lectures", data=iter(lambda: request.stream.read(1024 * 1024), b""),
                                 headers=headers, timeout=3600)
        except requests.RequestException:
            raise ApiError(503, "ingest_unavailable", "The upload service is not reachable; try again shortly.")
        return Response(resp.content, status=resp.status_code, content_type="application/json")

    # -- resumable uploads: Content-Range chunks, relayed to ingest (services/ingest/resumable.py)
    def relay_ingest(method: str, path: str, **kw) -> Response:
        try:
            resp = requests.request(method, f"{settings.ingest_url}{path}", timeout=3600, **kw)
        except requests.RequestException:
            raise ApiError(503, "ingest_unavailable", "The upload service is not reachable; try again shortly.")
        return Response(resp.content, status=resp.status_code, content_type="application/json")

    @app.post("/api/courses/<course_id>/uploads")
    def start_resumable_upload(course_id: str):
        require("instructor", "admin")
        c = course_row(course_id)
        return relay_ingest("POST", f"/v1/courses/{c['id']}/uploads", json=body())

    @app.get("/api/uploads/<upload_id>")
    def resumable_upload_status(upload_id: str):
        require("instructor", "admin")
        return relay_ingest("GET", f"/v1/uploads/{_uuid(upload_id, 'upload')}")

    @app.put("/api/uploads/<upload_id>")
    def resumable_upload_chunk(upload_id: str):
        require("instructor", "admin")
        return relay_ingest("PUT", f"/v1/uploads/{_uuid(upload_id, 'upload')}",
                            data=iter(lambda: request.stream.read(1024 * 1024), b""),
                            headers={"Content-Range": request.headers.get("Content-Range", "")})

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
            rows = conn.execute("SELECT start_s, end_s, text FROM sentences WHERE lecture_id=%s ORDER BY idx",
                                (r["id"],)).fetchall()
        return {"segments": [{"start_s": x["start_s"], "end_s": x["end_s"], "text": x["text"]} for x in rows]}

    # -- search and ask ----------------------------------------------------------------------
    def ask_args(data: dict, key: str) -> tuple[str, str]:
        text = data.get(key)
        try:
            text = _clean_text(text, key, 2000)
        except ApiError as e:
            raise ApiError(400, "invalid_question", e.message) from None
        lecture_id = data.get("lecture_id") or ""
        if lecture_id and not isinstance(lecture_id, str):
            raise ApiError(400, "invalid_lecture", "'lecture_id' must be a string or null.")
        return text, lecture_id

    @app.post("/api/courses/<course_id>/search")
    def search(course_id: str):
        c = course_row(course_id)
        data = body()
        query, lecture_id = ask_args(data, "query")
        k = data.get("k", 6)
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 50:
            raise ApiError(400, "invalid_k", "'k' must be an integer from 1 to 50.")
        try:
            resp = ask.Search(ask_pb2.SearchRequest(course_id=str(c["id"]), query=query, k=k, lecture_id=lecture_id),
                              timeout=30)
        except grpc.RpcError as e:
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
    def ask_question(course_id: str):
        c = course_row(course_id)
        data = body()
        question, lecture_id = ask_args(data, "question")
        conversation_id = data.get("conversation_id") or ""
        if not isinstance(conversation_id, str):
            raise ApiError(400, "invalid_conversation", "'conversation_id' must be a string or null.")
        req = ask_pb2.AskRequest(course_id=str(c["id"]), question=question, lecture_id=lecture_id,
                                 conversation_id=conversation_id)
        call = ask.Ask(req, timeout=60)
        wants_sse = "text/event-stream" in request.headers.get("Accept", "")
        if not wants_sse:
            try:
                for ev in call:
                    if ev.HasField("done"):
                        return done_json(ev.done)
            except grpc.RpcError as e:
                raise grpc_error(e) from None
            raise ApiError(500, "ask_failed", "The answer ended without a result.")
        # Fail before streaming starts when the request itself is bad (404/400 as JSON).
        try:
            first = next(call)
        except grpc.RpcError as e:
            raise grpc_error(e) from None

        def sse(event: str, payload: dict) -> str:
            return f"event: {event}\ndata: {json.dumps(payload)}\n\n"

        def relay():
            try:
                ev = first
                while True:
                    kind = ev.WhichOneof("event")
                    if kind == "delta":
                        yield sse("delta", {"text": ev.delta})
                    elif kind == "sentence":
                        yield sse("sentence", sentence_json(ev.sentence))
                    elif kind == "done":
                        yield sse("done", done_json(ev.done))
                    ev = next(call)
            except StopIteration:
                return
            except grpc.RpcError as e:
                err = grpc_error(e)
                yield sse("error", {"code": err.code, "message": err.message})
            except GeneratorExit:  # the client went away: stop the work in ask
                log.info("client went away; cancelling the answer")
                call.cancel()
                raise

        return Response(stream_with_context(relay()), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.post("/api/answers/<answer_id>/feedback")
    def feedback(answer_id: str):
        aid = _uuid(answer_id, "answer")
        data = body()
        rating = data.get("rating")
        if rating not in ("up", "down"):
            raise ApiError(400, "invalid_rating", "'rating' must be 'up' or 'down'.")
        comment = data.get("comment")
        if comment is not None and comment != "":
            comment = _clean_text(comment, "comment", 2000)
        comment = comment or None
        with pool.connection() as conn:
            if conn.execute("SELECT 1 FROM answers WHERE id=%s", (aid,)).fetchone() is None:
                raise ApiError(404, "not_found", "Unknown answer.")
            conn.execute("INSERT INTO feedback (answer_id, rating, comment) VALUES (%s,%s,%s)", (aid, rating, comment))
        return Response(status=204)

    return app
