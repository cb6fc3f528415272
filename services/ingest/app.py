"""The ingest HTTP service (internal: the gateway forwards uploads here after checking auth).

``POST /v1/courses/<course_id>/lectures`` — multipart ``video`` and/or ``captions``, ``title``,
``number``, ``language`` → 202 ``{"lecture_id", "status": "queued"}`` or a JSON error.
``POST /v1/lectures/<id>/retry`` → 202 (a failed lecture re-queued), 404, 409.
``DELETE /v1/lectures/<id>`` and ``DELETE /v1/courses/<id>`` → 204: rows and media removed.
"""

from __future__ import annotations

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException

from lecturecopilot import bus, db, embedded
from lecturecopilot.settings import get_settings
from lecturecopilot.storage import MediaStore

from .core import IngestError, Upload, delete_lectures, ingest_lecture, retry_lecture


def create_app() -> Flask:
    settings = get_settings()
    pool = db.make_pool(settings, max_size=4)
    store = MediaStore.from_settings(settings)
    publisher = bus.SyncPublisher(embedded.nats_url(settings), settings.stream)
    app = Flask("ingest")
    app.config["MAX_CONTENT_LENGTH"] = settings.max_upload_bytes + 10 * 1024 * 1024

    def err(status: int, code: str, message: str):
        return jsonify({"error": {"code": code, "message": message}}), status

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException):
        return err(e.code or 500, (e.name or "error").lower().replace(" ", "_"), e.description or e.name)

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
        try:
            result = ingest_lecture(
                settings=settings, pool=pool, store=store, publish=publisher.publish, course_id=course_id,
                title=request.form.get("title", ""), number=number_i,
                video=Upload(video.filename or "video", video.stream) if video else None,
                captions=Upload(captions.filename or "captions", captions.stream) if captions else None,
                language=request.form.get("language", ""))
        except IngestError as e:
            return err(e.status, e.code, str(e))
        return jsonify(result), 202

    @app.post("/v1/lectures/<lecture_id>/retry")
    def retry(lecture_id: str):
        try:
            return jsonify(retry_lecture(pool=pool, publish=publisher.publish, lecture_id=lecture_id)), 202
        except IngestError as e:
            return err(e.status, e.code, str(e))

    @app.delete("/v1/lectures/<lecture_id>")
    def delete_lecture(lecture_id: str):
        delete_lectures(pool=pool, store=store, lecture_ids=[lecture_id])
        return "", 204

    @app.delete("/v1/courses/<course_id>")
    def delete_course(course_id: str):
        with pool.connection() as conn:
            ids = [str(r["id"]) for r in conn.execute("SELECT id FROM lectures WHERE course_id=%s",
                                                       (course_id,)).fetchall()]
        delete_lectures(pool=pool, store=store, lecture_ids=ids, course_id=course_id)
        return "", 204

    return app
