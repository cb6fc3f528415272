"""Lecture numbers: one per course (citations name lectures by number), 0..:data:`MAX_NUMBER`,
held by an open resumable upload until it finishes or expires. The checks an upload's declared
number must pass and their errors, and the renumbering of a lecture; the SQL is
:class:`~.store.IngestStore`'s."""

from __future__ import annotations

import uuid

from lecturecopilot.settings import Settings

from .errors import IngestError
from .store import IngestStore, NumberInUse

MAX_NUMBER = 9999  # lecture numbers: 0..9999 (the gateway's schemas say the same)


def number_hold_s(settings: Settings) -> float:
    """How long after its last chunk began a receiving resumable upload still holds its lecture
    number (seconds): its idle expiry (``LC_UPLOAD_IDLE_S``), or the longest a chunk may take to
    arrive (``LC_UPLOAD_CHUNK_TIMEOUT_S``) if that is longer, so a slow chunk never loses it."""
    return max(settings.upload_idle_s, settings.upload_chunk_timeout_s)


def check_number(records: IngestStore, course_id: str, number: int | None, hold_s: float,
                 own_upload: str | None = None) -> None:
    """Raises :class:`IngestError` 409 ``number_taken`` when the course already has a lecture
    ``number`` or an open resumable upload into it other than ``own_upload`` holds that number
    (finishing, or receiving within ``hold_s`` seconds of its last chunk: :func:`number_hold_s`), or,
    without ``number``, when no number is left for one. The course itself is the caller's to have
    checked (the gateway, which owns courses, before it calls ingest; the operator CLI through the
    gateway's store): one that does not exist fails at the insert of its row (a foreign key: 404).
    Raises 400 ``invalid_number`` for a number outside 0..:data:`MAX_NUMBER` (the operator CLI reaches
    here without the gateway's schema: a lecture 10000 left no number for the next upload)."""
    if number is not None and not 0 <= number <= MAX_NUMBER:
        raise IngestError(f"A lecture number is a whole number from 0 to {MAX_NUMBER}; {number} is not.",
                          status=400, code="invalid_number")
    if number is None:
        if records.next_number(course_id, hold_s, MAX_NUMBER, own_upload) is None:
            raise numbers_exhausted()
        return
    if records.number_in_use(course_id, number):
        raise number_taken(number)
    if records.number_reserved(course_id, number, hold_s, own_upload):
        raise number_reserved(number)


def number_taken(number: int) -> IngestError:
    """The 409 for a lecture number the course already has."""
    return IngestError(f"The course already has a lecture {number}; choose another number "
                       "(citations name lectures by number).", status=409, code="number_taken")


def numbers_exhausted() -> IngestError:
    """The 409 for a lecture without a number in a course with none left up to :data:`MAX_NUMBER`."""
    return IngestError(f"No lecture number is left above this course's highest (numbers go up to {MAX_NUMBER}); "
                       "give this lecture a free number.", status=409, code="number_taken")


def number_reserved(number: int) -> IngestError:
    """The 409 for a lecture number an open resumable upload holds."""
    return IngestError(f"Lecture {number} of this course is being uploaded now; the upload holds the number until "
                       "it finishes, or until it expires for want of chunks. Choose another number.",
                       status=409, code="number_taken")


def rename_lecture(records: IngestStore, lecture_id: str, title: str, number: int) -> None:
    """Sets a lecture's title and number (the gateway decided who may: ``PATCH /api/lectures/{id}``).
    Raises :class:`IngestError` 404 ``not_found`` for an unknown lecture, 409 ``number_taken`` when
    another lecture of its course has ``number`` (also when two changes race for it)."""
    try:
        lecture_id = str(uuid.UUID(lecture_id))
    except ValueError:
        raise IngestError("Unknown lecture.", status=404, code="not_found") from None
    try:
        renamed = records.rename_lecture(lecture_id, title, number)
    except NumberInUse:
        raise number_taken(number) from None
    if not renamed:
        raise IngestError("Unknown lecture.", status=404, code="not_found")
