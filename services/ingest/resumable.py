"""Resumable uploads in chunks: ``Content-Range`` PUTs (RFC 9110 §14.4), parsed by Werkzeug.

An upload is ``receiving`` → ``finishing`` → ``queued`` | ``refused``, or ``receiving`` →
``expired``. Its bytes live in ``<media>/uploads/<id>.part`` until it is finished or expires, or
with object storage (``LC_MEDIA_URL``) in one object per chunk (:mod:`.s3parts`); the backend
is :func:`.parts.parts_of`'s.

1. :func:`start_upload` checks, before a byte arrives, everything the finished file will be
   checked for that does not need its bytes (the same :func:`~.core.check_upload`: course, file
   name and type, title, number still free), the size limit, how many uploads the person has
   open (``LC_UPLOADS_OPEN_MAX``, 429) and whether the store can hold it: its size must fit in
   the free space less what open uploads still expect and less ``LC_UPLOAD_DISK_RESERVE_BYTES``
   (507). Nothing is accepted for another name or size afterwards. While it is open (receiving
   and not idle, or finishing) the upload holds its lecture number: another upload declaring it is
   refused (409) and one without a number never gets it (:func:`~.core.number_hold_s`).
2. :func:`put_chunk` appends one chunk ``bytes first-last/size`` (with object storage, at least
   ``LC_UPLOAD_MIN_CHUNK_BYTES`` unless it is the last, else 400 ``chunk_too_small``). A chunk must start at the
   current offset (the bytes on disk); otherwise :class:`IngestError` 409 tells the client where
   to resume. One writer per upload: the chunk is written under an exclusive lock of the
   ``.part`` file (:func:`.partfiles.locked_part`; with object storage a Postgres advisory lock on
   a connection of its own); no pooled connection or transaction is held while the bytes stream. A chunk
   that does not arrive whole (cut off, too short or long, past its time bound) is discarded: the
   offset stays where it was. A chunk of an upload whose number a lecture took anyway (a
   ``PATCH`` of another lecture's number) is refused (409) before its bytes, the upload with it;
   the gateway asks these checks (``stream`` None) before it reads a chunk's body.
3. When the offset reaches the size, the upload turns ``finishing`` and the file goes through
   :func:`~.core.ingest_lecture` (the checks of a multipart upload: type, ffprobe, duration, audio)
   under the same lock, with the lecture id fixed by the upload id (:func:`lecture_id_of`). If
   ingest dies meanwhile, the kernel drops its lock and the upload stays ``finishing`` (or
   ``receiving`` with every byte): the next GET or PUT of it, or the sweeper at the next start of
   ingest, finishes it; a lecture already registered under that id is published again (the
   pipeline drops the repeat), never registered twice. A refused file leaves the upload
   ``refused`` with the reason; an unavailable queue (503) leaves it ``finishing`` for a retry.
4. An upload with no chunk for ``LC_UPLOAD_IDLE_S`` expires: :func:`sweep` (at ingest start,
   every :func:`sweep_interval_s` and, for expiry, at every start of an upload) marks it
   ``expired`` and removes its bytes, and removes ``.part`` files no open upload owns.

:func:`upload_status` gives the offset to resume from (for a client that lost its connection).

This module is the state machine and its policy; the rows are :class:`~.store.IngestStore`'s, the
bytes and their lock :mod:`.partfiles`'.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace
from datetime import timedelta
from typing import BinaryIO, Callable

from lecturecopilot.settings import Settings
from lecturecopilot.storage import MediaStore

from . import spool, uploadpolicy as policy
from .core import Upload, UploadRequest, check_upload, ingest_lecture, publish_uploaded, uploaded_event
from .errors import IngestError
from .numbers import number_hold_s, number_taken
from .partfiles import Busy
from .parts import parts_of
from .store import CourseGone, IngestStore

log = logging.getLogger(__name__)

OPEN = ("receiving", "finishing")
# uuid5 namespace of the lecture ids of resumable uploads (any fixed UUID; this one was drawn once)
LECTURE_NAMESPACE = uuid.UUID("6f1b1f0e-4c35-4c8e-9d7a-2f0c9a1e5b42")
ORPHAN_GRACE_S = 60.0  # a .part file is created just before its row: younger ones are never orphans

Publish = Callable[[str, bytes, str], None]


def lecture_id_of(upload_id: str) -> str:
    """The id the lecture of upload ``upload_id`` gets (uuid5 in :data:`LECTURE_NAMESPACE`)."""
    return str(uuid.uuid5(LECTURE_NAMESPACE, str(upload_id)))


def sweep_interval_s(settings: Settings) -> float:
    """How often ingest sweeps (seconds): a quarter of the idle expiry, between 1 s and 60 s."""
    return max(1.0, min(60.0, settings.upload_idle_s / 4))


def _row(records: IngestStore, settings: Settings, upload_id: str) -> dict:
    """The upload's row (with ``idle``); :class:`IngestError` 404 for an unknown or malformed id."""
    try:
        upload_id = str(uuid.UUID(upload_id))
    except (ValueError, TypeError):
        raise IngestError("Unknown upload.", status=404, code="not_found") from None
    row = records.upload(upload_id, settings.upload_idle_s)
    if row is None:
        raise IngestError("Unknown upload.", status=404, code="not_found")
    return row


def _status(settings: Settings, row: dict, at: int) -> dict:
    """The status body of an upload ``row`` with ``at`` bytes received (see :func:`upload_status`)."""
    expires = (row["active_at"] + timedelta(seconds=settings.upload_idle_s)).isoformat() \
        if row["state"] == "receiving" else None
    return {"upload_id": str(row["id"]), "course_id": str(row["course_id"]), "filename": row["filename"],
            "size": row["size"], "offset": at, "state": row["state"], "expires_at": expires,
            "lecture_id": str(row["lecture_id"]) if row["lecture_id"] else None, "error": row["error"]}


def _closed(row: dict) -> IngestError:
    """The 410 for a chunk or finish of an upload that is no longer open."""
    if row["state"] == "expired":
        return IngestError(f"This upload expired: {row['error']} Start a new one.", status=410, code="upload_expired")
    return IngestError(f"This upload is already {row['state']}.", status=410, code="upload_closed")


# -- start -----------------------------------------------------------------------------------

def start_upload(*, settings: Settings, records: IngestStore, store: MediaStore, request: UploadRequest,
                 owner: str | None = None, capped: bool = True) -> dict:
    """Registers a resumable upload of ``request.video`` (its ``filename`` and ``declared_size``
    in bytes, as the client sent them; no stream) for ``request.course_id`` by ``owner`` (an email;
    ``capped``: counted against ``LC_UPLOADS_OPEN_MAX``); returns its status (``offset`` 0,
    ``expires_at``). Raises :class:`IngestError`: 404 unknown course, 400 bad file name, title
    or size, 415 wrong type, 409 number taken, 413 over the size limit, 429 too many open uploads
    (with ``Retry-After``), 507 no room in the store."""
    size = request.video.declared_size if request.video is not None else None
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise IngestError("'size' must be the file's size in bytes (a positive integer).", code="invalid_size")
    request = check_upload(records, replace(request, captions=None), upload_hold_s=number_hold_s(settings))
    if size > settings.max_upload_bytes:
        raise IngestError(f"The file is larger than the {settings.max_upload_bytes // 1024**3} GB limit.",
                          status=413, code="too_large")
    expire_idle(settings=settings, records=records, store=store)
    upload_id = str(uuid.uuid4())
    parts = parts_of(store, records)
    parts.create(upload_id)  # before the row: a row never lacks its bytes (the sweeper spares young orphans)
    starting = policy.Starting(course_id=request.course_id, number=request.number, size=size, owner=owner,
                               capped=capped)
    try:
        records.register_upload(
            {"id": upload_id, "course_id": request.course_id, "filename": request.video.filename, "size": size,
             "meta": {"title": request.title, "number": request.number, "language": request.language or ""},
             "owner": owner}, open_states=OPEN, idle_s=settings.upload_idle_s,
            admit=lambda open_rows: policy.admit(settings, store, open_rows, starting, expected=parts.expected))
    except CourseGone:
        parts.remove(upload_id)
        raise IngestError("Unknown course.", status=404, code="not_found") from None
    except BaseException:
        parts.remove(upload_id)
        raise
    return _status(settings, _row(records, settings, upload_id), 0)


# -- status and chunks -----------------------------------------------------------------------

def upload_status(*, settings: Settings, records: IngestStore, store: MediaStore, publish: Publish,
                  upload_id: str) -> dict:
    """Where ``upload_id`` stands: ``offset`` (bytes received), ``state`` (receiving | finishing |
    queued | refused | expired), ``expires_at`` while receiving, the lecture id once queued, the
    reason once refused or expired. An interrupted finish is resumed first, an idle upload expired.
    Raises :class:`IngestError` 404."""
    row = _row(records, settings, upload_id)
    parts = parts_of(store, records)
    if row["state"] in OPEN:
        try:
            with parts.locked(str(row["id"])) as f:
                row = _settle(settings, records, store, publish, _row(records, settings, upload_id), f)
        except Busy:
            pass  # a chunk is streaming or a finish is running: report where it stands
        except IngestError:
            row = _row(records, settings, upload_id)  # refused (shown in the status) or the queue is down
    return _status(settings, row, parts.offset(row))


def upload_course(*, settings: Settings, records: IngestStore, upload_id: str) -> str:
    """The id of the course ``upload_id`` uploads into (for the gateway's check of who may
    manage it). Raises :class:`IngestError` 404 for an unknown or malformed id."""
    return str(_row(records, settings, upload_id)["course_id"])


def _settle(settings: Settings, records: IngestStore, store: MediaStore, publish: Publish, row: dict, f) -> dict:
    """Under the upload's lock (``f``: its part, or None): finishes an upload whose bytes are all
    there (an interrupted finish), expires an idle one; returns its row as it is then. Raises
    what the finish raises."""
    full = f is not None and f.size() == row["size"]
    if row["state"] == "finishing" or (row["state"] == "receiving" and full):
        _finish(settings, records, store, publish, row, f)
    elif row["state"] == "receiving" and f is None:  # its bytes were removed from the store
        records.set_upload_state(str(row["id"]), "expired", frm=("receiving",), error="its bytes were removed.")
    elif row["idle"]:
        _expire(settings, records, store, row)
    return _row(records, settings, str(row["id"]))


def put_chunk(*, settings: Settings, records: IngestStore, store: MediaStore, publish: Publish, upload_id: str,
              content_range: str | None, stream: BinaryIO | None) -> dict:
    """Appends the chunk in ``stream`` described by ``content_range`` (``bytes a-b/size``). With
    ``stream`` None nothing is written: the chunk meets every check it would meet before its
    bytes (the gateway asks this before it reads a body, so a refused chunk is never sent) and
    the status is returned.

    Returns the status; when the last byte arrived, the lecture is queued (``state`` queued,
    ``lecture_id`` set); a chunk sent again after an interrupted finish finishes it. Raises
    :class:`IngestError`: 400 missing/invalid range, a body of another length or one cut off
    (the offset unchanged), a chunk other than the last under the backend's minimum
    (``chunk_too_small``: ``LC_UPLOAD_MIN_CHUNK_BYTES`` with object storage), 408 a body slower than ``LC_UPLOAD_CHUNK_TIMEOUT_S`` (discarded), 409
    a chunk that does not start at the offset (or another client writing) or of an upload whose
    lecture number a lecture took meanwhile (the upload is refused), 410 an upload already
    finished or expired, and what the finish raises (see :func:`~.core.ingest_lecture`).
    """
    row = _row(records, settings, upload_id)
    upload_id = str(row["id"])
    if row["state"] not in OPEN:
        raise _closed(row)
    rng = policy.chunk_range(content_range, row["size"])
    parts = parts_of(store, records)
    policy.check_chunk_size(rng, row["size"], parts.min_chunk(settings))
    try:
        with parts.locked(upload_id) as f:
            row = _row(records, settings, upload_id)  # as it is now that this request holds the lock
            if row["state"] in OPEN:
                row = _settle(settings, records, store, publish, row, f)
            if row["state"] != "receiving":
                if row["state"] == "queued" and row["lecture_id"]:  # finished by this request
                    return _status(settings, row, row["size"])
                raise _closed(row)
            _refuse_if_taken(records, store, row)  # before the bytes: a last chunk of 2 GB too
            at = f.size()
            if rng.start != at:
                raise IngestError(f"The next chunk must start at byte {at}.", status=409, code="wrong_offset",
                                  extra={"offset": at})
            if stream is None:
                return _status(settings, row, at)
            records.touch_upload(upload_id)
            at += f.receive(stream, at, rng.stop - rng.start)
            records.touch_upload(upload_id)
            if at < row["size"]:
                return _status(settings, _row(records, settings, upload_id), at)  # as touched: a fresh expiry
            _finish(settings, records, store, publish, row, f)
    except Busy:
        raise IngestError("Another chunk of this upload is being written; retry.", status=409, code="busy") from None
    return _status(settings, _row(records, settings, upload_id), row["size"])


def cancel_upload(*, settings: Settings, records: IngestStore, store: MediaStore, upload_id: str) -> dict:
    """Cancels a receiving upload: ``cancelled``, its bytes removed, its place among the open
    uploads of its owner (``LC_UPLOADS_OPEN_MAX``) free at once rather than when it expires. Returns
    the status. Raises :class:`IngestError` 404 unknown, 409 ``busy`` while a chunk is being written,
    410 an upload no longer receiving (finished, refused, expired or cancelled)."""
    row = _row(records, settings, upload_id)
    upload_id = str(row["id"])
    try:
        with parts_of(store, records).locked(upload_id):
            row = _row(records, settings, upload_id)
            if row["state"] != "receiving" or not records.set_upload_state(
                    upload_id, "cancelled", frm=("receiving",), error="cancelled by its uploader."):
                raise _closed(row)
            parts_of(store, records).remove(upload_id)
    except Busy:
        raise IngestError("A chunk of this upload is being written; retry.", status=409, code="busy") from None
    log.info("upload %s cancelled", upload_id)
    return _status(settings, _row(records, settings, upload_id), 0)


def _refuse_if_taken(records: IngestStore, store: MediaStore, row: dict) -> None:
    """Refuses a receiving upload (the caller holds its lock) whose declared lecture number a
    lecture took meanwhile (one registered in the moment between this upload's check and its
    start, or while it finished; open uploads otherwise hold their number): ``refused``, its bytes
    removed, :class:`IngestError` 409 ``number_taken`` raised, so the client stops sending now
    rather than at the last chunk."""
    number = (row["meta"] or {}).get("number")
    if number is None or not records.number_in_use(str(row["course_id"]), number):
        return
    err = number_taken(number)
    if records.set_upload_state(str(row["id"]), "refused", frm=("receiving",), error=str(err)):
        parts_of(store, records).remove(str(row["id"]))
    raise err


# -- finishing, expiry, sweeping --------------------------------------------------------------

def _finish(settings: Settings, records: IngestStore, store: MediaStore, publish: Publish, row: dict, f) -> None:
    """Registers the lecture of a complete upload (the caller holds its lock; ``f`` its part, or
    None when its bytes are gone): ``finishing``, then
    ``queued`` with :func:`lecture_id_of` as the lecture's id, or ``refused`` with the reason
    (raised). Safe to run again after a crash at any point (see the module docstring)."""
    upload_id = str(row["id"])
    if not records.set_upload_state(upload_id, "finishing", frm=OPEN):
        return
    parts = parts_of(store, records)
    lecture_id = lecture_id_of(upload_id)
    meta = row["meta"] or {}
    try:
        if (existing := records.lecture(lecture_id)) is not None:  # registered before a crash: publish again
            publish_uploaded(records, publish, uploaded_event(existing))
        elif f is None or (part := f.local_file()) is None:
            raise IngestError("The upload's bytes were lost before it was finished; start it again.",
                              status=410, code="upload_lost")
        else:
            video = Upload(row["filename"], None, row["size"], path=part)
            request = UploadRequest(str(row["course_id"]), meta.get("title", ""), meta.get("number"),
                                    meta.get("language", ""), video=video)
            ingest_lecture(settings=settings, records=records, store=store, publish=publish, request=request,
                           lecture_id=lecture_id, upload_id=upload_id)
    except IngestError as e:
        if e.status < 500:  # the file itself is refused; a server-side failure stays 'finishing'
            records.set_upload_state(upload_id, "refused", frm=("finishing",), error=str(e))
            parts.remove(upload_id)
        elif f is not None:
            f.discard_local()
        raise
    except Exception:  # the object store failed: 'finishing' stays, for a retry
        if f is not None:
            f.discard_local()
        raise
    # the bytes go before the state turns: a client that reads 'queued' finds no chunk left (a crash
    # between the two leaves 'finishing', and the next sweep takes the registered-lecture branch)
    parts.remove(upload_id)
    records.set_upload_state(upload_id, "queued", frm=("finishing",), lecture_id=lecture_id)
    log.info("upload %s finished: lecture %s", upload_id, lecture_id)


def _expire(settings: Settings, records: IngestStore, store: MediaStore, row: dict) -> None:
    """Expires an idle upload (the caller holds its lock) and removes its bytes."""
    reason = f"no chunk arrived for {policy.span(settings.upload_idle_s)}."
    if records.expire_upload(row["id"], reason, settings.upload_idle_s):
        parts_of(store, records).remove(str(row["id"]))
        log.info("upload %s expired (%s)", row["id"], reason)


def _each_locked(settings: Settings, records: IngestStore, store: MediaStore, ids: list[str], work) -> None:
    """Runs ``work(row, file)`` for each upload id under its lock, skipping busy ones and logging errors."""
    parts = parts_of(store, records)
    for uid in ids:
        try:
            with parts.locked(uid) as f:
                work(_row(records, settings, uid), f)
        except Busy:
            pass
        except Exception as e:  # one upload's trouble (a refused file, the queue down) must not stop the sweep
            log.info("sweep: upload %s: %s", uid, e)


def expire_idle(*, settings: Settings, records: IngestStore, store: MediaStore) -> None:
    """Expires every upload idle for ``LC_UPLOAD_IDLE_S`` whose bytes are not all there (and not
    being written) and removes its bytes."""
    rows = records.idle_uploads(settings.upload_idle_s)
    parts = parts_of(store, records)
    idle = [str(r["id"]) for r in rows if parts.offset({**r, "state": "receiving"}) < r["size"]]
    _each_locked(settings, records, store, idle,
                 lambda row, f: _expire(settings, records, store, row) if row["idle"] else None)


def check_room_for_plain_upload(*, settings: Settings, records: IngestStore, store: MediaStore, size: int) -> None:
    """The reserve of a resumable upload's start, for a plain (multipart) upload of about ``size``
    bytes (0 when unknown: then only a store already inside its reserve refuses): raises
    :class:`IngestError` 507 ``insufficient_storage`` when it does not fit beside what the open
    uploads still expect (:func:`~.uploadpolicy.check_room`). Idle uploads are expired first."""
    expire_idle(settings=settings, records=records, store=store)
    policy.check_room(settings, store, records.uploads_in(OPEN), size=size, expected=parts_of(store, records).expected)


def sweep(*, settings: Settings, records: IngestStore, store: MediaStore, publish: Publish) -> None:
    """Finishes interrupted finishes, expires idle uploads and removes bytes (``.part`` files or
    objects) that belong to no open upload (older than :data:`ORPHAN_GRACE_S`). Several ingest
    processes may sweep at once: every upload is handled under its lock."""
    rows = records.uploads_in(OPEN)
    parts = parts_of(store, records)
    complete = [str(r["id"]) for r in rows if r["state"] == "finishing" or parts.offset(r) == r["size"]]
    _each_locked(settings, records, store, complete,
                 lambda row, f: _settle(settings, records, store, publish, row, f))
    expire_idle(settings=settings, records=records, store=store)
    spool.remove_stale(store.root, settings.upload_timeout_s + 600)  # form files of a killed process
    for uid in parts.orphans({str(r["id"]) for r in rows}, ORPHAN_GRACE_S):
        try:
            with parts.locked(uid) as f:
                if f is not None and _state(records, uid) not in OPEN:
                    parts.remove(uid)
                    log.info("sweep: removed the bytes of %s (no open upload)", uid)
        except Busy:
            pass
        except Exception as e:  # a file system or store error: the next sweep tries again
            log.info("sweep: orphan %s: %s", uid, e)


def _state(records: IngestStore, upload_id: str) -> str | None:
    """The state of the upload named by a ``.part`` file's stem; None when it is no upload's id."""
    try:
        uuid.UUID(upload_id)
    except ValueError:
        return None
    return records.upload_state(upload_id)
