"""Resumable uploads in chunks: ``Content-Range`` PUTs (RFC 9110 §14.4), parsed by Werkzeug.

1. ``start_upload`` registers the upload: course, file name, declared size (bytes), title,
   number, language. Nothing is accepted for another name or size afterwards.
2. ``put_chunk`` appends one chunk ``bytes first-last/size``. A chunk must start at the current
   offset (the bytes on disk); otherwise :class:`IngestError` 409 tells the client where to
   resume. Chunks are written under a per-upload advisory lock, so two clients racing on one
   upload cannot interleave bytes.
3. When the offset reaches the declared size, the file goes through :func:`ingest_lecture`
   (the same checks as a multipart upload: type, ffprobe, duration, audio) and the upload
   records its lecture id. A refused file leaves the upload marked ``refused`` with the reason.

``upload_status`` gives the offset to resume from (for a client that lost its connection).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import BinaryIO, Callable

from psycopg_pool import ConnectionPool
from werkzeug.http import parse_content_range_header

from lecturecopilot import media
from lecturecopilot.settings import Settings
from lecturecopilot.storage import MediaStore

from .core import VIDEO_EXTENSIONS, IngestError, Upload, ingest_lecture

CHUNK_READ = 1024 * 1024


def _part_path(store: MediaStore, upload_id: str) -> Path:
    d = store.root / "uploads"
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{upload_id}.part"


def _row(pool: ConnectionPool, upload_id: str) -> dict:
    try:
        upload_id = str(uuid.UUID(upload_id))
    except ValueError:
        raise IngestError("Unknown upload.", status=404, code="not_found") from None
    with pool.connection() as conn:
        row = conn.execute("SELECT * FROM uploads WHERE id=%s", (upload_id,)).fetchone()
    if row is None:
        raise IngestError("Unknown upload.", status=404, code="not_found")
    return row


def _status(row: dict, offset: int) -> dict:
    return {"upload_id": str(row["id"]), "course_id": str(row["course_id"]), "filename": row["filename"],
            "size": row["size"], "offset": offset, "state": row["state"],
            "lecture_id": str(row["lecture_id"]) if row["lecture_id"] else None, "error": row["error"]}


def start_upload(*, settings: Settings, pool: ConnectionPool, store: MediaStore, course_id: str, filename: str,
                 size: int, title: str = "", number: int | None = None, language: str = "") -> dict:
    """Registers a resumable upload of ``filename`` (``size`` bytes) for ``course_id``; returns its
    status (``offset`` 0). Raises :class:`IngestError`: 404 unknown course, 415 wrong type,
    400 bad size, 413 over the size limit."""
    try:
        course_id = str(uuid.UUID(course_id))
    except ValueError:
        raise IngestError("Unknown course.", status=404, code="not_found") from None
    if (not filename or len(filename) > 255 or "\x00" in filename or "/" in filename
            or any(0xD800 <= ord(c) <= 0xDFFF or ord(c) < 32 for c in filename)):
        raise IngestError("'filename' must be a plain file name (at most 255 characters, no control characters "
                          "or slashes).", code="invalid_filename")
    if Path(filename).suffix.lower() not in VIDEO_EXTENSIONS:
        raise IngestError(f"{filename!r} is not a supported video type ({media.CONTAINERS_LABEL}).", status=415,
                          code="unsupported_type")
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise IngestError("'size' must be the file's size in bytes (a positive integer).", code="invalid_size")
    if size > settings.max_upload_bytes:
        raise IngestError(f"The file is larger than the {settings.max_upload_bytes // 1024**3} GB limit.",
                          status=413, code="too_large")
    upload_id = str(uuid.uuid4())
    with pool.connection() as conn:
        if conn.execute("SELECT 1 FROM courses WHERE id=%s", (course_id,)).fetchone() is None:
            raise IngestError("Unknown course.", status=404, code="not_found")
        conn.execute("INSERT INTO uploads (id, course_id, filename, size, meta) VALUES (%s,%s,%s,%s,%s)",
                     (upload_id, course_id, Path(filename).name, size,
                      json.dumps({"title": title or "", "number": number, "language": language or ""})))
    _part_path(store, upload_id).touch()
    return _status(_row(pool, upload_id), 0)


def upload_status(*, pool: ConnectionPool, store: MediaStore, upload_id: str) -> dict:
    """Where ``upload_id`` stands: ``offset`` (bytes received), ``state`` (receiving | queued |
    refused) and the lecture id once queued. Raises :class:`IngestError` 404."""
    row = _row(pool, upload_id)
    part = _part_path(store, str(row["id"]))
    return _status(row, part.stat().st_size if part.exists() else (row["size"] if row["state"] != "receiving" else 0))


def put_chunk(*, settings: Settings, pool: ConnectionPool, store: MediaStore,
              publish: Callable[[str, bytes, str], None], upload_id: str, content_range: str | None,
              stream: BinaryIO) -> dict:
    """Appends the chunk in ``stream`` described by ``content_range`` (``bytes a-b/size``).

    Returns the status; when the last byte arrived, the lecture is queued (``state`` queued,
    ``lecture_id`` set). Raises :class:`IngestError`: 400 missing/invalid range or a body of
    another length, 409 a chunk that does not start at the offset (or another client writing),
    410 an upload already finished.
    """
    row = _row(pool, upload_id)
    upload_id = str(row["id"])
    if row["state"] != "receiving":
        raise IngestError(f"This upload is already {row['state']}.", status=410, code="upload_closed")
    rng = parse_content_range_header(content_range) if content_range else None
    if rng is None or rng.units != "bytes" or rng.start is None:
        raise IngestError("Send each chunk with 'Content-Range: bytes FIRST-LAST/SIZE'.", code="invalid_range")
    if rng.length is None:
        raise IngestError(f"The range must name the total size ('bytes FIRST-LAST/{row['size']}').",
                          code="invalid_range")
    if rng.length != row["size"]:
        raise IngestError(f"The range's total {rng.length} is not the declared size {row['size']}.",
                          code="size_mismatch")
    if rng.stop > row["size"]:
        raise IngestError(f"The range ends past the declared size {row['size']}.", code="invalid_range")
    part = _part_path(store, upload_id)
    with pool.connection() as conn, conn.transaction():
        locked = conn.execute("SELECT pg_try_advisory_xact_lock(hashtext(%s)) AS ok", (upload_id,)).fetchone()["ok"]
        if not locked:
            raise IngestError("Another chunk of this upload is being written; retry.", status=409, code="busy")
        offset = part.stat().st_size
        if rng.start != offset:
            raise IngestError(f"The next chunk must start at byte {offset}.", status=409, code="wrong_offset")
        want = rng.stop - rng.start
        got = 0
        with open(part, "ab") as f:
            try:
                while got < want:
                    buf = stream.read(min(CHUNK_READ, want - got))
                    if not buf:
                        break
                    f.write(buf)
                    got += len(buf)
                extra = stream.read(1)
            except BaseException:
                f.truncate(offset)
                raise
            if got != want or extra:
                f.truncate(offset)
                raise IngestError(f"The chunk's body is not the {want} bytes its range announces.",
                                  code="size_mismatch")
    offset += got
    if offset < row["size"]:
        return _status(row, offset)
    return _finish(settings=settings, pool=pool, store=store, publish=publish, row=row, part=part)


def _finish(*, settings, pool, store, publish, row: dict, part: Path) -> dict:
    meta = row["meta"] or {}
    upload_id = str(row["id"])
    try:
        with open(part, "rb") as f:
            result = ingest_lecture(settings=settings, pool=pool, store=store, publish=publish,
                                    course_id=str(row["course_id"]), title=meta.get("title", ""),
                                    number=meta.get("number"), video=Upload(row["filename"], f, row["size"]),
                                    captions=None, language=meta.get("language", ""))
    except IngestError as e:
        with pool.connection() as conn:
            conn.execute("UPDATE uploads SET state='refused', error=%s WHERE id=%s", (str(e), upload_id))
        part.unlink(missing_ok=True)
        raise
    with pool.connection() as conn:
        conn.execute("UPDATE uploads SET state='queued', lecture_id=%s WHERE id=%s", (result["lecture_id"], upload_id))
    part.unlink(missing_ok=True)
    return upload_status(pool=pool, store=store, upload_id=upload_id)
