"""``python -m services.index``: the index service (consumes ``lecture.slides_read``; sends the
ready/failed notices from ``lecture.indexed`` and ``lecture.failed``).

``python -m services.index write-points [--course ID]``: with ``QDRANT_URL`` set, writes the points
of every ready lecture (or one course's) to the Qdrant server, e.g. after pointing at a new server.

``python -m services.index reindex [--course ID] [--lecture ID]``: rebuilds the passages of ready
lectures from their stored transcripts, in place (after an upgrade that changes how passages are cut;
:mod:`services.index.reindex`)."""

import argparse
import sys

from lecturecopilot import bus
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.settings import Settings, get_settings
from lecturecopilot.worker import Stage, run

from . import commands, handlers, notify


def stages(settings: Settings) -> list[Stage]:
    """The consumers of this service (also what docs/asyncapi.json documents)."""
    return [Stage("index", bus.SLIDES_READ, ev.LectureSlidesRead, "indexing", handlers.index_lecture,
                  concurrency=settings.index_concurrency),
            Stage("notify-ready", bus.INDEXED, ev.LectureIndexed, "notify", notify.lecture_ready, records_stage=False),
            Stage("notify-failed", bus.FAILED, ev.LectureFailed, "notify", notify.lecture_failed, records_stage=False)]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m services.index")
    parser.add_argument("command", nargs="?", choices=["serve", "write-points", "reindex"], default="serve")
    parser.add_argument("--course", help="write-points: only this course's lectures (its id); reindex: its id")
    parser.add_argument("--lecture", help="reindex: only this lecture (its id)")
    args = parser.parse_args()
    settings = get_settings()
    if args.command == "write-points":
        sys.exit(commands.write_points_command(settings, args.course))
    if args.command == "reindex":
        sys.exit(commands.reindex_command(settings, args.course, args.lecture))
    run(stages(settings), health_port=settings.health_port_index, name="index")


if __name__ == "__main__":
    main()
