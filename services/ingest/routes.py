"""Ingest's HTTP routes, as Flask blueprints (the contract is in :mod:`services.ingest.app`'s
docstring). Each view reads the request, calls one use case with the service's parts
(:func:`.web.ingest`) and returns its answer; an :class:`~.core.IngestError` it raises is answered
by :mod:`.web` (its status, code and message)."""

from __future__ import annotations

import re

from flask import Blueprint, jsonify, request

from lecturecopilot.health import pid_header

from . import resumable
from .core import Upload, UploadRequest, ingest_lecture, retry_lecture
from .deletion import delete_course, delete_lectures
from .errors import IngestError
from .numbers import MAX_NUMBER, rename_lecture
from .partfiles import discard_rest
from .spool import GuardedSpool
from .web import err, ingest

health = Blueprint("health", __name__)
lectures = Blueprint("lectures", __name__)
uploads = Blueprint("uploads", __name__)
BLUEPRINTS = (health, lectures, uploads)


@health.get("/healthz")
def healthz():
    """Liveness: 200 ``{"ok": true}``, naming the process (``LC-Pid``, :data:`~lecturecopilot.health.PID_HEADER`)."""
    return {"ok": True}, 200, pid_header()


@health.get("/readyz")
def readyz():
    """Readiness: 200 ``{"ok": true}`` once the app is built (its pool and publisher made), naming the
    process (``LC-Pid``)."""
    return {"ok": True}, 200, pid_header()


# -- lectures: multipart upload, retry, delete ---------------------------------------------

def _form_int(name: str, code: str, message: str) -> int | None:
    """The form field ``name`` as an integer (None when absent or blank); :class:`IngestError` 400
    ``code`` with ``message`` when it is not one written in ASCII digits (Python's ``int()`` would
    also take "1_000", " 3 " and other scripts' digits, "٣"; the JSON routes take none of them)."""
    value = request.form.get(name)
    if value in (None, ""):
        return None
    if not re.fullmatch(r"-?[0-9]{1,19}", value):
        raise IngestError(message, code=code)
    return int(value)


def _upload_numbers() -> tuple[int | None, int | None]:
    """``(number, video_size)`` of a multipart upload's form, checked: the number 0..9999 (400
    ``invalid_number``), the declared size (the uploader's byte count of ``video``) not negative
    (400 ``invalid_size``) and within ``LC_MAX_UPLOAD_BYTES`` (413 ``too_large``)."""
    number = _form_int("number", "invalid_number", "'number' must be an integer.")
    if number is not None and not (0 <= number <= MAX_NUMBER):
        raise IngestError(f"'number' must be between 0 and {MAX_NUMBER}.", code="invalid_number")
    declared = _form_int("video_size", "invalid_size", "'video_size' must be the video's size in bytes (an integer).")
    if declared is not None and declared < 0:
        raise IngestError("'video_size' must not be negative.", code="invalid_size")
    limit = ingest().settings.max_upload_bytes
    if declared is not None and declared > limit:
        raise IngestError(f"The video is larger than the {limit // 1024**3} GB limit.", status=413, code="too_large")
    return number, declared


_FORM_FIELDS = ("title", "number", "language", "video_size")
_FORM_FILES = ("video", "captions")


def _read_form() -> None:
    """Parses the multipart form (:class:`~.web.StrictFormRequest`); :class:`IngestError` 415
    ``not_multipart`` for a body that is not a form at all (JSON, say), 400 ``malformed_form`` when
    it cannot be parsed."""
    if request.mimetype not in ("multipart/form-data", "application/x-www-form-urlencoded"):
        raise IngestError(f"A lecture is uploaded as multipart/form-data (curl -F video=@lecture.mp4 -F title=...), "
                          f"not as {request.mimetype or 'a body without a Content-Type'}.", status=415,
                          code="not_multipart")
    try:
        request.form, request.files  # noqa: B018 (parsed on first access)
    except ValueError as e:
        raise IngestError(f"The upload is not a readable multipart form ({e}); send it as multipart/form-data, "
                          "every part whole.", code="malformed_form") from None


def _no_duplicates() -> None:
    """:class:`IngestError` 400 ``duplicate_field`` when the form holds one of its fields or files
    twice ("number=30" and "number=31": one of them would be taken, silently)."""
    twice = [n for n in _FORM_FIELDS if len(request.form.getlist(n)) > 1]
    twice += [n for n in _FORM_FILES if len(request.files.getlist(n)) > 1]
    if twice:
        raise IngestError(f"The form has '{twice[0]}' more than once; send each part once.", code="duplicate_field")


# the gateway streams an upload's body on chunked, and names the length its client declared here
BODY_LENGTH_HEADER = "X-LC-Body-Length"


def _body_length() -> int:
    """The bytes of this request's body as declared (``Content-Length``, else the gateway's
    :data:`BODY_LENGTH_HEADER`), 0 when neither says."""
    if request.content_length:
        return request.content_length
    value = request.headers.get(BODY_LENGTH_HEADER, "")
    return int(value) if value.isascii() and value.isdigit() else 0


def _form_file(name: str) -> Upload | None:
    """The form's file ``name`` as an :class:`Upload`: its spooled file (linked into the lecture's
    folder, not copied) when it was spooled to the media store, else its stream."""
    f = request.files.get(name)
    if f is None:
        return None
    spooled = f.stream.path if isinstance(f.stream, GuardedSpool) else None
    return Upload(f.filename or name, None if spooled else f.stream, path=spooled)


@lectures.post("/v1/courses/<course_id>/lectures")
def upload(course_id: str):
    """Multipart ``video`` and/or ``captions``, ``title``, ``number``, ``language``, ``video_size``
    → 202 ``{"lecture_id", "status": "queued"}``; 400 ``malformed_form`` when the form cannot be
    parsed, ``duplicate_field`` when a part comes twice; 507 ``insufficient_storage`` before the body
    is read when its length (``Content-Length`` or the gateway's ``X-LC-Body-Length``) does not fit in
    the store with the reserve kept (as for a resumable upload), and while it is read when the
    store's free space falls into the reserve."""
    parts = ingest()
    try:
        resumable.check_room_for_plain_upload(settings=parts.settings, records=parts.records, store=parts.store,
                                              size=_body_length())
    except IngestError:
        discard_rest(request.stream)  # so that a relay gets the answer, not a reset connection
        raise
    _read_form()
    _no_duplicates()
    number, declared = _upload_numbers()
    video, captions = _form_file("video"), _form_file("captions")
    if video is None and declared is not None:
        raise IngestError("'video_size' is the size of the video, and the form has no video; leave it out "
                          "when only captions are sent.", code="invalid_size")
    if video is not None:
        video.declared_size = declared
    result = ingest_lecture(
        settings=parts.settings, records=parts.records, store=parts.store, publish=parts.publish,
        request=UploadRequest(course_id, request.form.get("title", ""), number, request.form.get("language", ""),
                              video=video, captions=captions))
    return jsonify(result), 202


@lectures.post("/v1/courses/<course_id>/lectures/check")
def upload_check(course_id: str):
    """Whether a plain upload of ``X-LC-Body-Length`` bytes fits in the store with the reserve kept:
    200 ``{"ok": true}``, else 507 ``insufficient_storage`` (the gateway asks before it relays a body)."""
    parts = ingest()
    resumable.check_room_for_plain_upload(settings=parts.settings, records=parts.records, store=parts.store,
                                          size=_body_length())
    return {"ok": True}


@lectures.post("/v1/lectures/<lecture_id>/retry")
def retry(lecture_id: str):
    """A failed lecture re-queued → 202; 404 unknown, 409 not failed."""
    parts = ingest()
    return jsonify(retry_lecture(records=parts.records, publish=parts.publish, lecture_id=lecture_id)), 202


@lectures.patch("/v1/lectures/<lecture_id>")
def rename(lecture_id: str):
    """JSON ``title`` (a string) and ``number`` (0..MAX_NUMBER): the lecture renamed and renumbered
    → 204; 400 ``invalid_json``, 404 unknown, 409 ``number_taken`` (the gateway checked who may)."""
    data = request.get_json(silent=True)
    number = data.get("number") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("title"), str) or not isinstance(number, int) \
            or isinstance(number, bool) or not 0 <= number <= MAX_NUMBER:
        return err(400, "invalid_json", f'Send JSON: {{"title": a string, "number": 0 to {MAX_NUMBER}}}.')
    rename_lecture(ingest().records, lecture_id, data["title"], number)
    return "", 204


@lectures.delete("/v1/lectures/<lecture_id>")
def delete_lecture(lecture_id: str):
    """The lecture's rows and media removed → 204."""
    parts = ingest()
    delete_lectures(records=parts.records, store=parts.store, lecture_ids=[lecture_id], points=parts.points)
    return "", 204


@lectures.delete("/v1/courses/<course_id>")
def delete_course_route(course_id: str):
    """The course's lectures, their media and its resumable uploads removed → 204 (the gateway then
    deletes the course row)."""
    parts = ingest()
    delete_course(records=parts.records, store=parts.store, course_id=course_id, points=parts.points)
    return "", 204


# -- resumable uploads (see resumable.py) --------------------------------------------------

@uploads.post("/v1/courses/<course_id>/uploads")
def start_resumable(course_id: str):
    """JSON ``filename``, ``size``, ``title``, ``number``, ``language``; the gateway names who
    starts it in ``X-LC-Owner`` (an email) and ``X-LC-Owner-Role`` (admins are not capped) → 201
    the upload's status."""
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return err(400, "invalid_json", 'Send JSON: {"filename", "size", "title", "number"}.')
    number = data.get("number")
    if number is not None and (not isinstance(number, int) or isinstance(number, bool)
                               or not 0 <= number <= MAX_NUMBER):
        return err(400, "invalid_number", f"'number' must be an integer between 0 and {MAX_NUMBER}.")
    parts = ingest()
    declared = UploadRequest(course_id, data.get("title"), number, str(data.get("language") or ""),
                             video=Upload(data.get("filename"), None, data.get("size")))
    status = resumable.start_upload(
        settings=parts.settings, records=parts.records, store=parts.store, request=declared,
        owner=request.headers.get("X-LC-Owner") or None, capped=request.headers.get("X-LC-Owner-Role") != "admin")
    return jsonify(status), 201


@uploads.get("/v1/uploads/<upload_id>")
def resumable_status(upload_id: str):
    """The upload's status (the offset to resume from) → 200."""
    parts = ingest()
    return jsonify(resumable.upload_status(settings=parts.settings, records=parts.records, store=parts.store,
                                           publish=parts.publish, upload_id=upload_id))


@uploads.get("/v1/uploads/<upload_id>/course")
def resumable_course(upload_id: str):
    """``{"upload_id", "course_id"}`` of an upload (the gateway checks who may manage it) → 200; 404 unknown."""
    parts = ingest()
    return jsonify({"upload_id": upload_id,
                    "course_id": resumable.upload_course(settings=parts.settings, records=parts.records,
                                                         upload_id=upload_id)})


@uploads.post("/v1/uploads/<upload_id>/check")
def resumable_chunk_check(upload_id: str):
    """The checks a chunk with ``Content-Range: bytes a-b/size`` would meet before its bytes
    (no body) → 200 the status, or the error the chunk would get (202 when it found the upload
    finished: an interrupted finish it completed)."""
    parts = ingest()
    status = resumable.put_chunk(settings=parts.settings, records=parts.records, store=parts.store,
                                 publish=parts.publish, upload_id=upload_id,
                                 content_range=request.headers.get("Content-Range"), stream=None)
    return jsonify(status), 202 if status["state"] == "queued" else 200


@uploads.delete("/v1/uploads/<upload_id>")
def resumable_cancel(upload_id: str):
    """Cancels a receiving upload and removes its bytes → 200 the status (``cancelled``)."""
    parts = ingest()
    return jsonify(resumable.cancel_upload(settings=parts.settings, records=parts.records, store=parts.store,
                                           upload_id=upload_id))


@uploads.put("/v1/uploads/<upload_id>")
def resumable_chunk(upload_id: str):
    """One chunk with ``Content-Range: bytes a-b/size`` → 200 the status, 202 once the lecture is queued."""
    parts = ingest()
    try:
        status = resumable.put_chunk(settings=parts.settings, records=parts.records, store=parts.store,
                                     publish=parts.publish, upload_id=upload_id,
                                     content_range=request.headers.get("Content-Range"), stream=request.stream)
    finally:
        discard_rest(request.stream)
    return jsonify(status), 202 if status["state"] == "queued" else 200
