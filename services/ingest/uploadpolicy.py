"""The rules a resumable upload's start and chunks must meet that need no lock or bytes: who may
start one and whether the store can hold it (:func:`admit`), and what a chunk's ``Content-Range``
must say (:func:`chunk_range`, :func:`check_chunk_size`). The state machine is :mod:`.resumable`'s."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Callable

from werkzeug.http import parse_content_range_header

from lecturecopilot.settings import Settings
from lecturecopilot.storage import MediaStore

from .errors import IngestError
from .numbers import number_reserved


@dataclass(frozen=True)
class Starting:
    """A resumable upload being started: into ``course_id`` for lecture ``number`` (None: the
    course's next), ``size`` bytes, by ``owner`` (an email, or None), ``capped``: counted against
    ``LC_UPLOADS_OPEN_MAX``."""

    course_id: str
    number: int | None
    size: int
    owner: str | None
    capped: bool


def admit(settings: Settings, store: MediaStore, open_rows: list[dict], starting: Starting, *,
          expected: Callable[[list[dict]], int]) -> None:
    """The policy of a start (``starting``), given the uploads open now (``id``, ``size``, ``owner``,
    ``course_id``, ``number``, ``left_s``). Raises :class:`IngestError`: 409 when an open upload into
    ``course_id`` holds lecture ``number`` already (two starts checked it at once); 429 with
    ``Retry-After`` (the seconds until the first of theirs can expire) when a ``capped`` owner has
    ``LC_UPLOADS_OPEN_MAX`` open; 507 when ``size`` bytes do not fit in the free space less what
    open uploads still expect (``expected(open_rows)``: none on this disk with object storage) and
    less ``LC_UPLOAD_DISK_RESERVE_BYTES``."""
    idle = settings.upload_idle_s
    course_id, number, size, owner = starting.course_id, starting.number, starting.size, starting.owner
    if number is not None and any(r["course_id"] == course_id and r["number"] == number for r in open_rows):
        raise number_reserved(number)
    mine = [r for r in open_rows if owner is not None and r["owner"] == owner]
    if starting.capped and len(mine) >= settings.uploads_open_max:
        wait = max(1, int(min(r["left_s"] for r in mine)) + 1)
        raise IngestError(f"You have {len(mine)} uploads open, the most one person may have. Finish one, or "
                          f"start again once an abandoned one expires ({span(idle)} after its last chunk).",
                          status=429, code="too_many_uploads", headers={"Retry-After": str(wait)})
    check_room(settings, store, open_rows, size=size, expected=expected)


def check_room(settings: Settings, store: MediaStore, open_rows: list[dict], *, size: int,
               expected: Callable[[list[dict]], int]) -> None:
    """507 ``insufficient_storage`` when ``size`` bytes do not fit in the media store's free space
    less what the open resumable uploads ``open_rows`` still expect (``expected(open_rows)``) and
    less ``LC_UPLOAD_DISK_RESERVE_BYTES``: the rule of both upload paths (a resumable upload's start,
    a plain upload before its body is read)."""
    room = shutil.disk_usage(store.root).free - expected(open_rows) - settings.upload_disk_reserve_bytes
    if size > room:
        raise IngestError(f"The server has no room for this file now: {gb(size)} do not fit in the "
                          f"{gb(max(0, room))} left for uploads (free space, less what open uploads still "
                          "need and a reserve for processing). Try again later or tell the operator.",
                          status=507, code="insufficient_storage")


def span(seconds: float) -> str:
    """``seconds`` for a message: "45 seconds" under two minutes, else "10 minutes" (rounded)."""
    if seconds < 120:
        return f"{round(seconds):d} seconds"
    return f"{round(seconds / 60):d} minutes"


def gb(n: int) -> str:
    """``n`` bytes in decimal gigabytes for a message ("1.23 GB")."""
    return f"{n / 1e9:.2f} GB"


def chunk_range(content_range: str | None, size: int):
    """The parsed ``Content-Range`` of a chunk of an upload of ``size`` bytes (a Werkzeug
    ``ContentRange``); :class:`IngestError` 400 when it is missing, malformed or of another size."""
    rng = parse_content_range_header(content_range) if content_range else None
    if rng is None or rng.units != "bytes" or rng.start is None:
        raise IngestError("Send each chunk with 'Content-Range: bytes FIRST-LAST/SIZE'.", code="invalid_range")
    if rng.length is None:
        raise IngestError(f"The range must name the total size ('bytes FIRST-LAST/{size}').", code="invalid_range")
    if rng.length != size:
        raise IngestError(f"The range's total {rng.length} is not the declared size {size}.", code="size_mismatch")
    if rng.stop > size:
        raise IngestError(f"The range ends past the declared size {size}.", code="invalid_range")
    return rng


def check_chunk_size(rng, size: int, least: int) -> None:
    """:class:`IngestError` 400 ``chunk_too_small`` for a chunk ``rng`` (a parsed range) of an
    upload of ``size`` bytes under ``least`` bytes that is not its last (the one ending at ``size``)."""
    if rng.stop < size and rng.stop - rng.start < least:
        mib = f" ({least / 1024**2:g} MiB)" if least % 1024**2 == 0 else ""
        raise IngestError(f"Every chunk but the last must be at least {least} bytes{mib}; this one has "
                          f"{rng.stop - rng.start}. Send larger chunks.", code="chunk_too_small")
