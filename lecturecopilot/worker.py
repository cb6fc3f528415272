"""Runs pipeline stages as durable JetStream pull consumers with FastStream.

A :class:`Stage` is a plain, synchronous handler function plus the subject it consumes.
This module owns everything about the bus: decoding, idempotency (Postgres
``processed_events``), in-progress acks while a long stage runs, retries with back-off,
the dead-letter subject after ``max_deliver`` deliveries, marking the lecture failed,
progress events, and publishing the next event with its ``Nats-Msg-Id``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

from faststream import FastStream
from faststream.middlewares import AckPolicy
from faststream.nats import JStream, NatsBroker, PullSub
from faststream.nats.annotations import NatsMessage
from google.protobuf.message import DecodeError, Message
from nats.js.api import ConsumerConfig
from psycopg_pool import ConnectionPool

from . import bus, telemetry
from .db import retry_on_disconnect
from .events.v1 import events_pb2
from .settings import Settings

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


@retry_on_disconnect
def set_stage(pool: ConnectionPool, lecture_id: str, *, stage: str, status: str = "processing",
              progress: float = 0.0, error: str | None = None) -> None:
    """Records a lecture's stage in Postgres (the durable state the API shows); once more on a new
    connection if Postgres cut this one."""
    with pool.connection() as conn:
        conn.execute(
            "UPDATE lectures SET stage=%s, status=%s, progress=%s, error=%s, updated_at=now() WHERE id=%s",
            (stage, status, progress, error, lecture_id),
        )


@retry_on_disconnect
def _lecture_exists(pool: ConnectionPool, lecture_id: str) -> bool:
    with pool.connection() as conn:
        return conn.execute("SELECT 1 FROM lectures WHERE id=%s", (lecture_id,)).fetchone() is not None


def _valid_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
        return True
    except (ValueError, TypeError):
        return False


def build_app(settings: Settings, pool: ConnectionPool, nats_url: str, stages: list[Stage]) -> tuple[FastStream, NatsBroker]:
    """A FastStream app with one durable pull consumer per stage (see module docstring)."""
    from faststream.nats.opentelemetry import NatsTelemetryMiddleware

    # the middleware continues the lecture's trace from the message headers and injects it into
    # what we publish; graceful_timeout lets the message in flight finish on SIGTERM
    broker = NatsBroker(nats_url, name="lecture-copilot-worker", graceful_timeout=settings.graceful_timeout_s,
                        middlewares=[NatsTelemetryMiddleware()])
    stream = JStream(settings.stream, subjects=bus.STREAM_SUBJECTS, declare=False)

    async def publish(subject: str, payload: bytes, msg_id: str) -> None:
        await broker.publish(payload, subject, stream=settings.stream, headers={"Nats-Msg-Id": msg_id})

    async def fail(lecture_id: str, course_id: str, stage: Stage, reason: str, mid: str) -> None:
        log.warning("lecture %s failed at %s: %s", lecture_id, stage.stage_name, reason)
        if not stage.records_stage:  # a side consumer's failure is not the lecture's
            return
        if _valid_uuid(lecture_id):
            await asyncio.to_thread(set_stage, pool, lecture_id, stage="failed", status="failed",
                                    progress=0.0, error=reason)
            failed = events_pb2.LectureFailed(lecture_id=lecture_id, course_id=course_id,
                                              stage=stage.stage_name, reason=reason)
            await publish(bus.FAILED, failed.SerializeToString(), bus.next_msg_id(bus.FAILED, lecture_id, mid))

    for stage in stages:
        config = ConsumerConfig(ack_wait=stage.ack_wait_s or settings.ack_wait_s,
                                max_deliver=settings.max_deliver + 1, filter_subject=stage.subject)

        def make_handler(stage: Stage):
            async def handler(body: bytes, msg: NatsMessage) -> None:
                raw = msg.raw_message
                meta = raw.metadata
                mid = (raw.headers or {}).get("Nats-Msg-Id") or f"seq:{meta.sequence.stream}"
                try:
                    event = stage.message_type.FromString(body)
                    if not _valid_uuid(event.lecture_id):
                        raise DecodeError(f"lecture_id {event.lecture_id!r} is not a UUID")
                except DecodeError as e:
                    log.error("malformed %s event %s: %s", stage.subject, mid, e)
                    await publish(bus.DEAD_LETTER, body, f"dlq:{stage.durable}:{mid}")
                    await msg.reject()
                    return
                if not _lecture_exists(pool, event.lecture_id):
                    log.warning("%s: lecture %s no longer exists; dropping", stage.durable, event.lecture_id)
                    await msg.ack()
                    return
                with pool.connection() as conn:
                    done = conn.execute("SELECT 1 FROM processed_events WHERE consumer=%s AND msg_id=%s",
                                        (stage.durable, mid)).fetchone()
                if done:
                    await msg.ack()
                    return

                loop = asyncio.get_running_loop()

                def progress(fraction: float) -> None:
                    set_stage(pool, event.lecture_id, stage=stage.stage_name, progress=float(fraction))
                    p = events_pb2.StageProgress(lecture_id=event.lecture_id, stage=stage.stage_name,
                                                 progress=float(fraction))
                    asyncio.run_coroutine_threadsafe(broker.publish(p.SerializeToString(), bus.PROGRESS), loop)

                async def heartbeat() -> None:
                    while True:
                        await asyncio.sleep(max(1.0, (stage.ack_wait_s or settings.ack_wait_s) / 3))
                        await msg.in_progress()

                ctx = StageContext(settings=settings, pool=pool, lecture_id=event.lecture_id, progress=progress)
                beat = asyncio.create_task(heartbeat())
                _PENDING.set(meta.num_pending, {"consumer": stage.durable})
                t_stage = time.perf_counter()
                try:
                    if stage.records_stage:
                        await asyncio.to_thread(set_stage, pool, event.lecture_id, stage=stage.stage_name)
                    with _TRACER.start_as_current_span(stage.durable, attributes={
                            "lc.lecture_id": event.lecture_id, "lc.delivery": meta.num_delivered}):
                        result = await asyncio.to_thread(stage.handle, event, ctx)
                    _STAGE_S.record(time.perf_counter() - t_stage, {"stage": stage.durable, "outcome": "ok"})
                except PermanentError as e:
                    beat.cancel()
                    _STAGE_S.record(time.perf_counter() - t_stage, {"stage": stage.durable, "outcome": "failed"})
                    await fail(event.lecture_id, getattr(event, "course_id", ""), stage, str(e), mid)
                    await msg.ack()
                    return
                except Exception as e:  # transient or unknown: retry, then dead-letter
                    beat.cancel()
                    log.exception("%s failed on %s (delivery %s)", stage.durable, event.lecture_id, meta.num_delivered)
                    if meta.num_delivered >= settings.max_deliver:
                        await publish(bus.DEAD_LETTER, body, f"dlq:{stage.durable}:{mid}")
                        await fail(event.lecture_id, getattr(event, "course_id", ""), stage,
                                   f"{stage.stage_name} failed after {meta.num_delivered} attempts: {e}", mid)
                        await msg.reject()
                    else:
                        await msg.nack(delay=min(30.0, 2.0 * meta.num_delivered))
                    return
                beat.cancel()
                if result is not None:
                    subject, next_msg = result
                    await publish(subject, next_msg.SerializeToString(), bus.next_msg_id(subject, event.lecture_id, mid))
                with pool.connection() as conn:
                    conn.execute("INSERT INTO processed_events (consumer, msg_id) VALUES (%s, %s) "
                                 "ON CONFLICT DO NOTHING", (stage.durable, mid))
                await msg.ack()

            handler.__name__ = f"handle_{stage.durable}"
            return handler

        broker.subscriber(
            stage.subject, stream=stream, durable=stage.durable, config=config,
            pull_sub=PullSub(batch_size=1, timeout=5.0), ack_policy=AckPolicy.MANUAL,
        )(make_handler(stage))

    app = FastStream(broker)

    @app.on_startup
    async def declare_stream() -> None:
        import nats as _nats

        nc = await _nats.connect(nats_url)
        try:
            await bus.ensure_stream(nc.jetstream(), settings.stream, settings.stream_replicas)
        finally:
            await nc.close()

    return app, broker


def run(stages: list[Stage], *, health_port: int, name: str) -> None:
    """Entry point of a worker service: connects, serves health, consumes until SIGTERM."""
    from . import db, embedded
    from .health import serve_health
    from .settings import get_settings

    from . import telemetry

    telemetry.setup(name)
    settings = get_settings()
    pool = db.make_pool(settings, max_size=4)
    url = embedded.nats_url(settings)
    app, broker = build_app(settings, pool, url, stages)
    state = {"ready": False}

    @app.after_startup
    async def mark_ready() -> None:
        state["ready"] = True

    serve_health(settings.health_host, health_port, lambda: state["ready"])
    log.info("%s consuming %s from %s", name, [s.subject for s in stages], url)
    asyncio.run(app.run())
