"""Lectures: upload (multipart, or resumable in ``Content-Range`` chunks), read with chapters,
rename / renumber, delete, retry a failed one, its video (HTTP Range), its transcript and its
live progress (SSE). Uploads, deletions and retries are relayed to ingest."""

from __future__ import annotations

import json
import time
from pathlib import Path

from flask import Blueprint, Response, g, redirect, request, send_file, stream_with_context
from werkzeug.http import parse_range_header

from lecturecopilot import db
from lecturecopilot.storage import MediaUnavailable

from .. import events as ev, ingest_client, responses as out, schemas, store
from ..access import course_row, lecture_and_course, lecture_row, managed_upload, person
from ..context import ctx
from ..contract import accepts, returns, takes
from ..errors import ApiError, not_found
from .courses import lecture_json

bp = Blueprint("lectures", __name__)
RENAME_TIMEOUT_S = 30  # ingest's PATCH /v1/lectures/{id}: one UPDATE


@bp.post("/api/courses/<course_id>/lectures")
@takes("multipart/form-data", schemas.LectureUploadForm)
@returns(out.LectureQueued, 202)
def upload_lecture(course_id: str):
    """Uploads a lecture (owner or admin), streamed to ingest chunked (no copy in the gateway). Ingest
    is asked first whether the body (its declared length, ``X-LC-Body-Length``) fits in the store
    with the upload reserve kept: a body that does not is refused (507 ``insufficient_storage``)
    before a byte of it is read, its connection closed."""
    c = course_row(course_id, manage=True)
    length = {"X-LC-Body-Length": str(request.content_length or 0)}
    checked = ingest_client.relay("POST", f"/v1/courses/{c['id']}/lectures/check", headers=length, timeout_s=60)
    if checked.status_code != 200:
        return checked
    return ingest_client.relay_upload("POST", f"/v1/courses/{c['id']}/lectures", {
        "Content-Type": request.headers.get("Content-Type", ""), **length}, ctx().settings.upload_timeout_s + 60)


@bp.post("/api/courses/<course_id>/uploads")
@accepts(schemas.UploadStart)
@returns(out.UploadStatus, 201)
def start_resumable_upload(course_id: str, body: schemas.UploadStart):
    """Starts a resumable upload (owner or admin); ingest caps open uploads per person (not admins)."""
    c = course_row(course_id, manage=True)
    who = g.principal
    return ingest_client.relay("POST", f"/v1/courses/{c['id']}/uploads", json=body.model_dump(exclude_none=True),
                               timeout_s=60, headers={"X-LC-Owner": who.email.lower(), "X-LC-Owner-Role": who.role})


@bp.get("/api/uploads/<upload_id>")
@returns(out.UploadStatus)
def resumable_upload_status(upload_id: str):
    """Where a resumable upload stands (the offset to resume at)."""
    uid = managed_upload(upload_id, ingest_client.upload_course)
    return ingest_client.relay("GET", f"/v1/uploads/{uid}", timeout_s=300)


@bp.delete("/api/uploads/<upload_id>")
@returns(out.UploadStatus)
def cancel_resumable_upload(upload_id: str):
    """Cancels a resumable upload that is still receiving (owner or admin): its bytes are removed
    and it no longer counts among its uploader's open uploads."""
    uid = managed_upload(upload_id, ingest_client.upload_course)
    return ingest_client.relay("DELETE", f"/v1/uploads/{uid}", timeout_s=60)


@bp.put("/api/uploads/<upload_id>")
@takes("application/octet-stream")
@returns(out.UploadStatus, 200)
@returns(out.UploadStatus, 202, description="the last chunk: the lecture is queued")
def resumable_upload_chunk(upload_id: str):
    """One chunk at the server's offset (``Content-Range: bytes a-b/size``); 409 elsewhere. Ingest
    checks the chunk before a byte of its body is read (range, offset, the upload still open, its
    number still free): a refused chunk is answered at once and its connection closed unread."""
    uid = managed_upload(upload_id, ingest_client.upload_course)
    rng = {"Content-Range": request.headers.get("Content-Range", "")}
    checked = ingest_client.relay("POST", f"/v1/uploads/{uid}/check", headers=rng, timeout_s=60)
    if checked.status_code != 200:
        return checked
    return ingest_client.relay_upload("PUT", f"/v1/uploads/{uid}", rng, ctx().settings.upload_chunk_timeout_s + 300)


@bp.get("/api/lectures/<lecture_id>")
@returns(out.LectureDetail)
def get_lecture(lecture_id: str):
    """A lecture with its status and chapters."""
    r = lecture_row(lecture_id)
    chapters = store.chapters(ctx().pool, r["id"])
    return {"id": str(r["id"]), "course_id": str(r["course_id"]), "number": r["number"], "title": r["title"],
            "status": r["status"], "stage": r["stage"], "progress": r["progress"], "error": r["error"],
            "duration_s": r["duration_s"],
            "chapters": [{"start_s": c["start_s"], "end_s": c["end_s"], "title": c["title"],
                          "summary": "\n".join(f"• {b}" for b in c["bullets"]), "bullets": c["bullets"]}
                         for c in chapters]}


@bp.patch("/api/lectures/<lecture_id>")
@accepts(schemas.LectureUpdate)
@returns(out.LectureItem)
def update_lecture(lecture_id: str, body: schemas.LectureUpdate):
    """Renames or renumbers a lecture (owner or admin); 409 ``number_taken`` when another lecture
    of the course has the number, also when two requests race for it (the unique index decides).
    Ingest, which owns the lectures, makes the change (``PATCH /v1/lectures/{id}``): 503
    ``ingest_unavailable`` while it is not reachable.
    Ask reads numbers and titles from Postgres at every request, so answers, search, the outline
    and exam-prep pointers show the change at once."""
    r = lecture_row(lecture_id, manage=True)
    title = r["title"] if body.title is None else body.title
    number = r["number"] if body.number is None else body.number
    resp = ingest_client.call("PATCH", f"/v1/lectures/{r['id']}", json={"title": title, "number": number},
                              timeout_s=RENAME_TIMEOUT_S)  # ingest owns the lectures rows
    if resp.status_code == 409:
        raise ApiError(409, "number_taken", f"The course already has a lecture {number}; citations name "
                                            "lectures by number, so each needs its own.")
    if resp.status_code == 404:
        raise not_found("lecture")
    if resp.status_code != 204:
        raise ApiError(503, "ingest_unavailable", "The upload service could not change the lecture; try again "
                       "shortly.", headers={"Retry-After": "5"})
    row = store.lecture(ctx().pool, r["id"])
    if row is None:  # deleted meanwhile
        raise not_found("lecture")
    return lecture_json(row)


@bp.delete("/api/lectures/<lecture_id>")
@returns(None, 204, media="")
def delete_lecture(lecture_id: str):
    """Deletes a lecture with its media and search points (owner or admin)."""
    return ingest_client.delete(f"/v1/lectures/{lecture_row(lecture_id, manage=True)['id']}", "lecture")


@bp.post("/api/lectures/<lecture_id>/retry")
@returns(out.LectureQueued, 202)
def retry_lecture(lecture_id: str):
    """Re-queues a failed lecture (owner or admin); 409 otherwise."""
    r = lecture_row(lecture_id, manage=True)
    resp = ingest_client.call("POST", f"/v1/lectures/{r['id']}/retry")
    return Response(resp.content, status=resp.status_code, content_type="application/json")


def _status_json(r: dict) -> dict:
    return {"status": r["status"], "stage": r["stage"], "progress": r["progress"], "error": r["error"]}


def _progress(lecture_id, release):
    """The SSE lines of a lecture's status changes (see :func:`lecture_events`); frees its slot."""
    poll = db.retry_on_disconnect(store.lecture_status)
    pool, max_s = ctx().pool, ctx().settings.event_stream_max_s
    try:
        yield "retry: 3000\n\n"
        last, last_sent = None, time.time()
        deadline = time.time() + max_s
        while time.time() < deadline:
            row = poll(pool, lecture_id)
            if row is None:
                yield f"event: deleted\ndata: {json.dumps({'lecture_id': str(lecture_id)})}\n\n"
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


@bp.get("/api/lectures/<lecture_id>/events")
@returns(None, 200, media="text/event-stream", events=ev.LECTURE_EVENTS,
         description="`status` events, then `deleted` or the end")
def lecture_events(lecture_id: str):
    """SSE: ``status`` events ``{"status", "stage", "progress", "error"}`` whenever they change
    (Postgres polled every 0.5 s), a comment every 5 s; the stream ends after ready/failed, or
    after ``event_stream_max_s`` (the browser's EventSource reconnects in 3 s). 429
    ``too_many_streams`` beyond the caps (``LC_MAX_EVENT_STREAMS``, ``LC_MAX_EVENT_STREAMS_PERSON``)."""
    r = lecture_row(lecture_id)
    release = ctx().streams.take(person())
    resp = Response(stream_with_context(_progress(r["id"], release)), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    resp.call_on_close(release)  # also when the stream never started
    return resp


@bp.get("/api/lectures/<lecture_id>/video")
@returns(None, 200, media="video/mp4", description="the video; HTTP Range requests answer 206")
@returns(None, 302, media="", description="with object storage (LC_MEDIA_URL): to a presigned URL of the video")
def get_video(lecture_id: str):
    """The lecture's playable video (the web copy, else the upload); 404 ``no_video`` before it exists.
    With object storage: 302 (``no-store``) to a presigned URL of the object, valid
    ``LC_VIDEO_URL_S`` (the store answers Range requests; the player asks again when it expires);
    503 ``media_unavailable`` when the store has no credentials; 429 ``too_many_streams`` beyond
    ``LC_MAX_VIDEO_STREAMS`` / ``LC_MAX_VIDEO_STREAMS_PERSON`` bodies at once. A public course's video may be
    kept an hour by any cache (``public``); a private course's only by the viewer's browser
    (``private``, ``Vary: Authorization, Cookie``): a shared cache in front must not hand it to
    someone else, as the default ``public`` of ``send_file`` let it."""
    r, course = lecture_and_course(lecture_id)
    path = r["web_path"] or r["media_path"]
    try:
        url = path and ctx().media.video_url(path)
    except MediaUnavailable as e:
        raise ApiError(503, "media_unavailable", str(e)) from None
    if url:  # valid LC_VIDEO_URL_S: never cached, so that the player's next request gets a fresh one
        resp = redirect(url, 302)
        resp.headers["Cache-Control"] = "no-store"
        return resp
    if not path or not Path(path).exists():
        raise ApiError(404, "no_video", "This lecture has no playable video (yet).")
    # werkzeug answers Range requests (206 Partial Content) for conditional=True; a Range it cannot read
    # ("bytes=5-1", "bytes=abc") or of several ranges it would refuse with 416: ignored, the whole video
    # is sent (RFC 9110 §14.2 lets a server ignore Range), as a player that sent it can use
    rng = request.headers.get("Range")
    if rng is not None and ((parsed := parse_range_header(rng)) is None or parsed.units != "bytes"
                            or len(parsed.ranges) != 1):
        request.environ.pop("HTTP_RANGE", None)
    # each body holds a thread while the client takes it: capped per person and per process, as a
    # client opening connection after connection that never read held every thread (LC_MAX_VIDEO_STREAMS)
    release = ctx().videos.take(person(), signed_in=g.principal is not None)
    try:
        resp = send_file(path, mimetype="video/mp4", conditional=True, max_age=3600)
    except BaseException:
        release()
        raise
    resp.direct_passthrough = False  # werkzeug hands a passthrough body to the server as is and would never
    resp.call_on_close(release)      # call this; iterated (8 KiB blocks), the slot is freed when the body ends
    if course["visibility"] != "public":
        resp.headers["Cache-Control"] = "private, max-age=3600"
        resp.headers["Vary"] = "Authorization, Cookie"
    return resp


@bp.get("/api/lectures/<lecture_id>/transcript")
@returns(out.Transcript)
def get_transcript(lecture_id: str):
    """The lecture's sentences (speech, and one per slide at the second it appears)."""
    r = lecture_row(lecture_id)
    rows = store.transcript(ctx().pool, r["id"])
    return {"segments": [{"start_s": x["start_s"], "end_s": x["end_s"], "text": x["text"], "kind": x["kind"]}
                         for x in rows]}
