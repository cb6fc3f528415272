"""The index service's operator commands (``python -m services.index write-points|reindex``, and
``lecture-copilot reindex``): each parses nothing itself, calls one use case and prints its outcome.
Exit codes: 0 done, 1 some lecture failed or was skipped, 2 refused before any work."""

from __future__ import annotations

import sys
import uuid
from typing import Callable

from psycopg_pool import ConnectionPool

from lecturecopilot import db
from lecturecopilot.embedded import stop_embedded_postgres
from lecturecopilot.settings import Settings

from . import points, store
from .reindex import Reindexed, reindex_lectures

Titled = Callable[[ConnectionPool, str], list[str]]  # (pool, title) → the ids of the courses with that title


def _shown(value: str) -> str:
    """``value`` as an error message quotes it: at most 60 characters, with its length when cut."""
    return repr(value) if len(value) <= 60 else repr(value[:60]) + f"… ({len(value)} characters)"


def _uuid_or_none(value: str | None, flag: str) -> str | None:
    if value is None:
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        print(f"{flag} must be an id (a UUID such as 3f2b…), not {_shown(value)}", file=sys.stderr)
        raise SystemExit(2) from None


def write_points_command(settings: Settings, course: str | None) -> int:
    """With ``QDRANT_URL`` set, writes the points of every ready lecture (or one course's) to the
    Qdrant server, e.g. after pointing at a new server."""
    course_id = _uuid_or_none(course, "--course")
    writer = points.writer_for(settings)
    if writer is None:
        print("QDRANT_URL is not set: each ask process builds its own shard from Postgres", file=sys.stderr)
        return 2
    pool = db.make_pool(settings, max_size=2)
    try:
        lectures, n = points.write_all_points(pool, writer, course_id)
    finally:
        pool.close()
    print(f"wrote {n} points of {lectures} lectures to {writer.collection}")
    return 0


def _line(i: int, n: int, r: Reindexed) -> None:
    what = (f"skipped: {r.skipped}" if r.skipped
            else f"{r.passages_before} → {r.passages_after} passages")
    print(f"[{i}/{n}] L{r.number} {r.title!r} ({r.lecture_id}): {what} ({r.seconds:.1f} s)", flush=True)


def _course_id(pool, course: str | None, titled: Titled | None) -> str | None:
    """``--course`` as an id: a UUID as it is, else (with ``titled``) the one course with exactly that
    title (as ``lecture-copilot process --course`` takes it); none or several with that title, or a
    title without ``titled``, exit 2."""
    if course is None:
        return None
    try:
        return str(uuid.UUID(course))
    except ValueError:
        pass
    shown = _shown(course)
    if titled is None:
        print(f"--course must be a course's id (a UUID such as 3f2b…), not {shown}; `lecture-copilot reindex` "
              "also takes a title", file=sys.stderr)
        raise SystemExit(2)
    ids = titled(pool, course) if len(course) <= 200 else []
    if len(ids) == 1:
        return ids[0]
    if ids:
        print(f"--course: {len(ids)} courses are titled {shown}; give one's id: {', '.join(ids[:10])}", file=sys.stderr)
    else:
        print(f"--course must be a course's id (a UUID such as 3f2b…) or title; no course is titled {shown}",
              file=sys.stderr)
    raise SystemExit(2)


def reindex_command(settings: Settings, course: str | None, lecture: str | None, titled: Titled | None = None) -> int:
    """Re-indexes the ready lectures (all, one course's, or one) in place, printing a line per lecture
    as it finishes and a summary (:func:`services.index.reindex.reindex_lectures`). ``course``: an id,
    or an exact title when ``titled`` is given (``titled(pool, title)``: the ids of the courses with
    that title, oldest first; courses are the gateway's, so the operator CLI hands in its lookup)."""
    lecture_id = _uuid_or_none(lecture, "--lecture")
    # the embedded Postgres starts on first use and keeps running; one this command started is stopped after it
    started = not settings.database_url and not (settings.data_dir / "pg" / "postmaster.pid").exists()
    pool = db.make_pool(settings, max_size=2)
    try:
        course_id = _course_id(pool, course, titled)
        done = reindex_lectures(pool, settings.embed_model, points.writer_for(settings),
                                course_id=course_id, lecture_id=lecture_id, report=_line)
    finally:
        pool.close()
        if started:
            print(f"(the embedded Postgres in {settings.data_dir / 'pg'} was not running: started for this run "
                  "and stopped again)", file=sys.stderr)
            stop_embedded_postgres(settings)
    if not done:
        print("no ready lecture matched: nothing to re-index", file=sys.stderr)
        return 2 if (course_id or lecture_id) else 0
    skipped = sum(1 for r in done if r.skipped)
    print(f"re-indexed {len(done) - skipped} of {len(done)} lectures"
          + (f"; {skipped} skipped (see above)" if skipped else ""))
    return 1 if skipped else 0
