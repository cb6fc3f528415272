"""The index service's side of the search points: with ``QDRANT_URL`` set it writes a lecture's
points to the Qdrant server (schema: :mod:`lecturecopilot.points`) after its rows are in Postgres
and before the lecture is marked ready, so ask — which only reads them — finds them by the time
it sees the lecture. Without ``QDRANT_URL`` nothing is written here: each ask process builds its
own embedded shard from Postgres."""

from __future__ import annotations

import logging
import threading

from psycopg_pool import ConnectionPool

from lecturecopilot.points import PointWriter, lecture_points
from lecturecopilot.settings import Settings

from . import store

log = logging.getLogger(__name__)
_writers: dict[tuple, PointWriter] = {}
_lock = threading.Lock()


def writer_for(settings: Settings) -> PointWriter | None:
    """This process's :class:`PointWriter` for ``settings`` (one client per server and collection),
    or None without ``QDRANT_URL``. Raises qdrant-client's errors when the server is unreachable."""
    if not settings.qdrant_url:
        return None
    key = (settings.qdrant_url, settings.qdrant_api_key, settings.qdrant_collection)
    with _lock:
        if key not in _writers:
            _writers[key] = PointWriter.from_settings(settings)
        return _writers[key]


def write_points(pool: ConnectionPool, writer: PointWriter, lecture_id: str) -> int:
    """Writes the lecture's points (its segments and sub-chunks as Postgres holds them) to
    ``writer``, replacing the ones it had; a lecture deleted meanwhile loses its points instead.
    Returns the number of points written (0 when it was deleted). Raises qdrant-client's errors
    when the server refuses.

    A deletion (ingest's) removes the lecture's row, then its points; this writes the points, then
    looks at the row again. However the two interleave, one of them removes the points last: a
    lecture deleted while its points were being written leaves none behind."""
    lecture, segs, subs = store.point_rows(pool, lecture_id)
    if lecture is None:
        writer.delete_lectures([lecture_id])
        return 0
    points = lecture_points(lecture["course_id"], lecture_id, lecture["number"], segs, subs)
    writer.replace_lecture(lecture_id, points)
    if not store.lecture_exists(pool, lecture_id):
        writer.delete_lectures([lecture_id])
        log.info("%s was deleted while its points were written: removed them", lecture_id)
        return 0
    log.info("wrote %d points of %s to %s", len(points), lecture_id, writer.collection)
    return len(points)


def write_all_points(pool: ConnectionPool, writer: PointWriter, course_id: str | None = None) -> tuple[int, int]:
    """Backfill: writes the points of every ready lecture (of ``course_id``, or of all courses), e.g.
    for a Qdrant server that was empty when the lectures were indexed. Returns (lectures, points)."""
    lectures = store.ready_lectures(pool, course_id)
    return len(lectures), sum(write_points(pool, writer, lid) for lid in lectures)
