"""``python -m services.index``: the index service (consumes ``lecture.slides_read``; sends the
ready/failed notices from ``lecture.indexed`` and ``lecture.failed``).

``python -m services.index write-points [--course ID]``: with ``QDRANT_URL`` set, writes the points
of every ready lecture (or one course's) to the Qdrant server, e.g. after pointing at a new server."""

import argparse
import sys

from lecturecopilot import bus, db
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.settings import Settings, get_settings
from lecturecopilot.worker import Stage, run

from . import handlers, notify, points


def _write_points(course_id: str | None) -> int:
    settings = get_settings()
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


def stages(settings: Settings) -> list[Stage]:
    """The consumers of this service (also what docs/asyncapi.json documents)."""
    return [Stage("index", bus.SLIDES_READ, ev.LectureSlidesRead, "indexing", handlers.index_lecture,
                  concurrency=settings.index_concurrency),
            Stage("notify-ready", bus.INDEXED, ev.LectureIndexed, "notify", notify.lecture_ready, records_stage=False),
            Stage("notify-failed", bus.FAILED, ev.LectureFailed, "notify", notify.lecture_failed, records_stage=False)]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m services.index")
    parser.add_argument("command", nargs="?", choices=["serve", "write-points"], default="serve")
    parser.add_argument("--course", help="write-points: only this course's lectures")
    args = parser.parse_args()
    if args.command == "write-points":
        sys.exit(_write_points(args.course))
    settings = get_settings()
    run(stages(settings), health_port=settings.health_port_index, name="index")


if __name__ == "__main__":
    main()
