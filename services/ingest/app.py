"""The ingest HTTP service (internal: the gateway forwards uploads here after checking auth).

``POST /v1/courses/<course_id>/lectures`` — multipart ``video`` and/or ``captions``, ``title``,
``number``, ``language``, optional ``video_size`` → 202 ``{"lecture_id", "status": "queued"}`` or a
JSON error.

Resumable: ``POST /v1/courses/<course_id>/uploads`` (JSON ``filename``, ``size``, ``title``,
``number``; headers ``X-LC-Owner``: who starts it, ``X-LC-Owner-Role``: ``admin`` is not capped) →
201 status; ``PUT /v1/uploads/<id>`` with ``Content-Range: bytes a-b/size`` per chunk → 200 status
(202 with ``lecture_id`` after the last one); ``GET /v1/uploads/<id>`` → the offset. A thread sweeps
uploads (expiry, interrupted finishes) at start and every few seconds (``resumable.sweep``).
Request bodies are bounded in time (``httpserve.bounded_bodies``), a little beyond the gateway's
bounds so that the gateway, which faces the client, is the one that drops a slow upload.
``POST /v1/lectures/<id>/retry`` → 202 (a failed lecture re-queued), 404, 409.
``DELETE /v1/lectures/<id>`` and ``DELETE /v1/courses/<id>`` → 204: rows and media removed.
"""

from __future__ import annotations

import logging
import threading
import time

import psycopg
from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException

from lecturecopilot import bus, db, embedded, httpserve, telemetry
from lecturecopilot.points import PointWriter
from lecturecopilot.settings import Settings, get_settings
from lecturecopilot.storage import MediaStore

from . import resumable
from .core import IngestError, Upload, delete_lectures, ingest_lecture, retry_lecture

log = logging.getLogger("services.ingest")
# ingest's own bounds on a body lie this far beyond the gateway's, so that the gateway, which
# faces the client, is the one that drops a slow upload and says why
BOUND_MARGIN_S = 30.0


def _sweeper(settings: Settings, pool, store: MediaStore, publish) -> None:
    """Sweeps resumable uploads at start and every ``sweep_interval_s`` (see resumable.sweep)."""
    while True:
        try:
            resumable.sweep(settings=settings, pool=pool, store=store, publish=publish)
        except Exception:
            log.exception("sweeping uploads failed")
        time.sleep(resumable.sweep_interval_s(settings))


def create_app() -> Flask:
    settings = get_settings()
    tracing = telemetry.setup("ingest")
    pool = db.make_pool(settings, max_size=8)
    store = MediaStore.from_settings(settings)
    points = PointWriter.from_settings(settings)  # None: no Qdrant server, ask's shards follow Postgres
    publisher = bus.SyncPublisher(embedded.nats_url(settings), settings.stream, settings.stream_replicas)
    app = Flask("ingest")
    app.config["MAX_CONTENT_LENGTH"] = settings.max_upload_bytes + 10 * 1024 * 1024
    if tracing:
        from opentelemetry.instrumentation.flask import FlaskInstrumentor

        FlaskInstrumentor().instrument_app(app, excluded_urls="healthz,readyz")
    app.wsgi_app = httpserve.bounded_bodies(app.wsgi_app, timeout_s=settings.body_timeout_s + BOUND_MARGIN_S,
                                            stall_s=settings.upload_stall_s + BOUND_MARGIN_S)
    threading.Thread(target=_sweeper, args=(settings, pool, store, publisher.publish), daemon=True,
                     name="upload-sweeper").start()

    def err(status: int, code: str, message: str, headers: dict | None = None):
        return jsonify({"error": {"code": code, "message": message}}), status, headers or {}

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException):
        return err(e.code or 500, (e.name or "error").lower().replace(" ", "_"), e.description or e.name)

    @app.errorhandler(psycopg.OperationalError)
    def db_down(e: psycopg.OperationalError):
        log.warning("database unavailable: %s", e)
        return err(503, "database_unavailable", "The database is not reachable; try again shortly.",
                   {"Retry-After": "5"})

    @app.before_request
    def body_bounds():
        timeout = {"upload": settings.upload_timeout_s, "resumable_chunk": settings.upload_chunk_timeout_s}.get(
            request.endpoint)
        if timeout is not None:
            httpserve.set_body_limits(request.environ, timeout_s=timeout + BOUND_MARGIN_S,
                                      stall_s=settings.upload_stall_s + BOUND_MARGIN_S)

    @app.get("/healthz")
    def healthz():
        return {"ok": True}

    @app.get("/readyz")
    def readyz():
        return {"ok": True}

    @app.post("/v1/courses/<course_id>/lectures")
    def upload(course_id: str):
        files = request.files
        video = files.get("video")
        captions = files.get("captions")
        number = request.form.get("number")
        try:
            number_i = int(number) if number not in (None, "") else None
        except ValueError:
            return err(400, "invalid_number", "'number' must be an integer.")
        if number_i is not None and not (0 <= number_i <= 9999):
            return err(400, "invalid_number", "'number' must be between 0 and 9999.")
        declared = request.form.get("video_size")  # optional: the uploader's byte count of 'video'
        try:
            declared_i = int(declared) if declared not in (None, "") else None
        except ValueError:
            return err(400, "invalid_size", "'video_size' must be the video's size in bytes (an integer).")
        if declared_i is not None and declared_i < 0:
            return err(400, "invalid_size", "'video_size' must not be negative.")
        if declared_i is not None and declared_i > settings.max_upload_bytes:
            return err(413, "too_large", f"The video is larger than the {settings.max_upload_bytes // 1024**3} GB limit.")
        try:
            result = ingest_lecture(
                settings=settings, pool=pool, store=store, publish=publisher.publish, course_id=course_id,
                title=request.form.get("title", ""), number=number_i,
                video=Upload(video.filename or "video", video.stream, declared_i) if video else None,
                captions=Upload(captions.filename or "captions", captions.stream) if captions else None,
                language=request.form.get("language", ""))
        except IngestError as e:
            return err(e.status, e.code, str(e), e.headers)
        return jsonify(result), 202

    # -- resumable uploads (see resumable.py) ----------------------------------------------
    @app.post("/v1/courses/<course_id>/uploads")
    def start_resumable(course_id: str):
        """JSON ``filename``, ``size``, ``title``, ``number``, ``language``; the gateway names who
        starts it in ``X-LC-Owner`` (an email) and ``X-LC-Owner-Role`` (admins are not capped)."""
        data = request.get_json(silent=True)
        if not isinstance(data, dict):
            return err(400, "invalid_json", 'Send JSON: {"filename", "size", "title", "number"}.')
        number = data.get("number")
        if number is not None and (not isinstance(number, int) or isinstance(number, bool) or not 0 <= number <= 9999):
            return err(400, "invalid_number", "'number' must be an integer between 0 and 9999.")
        try:
            status = resumable.start_upload(
                settings=settings, pool=pool, store=store, course_id=course_id, filename=data.get("filename"),
                size=data.get("size"), title=data.get("title"), number=number,
                language=str(data.get("language") or ""), owner=request.headers.get("X-LC-Owner") or None,
                capped=request.headers.get("X-LC-Owner-Role") != "admin")
        except IngestError as e:
            return err(e.status, e.code, str(e), e.headers)
        return jsonify(status), 201

    @app.get("/v1/uploads/<upload_id>")
    def resumable_status(upload_id: str):
        try:
            return jsonify(resumable.upload_status(settings=settings, pool=pool, store=store,
                                                   publish=publisher.publish, upload_id=upload_id))
        except IngestError as e:
            return err(e.status, e.code, str(e), e.headers)

    @app.put("/v1/uploads/<upload_id>")
    def resumable_chunk(upload_id: str):
        try:
            status = resumable.put_chunk(settings=settings, pool=pool, store=store, publish=publisher.publish,
                                         upload_id=upload_id, content_range=request.headers.get("Content-Range"),
                                         stream=request.stream)
        except IngestError as e:
            return err(e.status, e.code, str(e), e.headers)
        finally:
            _discard_rest(request.stream)
        return jsonify(status), 202 if status["state"] == "queued" else 200

    def _discard_rest(stream) -> None:
        """Reads what is left of a chunk that was answered without it (a refusal before the
        bytes, a finish resumed by a chunk sent again), so the relay gets its answer instead of a
        reset connection; bounded like any upload body."""
        try:
            while stream.read(resumable.CHUNK_READ):
                pass
        except Exception:  # cut off or past its bounds: the connection closes anyway
            pass

    @app.post("/v1/lectures/<lecture_id>/retry")
    def retry(lecture_id: str):
        try:
            return jsonify(retry_lecture(pool=pool, publish=publisher.publish, lecture_id=lecture_id)), 202
        except IngestError as e:
            return err(e.status, e.code, str(e))

    @app.delete("/v1/lectures/<lecture_id>")
    def delete_lecture(lecture_id: str):
        delete_lectures(pool=pool, store=store, lecture_ids=[lecture_id], points=points)
        return "", 204

    @app.delete("/v1/courses/<course_id>")
    def delete_course(course_id: str):
        with pool.connection() as conn:
            ids = [str(r["id"]) for r in conn.execute("SELECT id FROM lectures WHERE course_id=%s",
                                                       (course_id,)).fetchall()]
        delete_lectures(pool=pool, store=store, lecture_ids=ids, course_id=course_id, points=points)
        return "", 204

    return app
