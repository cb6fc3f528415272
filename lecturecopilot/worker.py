"""Runs pipeline stages as durable JetStream pull consumers with FastStream.

A :class:`Stage` is a plain, synchronous handler function plus the subject it consumes.
This module owns everything about the bus: decoding and validating each event before any
handler sees it (:func:`check_event`: UUIDs, the lecture belongs to the event's course, URIs
inside that lecture's folder of the media store; a refused event goes to the dead-letter
subject with its reason and touches no lecture), idempotency (Postgres ``processed_events``),
in-progress acks while a long stage runs, several messages of one stage at once
(``Stage.concurrency``), retries with back-off, the dead-letter subject after ``max_deliver``
deliveries, marking the lecture failed (with our sentence; exceptions go to the log), progress
events, and publishing the next event with its ``Nats-Msg-Id``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from faststream import FastStream
from faststream.middlewares import AckPolicy
from faststream.nats import JStream, NatsBroker, PullSub
from faststream.nats.annotations import NatsMessage
from google.protobuf.message import DecodeError, Message
from nats.js.api import ConsumerConfig
from psycopg_pool import ConnectionPool

from . import bus, db, embedded, logsafe, telemetry
from .db import retry_on_disconnect
from .events.v1 import events_pb2
from .health import serve_health
from .mediastores import media_store
from .settings import Settings, get_settings
from .storage import MediaStore, UnsafeMediaURI

log = logging.getLogger("lecturecopilot.worker")
_TRACER = telemetry.tracer("lecture-copilot.worker")
_STAGE_S = telemetry.meter("lecture-copilot.worker").create_histogram(
    "lc.stage.duration", unit="s", description="Time a pipeline stage's handler took per lecture")
_PENDING = telemetry.meter("lecture-copilot.worker").create_gauge(
    "lc.consumer.pending", description="Messages waiting for this durable consumer (JetStream num_pending)")


class PermanentError(Exception):
    """The lecture cannot be processed (bad media, empty transcript...): fail it, don't retry."""


@dataclass
class StageContext:
    """What a handler gets besides its event: the pool, the settings and a progress callback."""

    settings: Settings
    pool: ConnectionPool
    lecture_id: str
    progress: Callable[[float], None]
    store: MediaStore | None = None  # the media store; URIs of events go through ``store.resolve``


@dataclass
class Stage:
    """One consumer: ``handle(event, ctx)`` returns ``(next_subject, next_message)`` or None."""

    durable: str
    subject: str
    message_type: type[Message]
    stage_name: str
    handle: Callable[[Message, StageContext], tuple[str, Message] | None]
    ack_wait_s: float | None = None
    extra: dict = field(default_factory=dict)
    records_stage: bool = True  # False for side consumers (notices) that must not touch lectures.stage
    concurrency: int = 1  # messages of different lectures this process runs at once (see build_app)


@retry_on_disconnect
def set_stage(pool: ConnectionPool, lecture_id: str, *, stage: str, status: str = "processing",
              progress: float = 0.0, error: str | None = None) -> None:
    """Records a lecture's stage in Postgres (the durable state the API shows); again on a new
    connection if Postgres cut this one."""
    with pool.connection() as conn:
        conn.execute(
            "UPDATE lectures SET stage=%s, status=%s, progress=%s, error=%s, updated_at=now() WHERE id=%s",
            (stage, status, progress, error, lecture_id),
        )


def _valid_uuid(value: str) -> bool:
    """True for a UUID in its canonical form (``8-4-4-4-12`` hex digits, as Postgres prints it)."""
    try:
        return str(uuid.UUID(value)) == value.lower()
    except (ValueError, TypeError, AttributeError):
        return False


class RefusedEvent(Exception):
    """An event this consumer must not act on (it does not decode, names no valid lecture of its
    course, or carries a URI outside the lecture's folder of the media store). ``str(err)`` is the
    reason, sent with the payload to the dead-letter subject; the lecture is left alone."""


# what users read in ``lectures.error`` when a stage gives up for a reason that is not the
# lecture's own (a bug, a database or disk error): our sentence, the exception goes to the log
_STAGE_LABELS = {"transcribing": "Transcription", "slides": "Slide reading", "indexing": "Indexing"}


def internal_failure(stage_name: str, attempts: int) -> str:
    """The user-facing reason for a stage that failed ``attempts`` times on an unexpected error."""
    label = _STAGE_LABELS.get(stage_name, stage_name.capitalize())
    return f"{label} failed after {attempts} attempts because of an internal error; retry the lecture."


@retry_on_disconnect
def _lecture_course(pool: ConnectionPool, lecture_id: str) -> str | None:
    """The course id of lecture ``lecture_id`` (a UUID string), None when there is no such lecture."""
    with pool.connection() as conn:
        row = conn.execute("SELECT course_id FROM lectures WHERE id=%s", (lecture_id,)).fetchone()
    return None if row is None else str(row["course_id"])


def decode_event(stage: Stage, body: bytes) -> Message:
    """``body`` as ``stage.message_type``. Raises :class:`RefusedEvent` when it does not decode."""
    try:
        return stage.message_type.FromString(body)
    except DecodeError as e:
        raise RefusedEvent(f"the payload is not a {stage.message_type.__name__}: {e}") from None


def check_event(event: Message, pool: ConnectionPool, store: MediaStore) -> bool:
    """Validates a decoded event before any handler runs; returns False when its lecture no
    longer exists (deleted while the event was queued: drop it), True when it may be acted on.

    Checks: ``lecture_id`` and ``course_id`` are UUIDs; the lecture belongs to that course;
    every ``*_uri`` field that is set names an existing file inside that lecture's folder of the
    store (:meth:`MediaStore.resolve`; with object storage an object under the lecture's prefix of
    the configured bucket, downloaded here once for the handlers); a ``LectureUploaded`` carries at
    least one of them.
    Raises :class:`RefusedEvent` with the reason otherwise.
    """
    fields = event.DESCRIPTOR.fields_by_name
    for name in ("lecture_id", "course_id"):
        if name in fields and not _valid_uuid(getattr(event, name)):
            raise RefusedEvent(f"{name} {getattr(event, name)[:80]!r} is not a UUID")
    course = _lecture_course(pool, event.lecture_id)
    if course is None:
        return False
    if "course_id" in fields and uuid.UUID(event.course_id) != uuid.UUID(course):
        raise RefusedEvent(f"lecture {event.lecture_id} is not a lecture of course {event.course_id}")
    uris = [name for name in fields if name.endswith("_uri")]
    for name in uris:
        value = getattr(event, name)
        if not value:
            continue
        try:
            path = store.resolve(value, event.lecture_id)
        except UnsafeMediaURI as e:
            raise RefusedEvent(f"{name}: {e}") from None
        if not path.is_file():
            raise RefusedEvent(f"{name}: {path} is not a file")
    if uris and not any(getattr(event, name) for name in uris):
        raise RefusedEvent(f"the event carries none of {', '.join(uris)}")
    return True


@retry_on_disconnect
def _processed(pool: ConnectionPool, consumer: str, mid: str) -> bool:
    with pool.connection() as conn:
        return conn.execute("SELECT 1 FROM processed_events WHERE consumer=%s AND msg_id=%s",
                            (consumer, mid)).fetchone() is not None


@retry_on_disconnect
def _mark_processed(pool: ConnectionPool, consumer: str, mid: str) -> None:
    with pool.connection() as conn:
        conn.execute("INSERT INTO processed_events (consumer, msg_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                     (consumer, mid))


def _header_value(text: str, limit: int = 500) -> str:
    """``text`` as one line fit for a NATS header value."""
    return " ".join(text.split())[:limit]


class _Runner:
    """Runs one stage's messages: validation, idempotency, heartbeats, retries, dead-letter and
    failure (see the module docstring). One instance per stage, shared by its subscribers."""

    def __init__(self, stage: Stage, settings: Settings, pool: ConnectionPool, store: MediaStore,
                 broker: NatsBroker):
        self.stage, self.settings, self.pool, self.store, self.broker = stage, settings, pool, store, broker
        self.ack_wait_s = stage.ack_wait_s or settings.ack_wait_s

    async def publish(self, subject: str, payload: bytes, msg_id: str, headers: dict | None = None) -> None:
        """Publishes to the stream with ``msg_id`` as ``Nats-Msg-Id``, retried for
        ``settings.publish_retry_s`` while no answer comes (:func:`bus.publish_retrying`)."""
        hdrs = {"Nats-Msg-Id": msg_id, **(headers or {})}
        await bus.publish_retrying(
            lambda: self.broker.publish(payload, subject, stream=self.settings.stream, headers=hdrs),
            self.settings.publish_retry_s)

    async def dead_letter(self, body: bytes, mid: str, subject: str, reason: str) -> None:
        """Publishes ``body`` to the dead-letter subject with headers naming the reason, the
        consumer and the subject it came from."""
        await self.publish(bus.DEAD_LETTER, body, f"dlq:{self.stage.durable}:{mid}", headers={
            bus.DEAD_LETTER_REASON: _header_value(reason), bus.DEAD_LETTER_CONSUMER: self.stage.durable,
            bus.DEAD_LETTER_SUBJECT: subject})

    async def fail(self, event: Message, reason: str, mid: str) -> None:
        """Marks the (validated) lecture failed with ``reason`` (our sentence) and publishes
        ``lecture.failed``; a side consumer's failure is not the lecture's and is only logged."""
        log.warning("lecture %s failed at %s: %s", event.lecture_id, self.stage.stage_name, reason)
        if not self.stage.records_stage:
            return
        await asyncio.to_thread(set_stage, self.pool, event.lecture_id, stage="failed", status="failed",
                                progress=0.0, error=reason)
        failed = events_pb2.LectureFailed(lecture_id=event.lecture_id, course_id=getattr(event, "course_id", ""),
                                          stage=self.stage.stage_name, reason=reason)
        await self.publish(bus.FAILED, failed.SerializeToString(), bus.next_msg_id(bus.FAILED, event.lecture_id, mid))

    async def consume(self, body: bytes, msg: NatsMessage) -> None:
        """Entry point of every message of this stage."""
        raw = msg.raw_message
        mid = (raw.headers or {}).get("Nats-Msg-Id") or f"seq:{raw.metadata.sequence.stream}"
        try:
            event = decode_event(self.stage, body)
            live = await asyncio.to_thread(check_event, event, self.pool, self.store)
        except RefusedEvent as e:
            log.error("%s refused event %s on %s: %s", self.stage.durable, mid, raw.subject, e)
            await self.dead_letter(body, mid, raw.subject, str(e))
            await msg.reject()
            return
        if not live:
            log.warning("%s: lecture %s no longer exists; dropping", self.stage.durable, event.lecture_id)
            await msg.ack()
            return
        if await asyncio.to_thread(_processed, self.pool, self.stage.durable, mid):
            await msg.ack()
            return
        await self.run(event, body, msg, mid)

    def _progress(self, event: Message, loop: asyncio.AbstractEventLoop) -> Callable[[float], None]:
        def progress(fraction: float) -> None:
            set_stage(self.pool, event.lecture_id, stage=self.stage.stage_name, progress=float(fraction))
            p = events_pb2.StageProgress(lecture_id=event.lecture_id, stage=self.stage.stage_name,
                                         progress=float(fraction))
            asyncio.run_coroutine_threadsafe(self.broker.publish(p.SerializeToString(), bus.PROGRESS), loop)
        return progress

    async def _heartbeat(self, msg: NatsMessage) -> None:
        """In-progress acks every third of the ack wait; one that fails (the connection is moving
        to another server of the cluster) is logged and the next one tried, never given up."""
        while True:
            await asyncio.sleep(max(1.0, self.ack_wait_s / 3))
            try:
                await msg.in_progress()
            except Exception as e:  # noqa: BLE001 - a lost heartbeat must not end the heartbeats
                log.warning("%s: in-progress ack failed (%s); trying again", self.stage.durable, e)

    async def run(self, event: Message, body: bytes, msg: NatsMessage, mid: str) -> None:
        """Runs the handler in a thread with in-progress acks; publishes the next event, or retries,
        dead-letters and fails the lecture (see :func:`internal_failure`)."""
        stage, meta = self.stage, msg.raw_message.metadata
        ctx = StageContext(settings=self.settings, pool=self.pool, lecture_id=event.lecture_id,
                           progress=self._progress(event, asyncio.get_running_loop()), store=self.store)
        beat = asyncio.create_task(self._heartbeat(msg))
        _PENDING.set(meta.num_pending, {"consumer": stage.durable})
        t_stage = time.perf_counter()
        try:
            if stage.records_stage:
                await asyncio.to_thread(set_stage, self.pool, event.lecture_id, stage=stage.stage_name)
            with _TRACER.start_as_current_span(stage.durable, attributes={
                    "lc.lecture_id": event.lecture_id, "lc.delivery": meta.num_delivered}):
                with self.store.pinned(event.lecture_id):  # its local media copies are not evicted meanwhile
                    result = await asyncio.to_thread(stage.handle, event, ctx)
            _STAGE_S.record(time.perf_counter() - t_stage, {"stage": stage.durable, "outcome": "ok"})
        except PermanentError as e:
            _STAGE_S.record(time.perf_counter() - t_stage, {"stage": stage.durable, "outcome": "failed"})
            await self.fail(event, str(e), mid)
            await msg.ack()
            return
        except Exception as e:  # transient or unknown: retry, then dead-letter
            log.exception("%s failed on %s (delivery %s)", stage.durable, event.lecture_id, meta.num_delivered)
            if meta.num_delivered >= self.settings.max_deliver:
                await self.dead_letter(body, mid, msg.raw_message.subject,
                                       f"failed after {meta.num_delivered} attempts: {type(e).__name__}: {e}")
                await self.fail(event, internal_failure(stage.stage_name, meta.num_delivered), mid)
                await msg.reject()
            else:
                await msg.nack(delay=min(30.0, 2.0 * meta.num_delivered))
            return
        finally:
            beat.cancel()
        if result is not None:
            subject, next_msg = result
            await self.publish(subject, next_msg.SerializeToString(), bus.next_msg_id(subject, event.lecture_id, mid))
        await asyncio.to_thread(_mark_processed, self.pool, stage.durable, mid)
        await msg.ack()


def consumer_config(stage: Stage, settings: Settings) -> ConsumerConfig:
    """The desired config of ``stage``'s durable consumer: its ack wait (seconds; the stage's own
    or ``LC_ACK_WAIT_S``), ``LC_MAX_DELIVER`` + 1 deliveries (the last one dead-letters) and its
    subject as filter. Reconciled with the live durable at start (:func:`bus.reconcile_consumer`)."""
    return ConsumerConfig(ack_wait=stage.ack_wait_s or settings.ack_wait_s, max_deliver=settings.max_deliver + 1,
                          filter_subject=stage.subject)


def _handler(runner: _Runner, name: str):
    """A FastStream handler function (body + message, nothing else in its signature) for ``runner``."""
    async def handler(body: bytes, msg: NatsMessage) -> None:
        await runner.consume(body, msg)

    handler.__name__ = name
    return handler


def build_app(settings: Settings, pool: ConnectionPool, nats_url: str, stages: list[Stage], *,
              client_name: str = "lecture-copilot-worker") -> tuple[FastStream, NatsBroker]:
    """A FastStream app with ``stage.concurrency`` pull subscribers per stage on the stage's
    durable consumer (see the module docstring). ``nats_url`` may list several servers
    (comma-separated); the broker connects as ``client_name`` and reconnects forever. At start it
    creates or updates the stream and reconciles every durable with its desired config
    (:func:`consumer_config`, :func:`bus.reconcile_consumer`) before the subscribers attach.

    Concurrency: each subscriber fetches one message at a time and only when it is idle, so a
    message is never held in memory waiting for a worker without in-progress acks (FastStream's
    ``max_workers`` prefetches one and holds it unacknowledged while all workers are busy, which
    JetStream redelivers after the ack wait). Different lectures' messages of one stage thus run
    side by side in one process; handlers run in threads (a pool sized for all stages).
    """
    from faststream.nats.opentelemetry import NatsTelemetryMiddleware

    # the middleware continues the lecture's trace from the message headers and injects it into
    # what we publish; graceful_timeout lets the messages in flight finish on SIGTERM
    broker = NatsBroker(bus.servers(nats_url), name=client_name,
                        graceful_timeout=settings.graceful_timeout_s, middlewares=[NatsTelemetryMiddleware()],
                        **bus.connect_options(settings))
    stream = JStream(settings.stream, subjects=bus.STREAM_SUBJECTS, declare=False)
    store = media_store(settings)
    desired: list[ConsumerConfig] = []

    for stage in stages:
        runner = _Runner(stage, settings, pool, store, broker)
        config = consumer_config(stage, settings)
        desired.append(config.evolve(durable_name=stage.durable))
        for i in range(max(1, stage.concurrency)):
            broker.subscriber(
                stage.subject, stream=stream, durable=stage.durable, config=config,
                pull_sub=PullSub(batch_size=1, timeout=5.0), ack_policy=AckPolicy.MANUAL,
                # the AsyncAPI document (lecturecopilot_ops/asyncapi.py) shows one entry per durable
                title=f"{stage.subject}:{stage.durable}", include_in_schema=i == 0,
                description=f"Durable pull consumer `{stage.durable}` of stream {settings.stream}: "
                            f"{stage.message_type.DESCRIPTOR.full_name} messages, stage `{stage.stage_name}`.",
            )(_handler(runner, f"handle_{stage.durable}_{i}"))

    app = FastStream(broker)
    threads = sum(max(1, s.concurrency) for s in stages) + 8  # handlers + their set_stage/DB calls

    @app.on_startup
    async def declare_stream() -> None:
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=threads, thread_name_prefix="lc-stage"))
        nc = await bus.connect(nats_url, name=f"{client_name}-setup", settings=settings)
        try:
            js = nc.jetstream()
            await bus.publish_retrying(lambda: bus.ensure_stream(js, settings.stream, settings.stream_replicas),
                                       settings.publish_retry_s)
            for config in desired:  # before the subscribers start: they reuse an existing durable as it is
                done = await bus.publish_retrying(lambda: bus.reconcile_consumer(js, settings.stream, config),
                                                  settings.publish_retry_s)
                log.info("consumer %s: %s", config.durable_name, done)
        finally:
            await nc.close()

    return app, broker


def run(stages: list[Stage], *, health_port: int, name: str) -> None:
    """Entry point of a worker service: connects, serves health, consumes until SIGTERM."""
    logsafe.install()  # a log it cannot write (a full disk) must not end the worker
    telemetry.setup(name)
    settings = get_settings()
    pool = db.make_pool(settings, max_size=max(4, sum(max(1, s.concurrency) for s in stages) + 2))
    url = embedded.nats_url(settings)
    app, broker = build_app(settings, pool, url, stages, client_name=f"lecture-copilot-{name}")
    state = {"ready": False}

    @app.after_startup
    async def mark_ready() -> None:
        state["ready"] = True

    serve_health(settings.health_host, health_port, lambda: state["ready"])
    log.info("%s consuming %s from %s", name, [s.subject for s in stages], url)
    asyncio.run(app.run())
