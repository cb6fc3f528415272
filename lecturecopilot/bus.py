"""The event bus: NATS JetStream subjects, the stream, and publishing with idempotency keys.

Subjects (payloads are protobuf messages from ``proto/lecturecopilot/events/v1``):

=========================  ==========================  ================================
subject                    message                     published by
=========================  ==========================  ================================
``lecture.uploaded``       ``LectureUploaded``         ingest (or any other service)
``lecture.transcribed``    ``LectureTranscribed``      transcribe
``lecture.slides_read``    ``LectureSlidesRead``       transcribe (slides consumer)
``lecture.indexed``        ``LectureIndexed``          index
``lecture.failed``         ``LectureFailed``           any stage that gives up
``lecture.dead_letter``    the original payload        a consumer that refused it, or after
                                                       ``max_deliver`` deliveries; headers
                                                       ``Lc-Dead-Letter-Reason``, ``-Consumer``,
                                                       ``-Subject``
``lecture.progress``       ``StageProgress``           core NATS only (not stored)
=========================  ==========================  ================================

The ``Nats-Msg-Id`` header is the idempotency key: JetStream drops a duplicate published
inside the stream's duplicate window, and consumers record finished ids in Postgres.
"""

from __future__ import annotations

import asyncio
import threading

import nats
from nats.js.api import StreamConfig
from nats.js.errors import BadRequestError, NotFoundError

from . import telemetry
from .settings import Settings

UPLOADED = "lecture.uploaded"
TRANSCRIBED = "lecture.transcribed"
SLIDES_READ = "lecture.slides_read"
INDEXED = "lecture.indexed"
FAILED = "lecture.failed"
DEAD_LETTER = "lecture.dead_letter"
PROGRESS = "lecture.progress"
# headers of a dead-lettered message: why, which durable consumer refused it, the subject it came on
DEAD_LETTER_REASON = "Lc-Dead-Letter-Reason"
DEAD_LETTER_CONSUMER = "Lc-Dead-Letter-Consumer"
DEAD_LETTER_SUBJECT = "Lc-Dead-Letter-Subject"

STREAM_SUBJECTS = [UPLOADED, TRANSCRIBED, SLIDES_READ, INDEXED, FAILED, DEAD_LETTER]
DUPLICATE_WINDOW_S = 600.0


def msg_id(subject: str, lecture_id: str, generation: int = 0) -> str:
    """The idempotency key of an event that starts a processing run (``lecture.uploaded``)."""
    return f"{subject}:{lecture_id}:{generation}"


def next_msg_id(subject: str, lecture_id: str, caused_by: str) -> str:
    """The idempotency key of an event published because of the event ``caused_by``.

    Derived from the cause, so a redelivered event (same id) yields the same downstream id,
    which JetStream drops as a duplicate; a new run (a replayed event with a new id) yields
    new ids all the way down.
    """
    import hashlib

    return f"{subject}:{lecture_id}:{hashlib.sha1(caused_by.encode()).hexdigest()[:16]}"


async def ensure_stream(js, name: str, replicas: int = 1) -> None:
    """Creates (or updates) the stream ``name`` holding :data:`STREAM_SUBJECTS` on file storage,
    with ``replicas`` copies (``LC_STREAM_REPLICAS``; 3 on a 3-node JetStream cluster)."""
    cfg = StreamConfig(name=name, subjects=STREAM_SUBJECTS, duplicate_window=DUPLICATE_WINDOW_S,
                       num_replicas=replicas)
    try:
        await js.stream_info(name)
        await js.update_stream(cfg)
    except NotFoundError:
        try:
            await js.add_stream(cfg)
        except BadRequestError:
            await js.update_stream(cfg)


class SyncPublisher:
    """Publishes to JetStream from synchronous code (Flask, CLI) through one connection
    running on a private event-loop thread.

    ``publish`` returns after JetStream acknowledged storage; raises on failure. The current
    OpenTelemetry context goes along as a W3C ``traceparent`` header.
    """

    def __init__(self, url: str, stream: str, replicas: int = 1):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="nats-publisher")
        self._thread.start()
        self._stream = stream
        self._nc = self._run(nats.connect(url, name="lecture-copilot-publisher", max_reconnect_attempts=-1))
        self._js = self._nc.jetstream()
        self._run(ensure_stream(self._js, stream, replicas))

    def _run(self, coro, timeout: float = 15.0):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def publish(self, subject: str, payload: bytes, msg_id: str, headers: dict | None = None) -> None:
        hdrs = {"Nats-Msg-Id": msg_id, **(headers or {})}
        telemetry.inject(hdrs)  # the caller's trace (the upload request) continues in the pipeline
        self._run(self._js.publish(subject, payload, stream=self._stream, headers=hdrs))

    def close(self) -> None:
        try:
            self._run(self._nc.drain(), timeout=5)
        except Exception:
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)


def nats_connect_url(settings: Settings) -> str:
    """The NATS URL from settings, starting the embedded server when none is configured."""
    from . import embedded

    return embedded.nats_url(settings)
