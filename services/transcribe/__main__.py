"""``python -m services.transcribe``: the transcribe service (speech, slides and web-copy consumers)."""

from lecturecopilot import bus
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.settings import Settings, get_settings
from lecturecopilot.worker import Stage, run

from . import handlers


def stages(settings: Settings) -> list[Stage]:
    """The consumers of this service (also what docs/asyncapi.json documents)."""
    return [
        Stage("transcribe", bus.UPLOADED, ev.LectureUploaded, "transcribing", handlers.transcribe,
              concurrency=settings.transcribe_concurrency),
        Stage("slides", bus.TRANSCRIBED, ev.LectureTranscribed, "slides", handlers.read_slides,
              concurrency=settings.slides_concurrency),
        Stage("webcopy", bus.UPLOADED, ev.LectureUploaded, "webcopy", handlers.make_web_copy, records_stage=False,
              concurrency=settings.webcopy_concurrency),
    ]


def main() -> None:
    settings = get_settings()
    run(stages(settings), health_port=settings.health_port_transcribe, name="transcribe")


if __name__ == "__main__":
    main()
