"""Ingest without HTTP: check an upload, store it, register the lecture, publish ``lecture.uploaded``."""

from __future__ import annotations

import json
import logging
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

from psycopg_pool import ConnectionPool

from lecturecopilot import bus, media
from lecturecopilot.captions import parse_captions
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.labels import clock
from lecturecopilot.settings import Settings
from lecturecopilot.storage import MediaStore

log = logging.getLogger(__name__)

VIDEO_EXTENSIONS = set(media.VIDEO_EXTENSIONS)  # the containers of media.CONTAINERS (README, upload form)
CAPTION_EXTENSIONS = {".vtt", ".srt"}
CAPTIONS_PAST_END_S = 30.0  # captions may run a little past the picture (a last cue held on screen)


class IngestError(Exception):
    """An upload that cannot be accepted. ``status`` is the HTTP status, ``code`` a stable error code."""

    def __init__(self, message: str, *, status: int = 400, code: str = "invalid_upload"):
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass
class Upload:
    """One uploaded file: its declared name and a readable stream."""

    filename: str
    stream: BinaryIO
    declared_size: int | None = None


def _save(upload: Upload, dst: Path, max_bytes: int) -> int:
    size = 0
    with open(dst, "wb") as out:
        while chunk := upload.stream.read(1024 * 1024):
            size += len(chunk)
            if size > max_bytes:
                raise IngestError(f"The file is larger than the {max_bytes // 1024**3} GB limit.", status=413,
                                  code="too_large")
            out.write(chunk)
    if size == 0:
        raise IngestError(f"The file {upload.filename!r} is empty (0 bytes).", code="empty_file")
    if upload.declared_size is not None and upload.declared_size != size:
        raise IngestError(f"The upload is incomplete: {size} bytes arrived, {upload.declared_size} were declared.",
                          code="size_mismatch")
    return size


def ingest_lecture(*, settings: Settings, pool: ConnectionPool, store: MediaStore,
                   publish: Callable[[str, bytes, str], None], course_id: str, title: str, number: int | None,
                   video: Upload | None, captions: Upload | None, language: str = "") -> dict:
    """Checks and stores an upload, registers the lecture (status ``queued``), publishes
    ``lecture.uploaded``. Returns ``{"lecture_id", "status"}``.

    Raises :class:`IngestError` (4xx) for input that can't be processed, leaving nothing behind:
    unknown course, no file, empty file, wrong type, no audio, unreadable, too long/large.
    """
    try:
        course_id = str(uuid.UUID(course_id))
    except ValueError:
        raise IngestError("Unknown course.", status=404, code="not_found") from None
    with pool.connection() as conn:
        if conn.execute("SELECT 1 FROM courses WHERE id=%s", (course_id,)).fetchone() is None:
            raise IngestError("Unknown course.", status=404, code="not_found")
    if video is None and captions is None:
        raise IngestError(f"Send a 'video' file ({media.CONTAINERS_LABEL}) and/or a 'captions' file (WebVTT or SRT).",
                          code="missing_file")
    if video is not None and Path(video.filename).suffix.lower() not in VIDEO_EXTENSIONS:
        raise IngestError(f"{video.filename!r} is not a supported video type ({media.CONTAINERS_LABEL}).", status=415,
                          code="unsupported_type")
    if captions is not None and Path(captions.filename).suffix.lower() not in CAPTION_EXTENSIONS:
        raise IngestError(f"{captions.filename!r} is not a WebVTT (.vtt) or SRT (.srt) file.", status=415,
                          code="unsupported_type")
    title = " ".join((title or "").split()) or Path((video or captions).filename).stem
    if any(ord(c) < 32 or ord(c) == 127 or 0xD800 <= ord(c) <= 0xDFFF for c in title):
        raise IngestError("'title' contains characters that are not allowed.", code="invalid_title")
    if len(title) > 200:
        raise IngestError("'title' must be at most 200 characters.", code="invalid_title")
    lecture_id = str(uuid.uuid4())
    folder = store.lecture_dir(lecture_id)
    try:
        media_uri = captions_uri = ""
        duration = 0.0
        info = None
        if video is not None:
            path = folder / ("source" + Path(video.filename).suffix.lower())
            _save(video, path, settings.max_upload_bytes)
            try:
                info = media.probe(path)
                media.check_lecture_video(info, max_duration_s=settings.max_duration_s,
                                          needs_audio=captions is None)
                media.check_complete(path, info)
            except media.MediaError as e:
                raise IngestError(str(e).replace(str(path), video.filename), status=422,
                                  code="unprocessable_media") from e
            media_uri, duration = store.uri(path), info.duration_s
        if captions is not None:
            cpath = folder / ("captions" + Path(captions.filename).suffix.lower())
            _save(captions, cpath, 50 * 1024 * 1024)
            try:
                words = parse_captions(cpath)
            except ValueError as e:
                raise IngestError(str(e), status=422, code="unprocessable_captions") from e
            captions_uri = store.uri(cpath)
            last_s = words[-1].end_s  # the end of the last cue (parse_captions lays cues end to end)
            if last_s > settings.max_duration_s:
                raise IngestError(f"The captions run to {clock(last_s)}; the limit for a lecture is "
                                  f"{settings.max_duration_s / 3600:.1f} h.", status=422, code="unprocessable_captions")
            if duration and last_s > duration + CAPTIONS_PAST_END_S:
                raise IngestError(f"The captions run to {clock(last_s)} but the video is {clock(duration)} long; "
                                  "are they this video's captions?", status=422, code="unprocessable_captions")
            if not duration:
                duration = last_s
        with pool.connection() as conn:
            if number is not None and conn.execute(
                    "SELECT 1 FROM lectures WHERE course_id=%s AND number=%s", (course_id, number)).fetchone():
                raise IngestError(f"The course already has a lecture {number}; choose another number "
                                  "(citations name lectures by number).", status=409, code="number_taken")
            if number is None:
                number = conn.execute("SELECT coalesce(max(number), 0) + 1 AS n FROM lectures WHERE course_id=%s",
                                      (course_id,)).fetchone()["n"]
            conn.execute(
                "INSERT INTO lectures (id, course_id, number, title, status, stage, duration_s, media_path, "
                "captions_path, media_info, language) VALUES (%s,%s,%s,%s,'queued','queued',%s,%s,%s,%s,%s)",
                (lecture_id, course_id, number, title, duration or None,
                 str(MediaStore.path_of(media_uri)) if media_uri else None,
                 str(MediaStore.path_of(captions_uri)) if captions_uri else None,
                 None if info is None else json.dumps(info.__dict__), language or None))
        event = ev.LectureUploaded(lecture_id=lecture_id, course_id=course_id, media_uri=media_uri,
                                   captions_uri=captions_uri, title=title, number=number,
                                   duration_s=duration, language=language or "")
        try:
            publish(bus.UPLOADED, event.SerializeToString(), bus.msg_id(bus.UPLOADED, lecture_id, 0))
        except Exception as e:
            with pool.connection() as conn:
                conn.execute("DELETE FROM lectures WHERE id=%s", (lecture_id,))
            raise IngestError(f"The processing queue is unavailable; try again shortly ({e}).", status=503,
                              code="queue_unavailable") from e
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    log.info("ingested lecture %s (%s) into course %s", lecture_id, title, course_id)
    return {"lecture_id": lecture_id, "status": "queued"}


def retry_lecture(*, pool: ConnectionPool, publish: Callable[[str, bytes, str], None], lecture_id: str) -> dict:
    """Re-queues a failed lecture through the upload path: bumps its ``generation``, resets it to
    ``queued`` and publishes ``lecture.uploaded`` again with the idempotency key of the new
    generation (so JetStream and the consumers treat it as a new run). Returns
    ``{"lecture_id", "status": "queued"}``. Raises :class:`IngestError` 404 (unknown lecture) or
    409 (the lecture has not failed).
    """
    try:
        lecture_id = str(uuid.UUID(lecture_id))
    except ValueError:
        raise IngestError("Unknown lecture.", status=404, code="not_found") from None
    with pool.connection() as conn:
        row = conn.execute(
            "UPDATE lectures SET generation=generation+1, status='queued', stage='queued', progress=0, error=NULL, "
            "updated_at=now() WHERE id=%s AND status='failed' RETURNING *", (lecture_id,)).fetchone()
        if row is None:
            if conn.execute("SELECT 1 FROM lectures WHERE id=%s", (lecture_id,)).fetchone() is None:
                raise IngestError("Unknown lecture.", status=404, code="not_found")
            raise IngestError("Only a failed lecture can be retried.", status=409, code="not_failed")
    event = ev.LectureUploaded(
        lecture_id=lecture_id, course_id=str(row["course_id"]),
        media_uri=MediaStore.uri(Path(row["media_path"])) if row["media_path"] else "",
        captions_uri=MediaStore.uri(Path(row["captions_path"])) if row["captions_path"] else "",
        title=row["title"], number=row["number"], duration_s=row["duration_s"] or 0.0, language=row["language"] or "")
    try:
        publish(bus.UPLOADED, event.SerializeToString(), bus.msg_id(bus.UPLOADED, lecture_id, row["generation"]))
    except Exception as e:
        with pool.connection() as conn:
            conn.execute("UPDATE lectures SET status='failed', stage='failed', error=%s WHERE id=%s",
                         (f"Could not re-queue: {e}", lecture_id))
        raise IngestError(f"The processing queue is unavailable; try again shortly ({e}).", status=503,
                          code="queue_unavailable") from e
    log.info("re-queued lecture %s (generation %s)", lecture_id, row["generation"])
    return {"lecture_id": lecture_id, "status": "queued"}


def delete_lectures(*, pool: ConnectionPool, store: MediaStore, lecture_ids: list[str], course_id: str | None = None) -> int:
    """Deletes lectures (their rows, and by cascade transcript, segments, chapters) and their media
    folders; with ``course_id``, the course row too (and by cascade its answers). The ask
    service's search index drops a lecture's points at its next sync with Postgres (the row is
    gone), and workers drop in-flight events of a deleted lecture. Returns the lectures deleted."""
    uploads: list[str] = []
    with pool.connection() as conn:
        with conn.transaction():
            n = conn.execute("DELETE FROM lectures WHERE id = ANY(%s::uuid[])", (lecture_ids,)).rowcount
            if course_id is not None:
                uploads = [str(r["id"]) for r in conn.execute("SELECT id FROM uploads WHERE course_id=%s",
                                                              (course_id,)).fetchall()]
                conn.execute("DELETE FROM courses WHERE id=%s", (course_id,))
    for lid in lecture_ids:
        store.delete_lecture(lid)
    for uid in uploads:  # resumable uploads still receiving: their bytes go with the course
        (store.root / "uploads" / f"{uid}.part").unlink(missing_ok=True)
    return n
