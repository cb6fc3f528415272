"""Deleting lectures and courses: their rows, media, search points and the bytes of resumable
uploads still arriving for them (ingest's ``DELETE`` routes)."""

from __future__ import annotations

import logging

from lecturecopilot.points import PointWriter
from lecturecopilot.storage import MediaStore

from .parts import parts_of
from .store import IngestStore

log = logging.getLogger(__name__)


def delete_lectures(*, records: IngestStore, store: MediaStore, lecture_ids: list[str],
                    course_id: str | None = None, points: PointWriter | None = None) -> int:
    """Deletes lectures (their rows, and by cascade transcript, segments, chapters) and their media
    folders; with ``course_id``, the course's resumable uploads too (rows and bytes). With ``points``
    (``QDRANT_URL`` set) their points in the Qdrant server go too; a server that refuses is logged,
    not raised (Postgres is the record, and ask drops hits of lectures it no longer lists). An ask
    process's embedded shard drops a lecture's points at its next sync with Postgres (the row is
    gone), and workers drop in-flight events of a deleted lecture. Returns the lectures deleted."""
    n, uploads = records.delete_lectures(lecture_ids, course_id)
    for lid in lecture_ids:
        store.delete_lecture(lid)
    if points is not None:
        try:
            points.delete_lectures(lecture_ids)
        except Exception as e:  # qdrant-client raises its own and httpx's errors
            log.warning("deleting the points of %d lectures from the Qdrant server failed: %s", len(lecture_ids), e)
    if uploads:  # the course's resumable uploads: their bytes go with them
        parts = parts_of(store, records)
        for uid in uploads:
            parts.remove(uid)
    return n


def delete_course(*, records: IngestStore, store: MediaStore, course_id: str,
                  points: PointWriter | None = None) -> int:
    """Deletes the course's lectures, their media and its resumable uploads (see :func:`delete_lectures`);
    the course row is the gateway's, deleted after this (its ``DELETE /api/courses/{id}``). Returns the
    lectures deleted."""
    return delete_lectures(records=records, store=store, lecture_ids=records.course_lecture_ids(course_id), points=points,
                           course_id=course_id)
