"""``python -m services.index``: the index service (consumes ``lecture.slides_read``; sends the
ready/failed notices from ``lecture.indexed`` and ``lecture.failed``)."""

from lecturecopilot import bus
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.settings import Settings, get_settings
from lecturecopilot.worker import Stage, run

from . import handlers, notify


def stages(settings: Settings) -> list[Stage]:
    """The consumers of this service (also what docs/asyncapi.json documents)."""
    return [Stage("index", bus.SLIDES_READ, ev.LectureSlidesRead, "indexing", handlers.index_lecture,
                  concurrency=settings.index_concurrency),
            Stage("notify-ready", bus.INDEXED, ev.LectureIndexed, "notify", notify.lecture_ready, records_stage=False),
            Stage("notify-failed", bus.FAILED, ev.LectureFailed, "notify", notify.lecture_failed, records_stage=False)]


def main() -> None:
    settings = get_settings()
    run(stages(settings), health_port=settings.health_port_index, name="index")


if __name__ == "__main__":
    main()
