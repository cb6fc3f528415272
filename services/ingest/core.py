"""Ingest without HTTP: check an upload, store it, register the lecture, publish ``lecture.uploaded``.

The use cases take their stores as arguments: ``records`` (:class:`~.store.IngestStore`, every
row) and ``store`` (:class:`~lecturecopilot.storage.MediaStore`, the files).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import shutil
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO, Callable

from lecturecopilot import bus, media
from lecturecopilot.captions import TooLong, parse_captions
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.labels import clock
from lecturecopilot.settings import Settings
from lecturecopilot.storage import MediaStore
from lecturecopilot.text import TextError, blank, check_filename, check_text

from .errors import IngestError
from .numbers import MAX_NUMBER, check_number, number_hold_s, numbers_exhausted, number_taken
from .spool import no_room
from .store import CourseGone, IngestStore, NumbersExhausted

log = logging.getLogger(__name__)

VIDEO_EXTENSIONS = set(media.VIDEO_EXTENSIONS)  # the containers of media.CONTAINERS (README, upload form)
CAPTION_EXTENSIONS = {".vtt", ".srt"}
MAX_TITLE_CHARS = 200
LANGUAGE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}")  # a language tag: 'en', 'pt-BR', 'yue'
CAPTIONS_PAST_END_S = 30.0  # captions may run a little past the picture (a last cue held on screen)


@dataclass
class Upload:
    """One uploaded file: its declared name and a readable stream, or ``path``: a file already in
    the media store (a finished resumable upload, a form's spooled file), linked into the lecture's
    folder, not copied. With neither (a resumable upload's start) only its name and
    ``declared_size`` (bytes) are known yet."""

    filename: str
    stream: BinaryIO | None
    declared_size: int | None = None
    path: Path | None = None


@dataclass(frozen=True)
class UploadRequest:
    """What an upload declares about its lecture, as the client sent it until :func:`check_upload`
    returns it cleaned: ``course_id`` (a UUID), ``title`` (blank: the file's name), ``number`` (None:
    the course's next), ``language`` (a language tag, or ""), and its ``video`` and/or
    ``captions`` file (None: not sent)."""

    course_id: str
    title: str | None = ""
    number: int | None = None
    language: str = ""
    video: Upload | None = None
    captions: Upload | None = None


@dataclass(frozen=True)
class Kept:
    """What :func:`ingest_lecture` kept of an upload before registering its lecture: the URIs of
    the media and the captions ("": none), the lecture's duration in seconds (0: unknown) and the
    video's probe (None without a video)."""

    media_uri: str = ""
    captions_uri: str = ""
    duration_s: float = 0.0
    info: media.ProbeResult | None = None


def _save(upload: Upload, dst: Path, max_bytes: int) -> int:
    try:
        return _save_to(upload, dst, max_bytes)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise no_room() from None
        raise


def _size(n: int) -> str:
    """A byte limit for a message: "2 GB" or "50 MB" (binary units, as the limits are set)."""
    return f"{n / 1024**3:g} GB" if n >= 1024**3 else f"{n / 1024**2:g} MB"


def _save_to(upload: Upload, dst: Path, max_bytes: int) -> int:
    if upload.path is not None:  # a hard link: no second copy of a 2 GB file (same file system)
        dst.unlink(missing_ok=True)
        try:
            os.link(upload.path, dst)
        except OSError:  # another file system: copy
            shutil.copyfile(upload.path, dst)
        size = dst.stat().st_size
        if size > max_bytes:
            raise IngestError(f"The file is larger than the {_size(max_bytes)} limit.", status=413,
                              code="too_large")
    else:
        size = 0
        with open(dst, "wb") as out:
            while chunk := upload.stream.read(1024 * 1024):
                size += len(chunk)
                if size > max_bytes:
                    raise IngestError(f"The file is larger than the {_size(max_bytes)} limit.", status=413,
                                      code="too_large")
                out.write(chunk)
    if size == 0:
        raise IngestError(f"The file {upload.filename!r} is empty (0 bytes).", code="empty_file")
    if upload.declared_size is not None and upload.declared_size != size:
        state = "incomplete" if size < upload.declared_size else "larger than declared"
        raise IngestError(f"The upload is {state}: {size} bytes arrived, {upload.declared_size} were declared.",
                          code="size_mismatch")
    return size


def course_uuid(course_id: str) -> str:
    """``course_id`` in canonical form; :class:`IngestError` 404 when it is not a UUID."""
    try:
        return str(uuid.UUID(course_id))
    except (ValueError, TypeError, AttributeError):
        raise IngestError("Unknown course.", status=404, code="not_found") from None


def check_name(filename, kinds: set[str], what: str) -> str:
    """A file name that may be uploaded as ``what`` (``kinds``: its allowed extensions): plain (see
    :func:`lecturecopilot.text.check_filename`) and of an allowed type. Returns it. Raises
    :class:`IngestError` 400 ``invalid_filename`` or 415 ``unsupported_type``."""
    try:
        name = check_filename(filename)
    except TextError as e:
        raise IngestError(str(e), code="invalid_filename") from None
    if Path(name).suffix.lower() not in kinds:
        raise IngestError(f"{name!r} is not {what}.", status=415, code="unsupported_type")
    return name


def check_title(title, filename: str) -> str:
    """The lecture's title: ``title`` cleaned, or the file name's stem when ``title`` is blank,
    checked by :func:`lecturecopilot.text.check_text` (at most :data:`MAX_TITLE_CHARS`). Raises
    :class:`IngestError` 400 ``invalid_title``."""
    given = not (title is None or (isinstance(title, str) and blank(title)))
    try:
        return check_text(title if given else Path(filename).stem, "title", MAX_TITLE_CHARS)
    except TextError as e:
        why = "" if given else " (with no title given, the title is the file's name)"
        raise IngestError(f"{e}{why}", code="invalid_title") from None


def check_upload(records: IngestStore, request: UploadRequest, *, upload_hold_s: float,
                 own_upload: str | None = None) -> UploadRequest:
    """Every check an upload's declared metadata (``request``) must pass, made before any byte is
    kept (at the start of a resumable upload too): the course id is a UUID (the course's existence is
    the caller's to have checked: :func:`~.numbers.check_number`), the file names are plain and
    of an accepted type, the title is allowed, the language is a language tag, the number is free
    (no lecture has it and no open resumable upload but ``own_upload`` holds it: ``upload_hold_s``,
    see :func:`~.numbers.check_number`).
    Returns ``request`` cleaned (course id, title, file names; new :class:`Upload` objects).
    Raises :class:`IngestError` (404, 400, 415, 409)."""
    course_id = course_uuid(request.course_id)
    video, captions, language = request.video, request.captions, request.language
    video_name, captions_name = video and video.filename, captions and captions.filename
    if video_name is None and captions_name is None:
        raise IngestError(f"Send a 'video' file ({media.CONTAINERS_LABEL}) and/or a 'captions' file (WebVTT or SRT).",
                          code="missing_file")
    if video_name is not None:
        video_name = check_name(video_name, VIDEO_EXTENSIONS, f"a supported video type ({media.CONTAINERS_LABEL})")
    if captions_name is not None:
        captions_name = check_name(captions_name, CAPTION_EXTENSIONS, "a WebVTT (.vtt) or SRT (.srt) file")
    title = check_title(request.title, video_name or captions_name)
    if language and not (isinstance(language, str) and LANGUAGE.fullmatch(language)):
        raise IngestError("'language' must be a language code such as 'en' or 'pt-BR'.", code="invalid_language")
    check_number(records, course_id, request.number, upload_hold_s, own_upload)
    return replace(request, course_id=course_id, title=title,
                   video=video and replace(video, filename=video_name),
                   captions=captions and replace(captions, filename=captions_name))


_ingesting: Counter[str] = Counter()  # lectures this process is storing and registering now (see ingesting)
_ingesting_guard = threading.Lock()


def ingesting() -> set[str]:
    """The ids of the lectures this process is storing and registering now (whose files and
    objects have no row yet)."""
    with _ingesting_guard:
        return set(_ingesting)


def ingest_lecture(*, settings: Settings, records: IngestStore, store: MediaStore,
                   publish: Callable[[str, bytes, str], None], request: UploadRequest,
                   lecture_id: str | None = None, upload_id: str | None = None) -> dict:
    """Checks and stores an upload (``request``: its metadata and files), registers the lecture
    (status ``queued``), publishes ``lecture.uploaded``. Returns ``{"lecture_id", "status"}``.
    ``lecture_id`` (default a new one) lets a caller that may have to run this again (a resumable upload's finish) fix the id;
    ``upload_id`` names that resumable upload, whose own hold on its number does not count.

    Raises :class:`IngestError` (4xx) for input that can't be processed, leaving nothing behind:
    unknown course, no file, empty file, wrong type, bad title, taken number, no audio,
    unreadable, too long/large; 503 when the queue is unavailable.
    """
    request = check_upload(records, request, upload_hold_s=number_hold_s(settings), own_upload=upload_id)
    lecture_id = lecture_id or str(uuid.uuid4())
    with _ingesting_guard:
        _ingesting[lecture_id] += 1  # the leftovers sweep spares its files and objects until it is registered
    try:
        return _ingest(settings, records, store, publish, request, lecture_id=lecture_id, upload_id=upload_id)
    finally:
        with _ingesting_guard:
            _ingesting[lecture_id] -= 1
            if _ingesting[lecture_id] <= 0:
                del _ingesting[lecture_id]


def _ingest(settings: Settings, records: IngestStore, store: MediaStore, publish: Callable[[str, bytes, str], None],
            request: UploadRequest, *, lecture_id: str, upload_id: str | None) -> dict:
    """:func:`ingest_lecture`'s work once its metadata (``request``, cleaned) passed the checks."""
    try:
        kept = Kept()
        if request.video is not None:
            kept = _store_video(settings, store, request.video, lecture_id, needs_audio=request.captions is None)
        if request.captions is not None:
            captions_uri, duration = _store_captions(settings, store, request.captions, lecture_id, kept.duration_s)
            kept = replace(kept, captions_uri=captions_uri, duration_s=duration)
        number = _register(records, lecture_id, request, kept, hold_s=number_hold_s(settings), own_upload=upload_id)
        publish_uploaded(records, publish, ev.LectureUploaded(
            lecture_id=lecture_id, course_id=request.course_id, media_uri=kept.media_uri,
            captions_uri=kept.captions_uri, title=request.title, number=number, duration_s=kept.duration_s,
            language=request.language or ""), forget_on_failure=True)
    except BaseException:
        store.delete_lecture(lecture_id)  # the folder, and with object storage the objects kept so far
        raise
    log.info("ingested lecture %s (%s) into course %s", lecture_id, request.title, request.course_id)
    return {"lecture_id": lecture_id, "status": "queued"}


def _store_video(settings: Settings, store: MediaStore, video: Upload, lecture_id: str, *, needs_audio: bool) -> Kept:
    """Saves, probes and checks the video (``needs_audio``: no captions came with it) and keeps it
    in the store; returns its URI, duration and probe. Raises :class:`IngestError` 422 for a video
    that can't be processed (and what :func:`_save` raises)."""
    path = store.lecture_dir(lecture_id) / ("source" + Path(video.filename).suffix.lower())
    _save(video, path, settings.max_upload_bytes)
    try:
        info = media.probe(path)
        media.check_lecture_video(info, max_duration_s=settings.max_duration_s,
                                  needs_audio=needs_audio, max_pixels=settings.max_video_pixels)
        media.check_complete(path, info)
    except media.MediaError as e:
        raise IngestError(str(e).replace(str(path), video.filename), status=422,
                          code="unprocessable_media") from e
    return Kept(media_uri=store.keep(path, lecture_id, move=True), duration_s=info.duration_s, info=info)


def _store_captions(settings: Settings, store: MediaStore, captions: Upload, lecture_id: str,
                    duration: float) -> tuple[str, float]:
    """Saves and parses the captions beside a video of ``duration`` seconds (0: none); returns
    their URI and the lecture's duration. Raises :class:`IngestError` 422 for unreadable captions
    or ones that run past the video or the length limit."""
    cpath = store.lecture_dir(lecture_id) / ("captions" + Path(captions.filename).suffix.lower())
    _save(captions, cpath, 50 * 1024 * 1024)
    limit = min(settings.max_duration_s, duration + CAPTIONS_PAST_END_S) if duration else settings.max_duration_s
    try:
        last_s = parse_captions(cpath, max_end_s=limit)[-1].end_s  # the end of the last cue (laid end to end)
    except TooLong as e:
        if not e.end_s:  # refused by its number of cues
            raise IngestError(str(e), status=422, code="unprocessable_captions") from e
        last_s = e.end_s  # stopped at the first cue past the limit: the messages below say which one
    except ValueError as e:
        raise IngestError(str(e), status=422, code="unprocessable_captions") from e
    if last_s > settings.max_duration_s:
        raise IngestError(f"The captions run to {clock(last_s)}; the limit for a lecture is "
                          f"{settings.max_duration_s / 3600:.1f} h.", status=422, code="unprocessable_captions")
    if duration and last_s > duration + CAPTIONS_PAST_END_S:
        raise IngestError(f"The captions run to {clock(last_s)} but the video is {clock(duration)} long; "
                          "are they this video's captions?", status=422, code="unprocessable_captions")
    return store.keep(cpath, lecture_id, move=True), duration or last_s


def publish_uploaded(records: IngestStore, publish: Callable[[str, bytes, str], None], event: ev.LectureUploaded,
                     *, forget_on_failure: bool = False) -> None:
    """Publishes ``lecture.uploaded`` for a registered lecture with the idempotency key of its
    first generation (JetStream and the consumers drop a repeat). When the queue is unavailable
    raises :class:`IngestError` 503, first deleting the lecture's row if ``forget_on_failure``."""
    try:
        publish(bus.UPLOADED, event.SerializeToString(), bus.msg_id(bus.UPLOADED, event.lecture_id, 0))
    except Exception as e:
        log.warning("publishing lecture.uploaded for %s failed: %s", event.lecture_id, e)
        if forget_on_failure:
            records.forget_lecture(event.lecture_id)
        raise IngestError("The processing queue is unavailable; try again shortly.", status=503,
                          code="queue_unavailable") from e


def uploaded_event(row: dict) -> ev.LectureUploaded:
    """The ``lecture.uploaded`` event of a ``lectures`` row (its stored media, title and number)."""
    return ev.LectureUploaded(
        lecture_id=str(row["id"]), course_id=str(row["course_id"]),
        media_uri=MediaStore.uri_of_column(row["media_path"]) if row["media_path"] else "",
        captions_uri=MediaStore.uri_of_column(row["captions_path"]) if row["captions_path"] else "",
        title=row["title"], number=row["number"], duration_s=row["duration_s"] or 0.0, language=row["language"] or "")


NUMBER_TRIES = 50  # next-free-number attempts when concurrent uploads keep taking the one just read


def _register(records: IngestStore, lecture_id: str, request: UploadRequest, kept: Kept, *, hold_s: float,
              own_upload: str | None = None) -> int:
    """Registers the lecture of ``request`` (cleaned) with what was ``kept`` of it as ``queued``
    (:meth:`~.store.IngestStore.register_lecture`) and returns its number. A lecture with this id already there (a repeat after a lost connection, or
    a resumable upload's finish run again) is left as it is and its number returned. Without
    a ``number``, the lecture gets the course's next one, past the numbers open resumable uploads
    other than ``own_upload`` hold (``hold_s``: :func:`number_hold_s`), tried :data:`NUMBER_TRIES`
    times under concurrent uploads. Raises :class:`IngestError` 409 ``number_taken`` (also when
    none is left up to :data:`MAX_NUMBER`), 404 when the course was deleted meanwhile."""
    number, info = request.number, kept.info
    try:
        got = records.register_lecture({
            "id": lecture_id, "course_id": request.course_id, "title": request.title,
            "duration_s": kept.duration_s or None,
            "media_path": MediaStore.column(kept.media_uri) if kept.media_uri else None,
            "captions_path": MediaStore.column(kept.captions_uri) if kept.captions_uri else None,
            "media_info": None if info is None else json.dumps(info.__dict__), "language": request.language or None},
            number, tries=NUMBER_TRIES, hold_s=hold_s, max_number=MAX_NUMBER, own_upload=own_upload)
    except CourseGone:
        raise IngestError("Unknown course (or it was deleted while this lecture was being added).", status=404,
                          code="not_found") from None
    except NumbersExhausted:
        raise numbers_exhausted() from None
    if got is None:
        raise number_taken(number) if number is not None else IngestError(
            "Too many lectures are being added to this course at once; try again.", status=409, code="number_taken")
    return got


def retry_lecture(*, records: IngestStore, publish: Callable[[str, bytes, str], None], lecture_id: str) -> dict:
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
    row = records.requeue_failed(lecture_id)
    if row is None:
        if records.lecture(lecture_id) is None:
            raise IngestError("Unknown lecture.", status=404, code="not_found")
        raise IngestError("Only a failed lecture can be retried.", status=409, code="not_failed")
    event = uploaded_event(row)
    try:
        publish(bus.UPLOADED, event.SerializeToString(), bus.msg_id(bus.UPLOADED, lecture_id, row["generation"]))
    except Exception as e:
        records.mark_failed(lecture_id, f"Could not re-queue: {e}")
        raise IngestError(f"The processing queue is unavailable; try again shortly ({e}).", status=503,
                          code="queue_unavailable") from e
    log.info("re-queued lecture %s (generation %s)", lecture_id, row["generation"])
    return {"lecture_id": lecture_id, "status": "queued"}
