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
inside the stream's duplicate window, and consumers record finished ids in Postgres. That makes
a retried publish safe: :func:`publish_retrying` retries one that got no answer (a cluster
electing a stream leader, a client reconnecting to another server) for ``LC_PUBLISH_RETRY_S``.

``NATS_URL`` may name several servers of one cluster, comma-separated (:func:`servers`); every
client connects with :func:`connect_options`: the whole list, reconnecting forever.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Awaitable, Callable, TypeVar

import nats
import nats.errors
import nats.js.errors
from nats.js.api import ConsumerConfig, DeliverPolicy, StreamConfig
from nats.js.errors import BadRequestError, NotFoundError
from tenacity import AsyncRetrying, before_sleep_log, retry_if_exception_type, stop_after_delay, wait_exponential

from . import embedded, telemetry
from .events.v1 import events_pb2
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
# subject -> (its protobuf message, None for the dead-letter copy of any of them; who publishes it):
# the table of the module docstring, as data for the AsyncAPI document (lecturecopilot_ops/asyncapi.py)
EVENTS: dict[str, tuple[type | None, str]] = {
    UPLOADED: (events_pb2.LectureUploaded, "ingest (or any other service)"),
    TRANSCRIBED: (events_pb2.LectureTranscribed, "transcribe"),
    SLIDES_READ: (events_pb2.LectureSlidesRead, "transcribe (slides consumer)"),
    INDEXED: (events_pb2.LectureIndexed, "index"),
    FAILED: (events_pb2.LectureFailed, "any stage that gives up"),
    DEAD_LETTER: (None, "a consumer that refused the event, or after max_deliver deliveries; headers "
                        f"{DEAD_LETTER_REASON}, {DEAD_LETTER_CONSUMER}, {DEAD_LETTER_SUBJECT}"),
    PROGRESS: (events_pb2.StageProgress, "any stage while it runs (core NATS only, not stored)"),
}
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


log = logging.getLogger("lecturecopilot.bus")
T = TypeVar("T")


def servers(url: str) -> list[str]:
    """The servers of ``NATS_URL``: ``"nats://a:4222, nats://b:4222"`` -> ``["nats://a:4222",
    "nats://b:4222"]`` (one URL gives a list of one). Raises ``ValueError`` when it names none."""
    found = [u.strip() for u in url.split(",") if u.strip()]
    if not found:
        raise ValueError(f"NATS_URL {url!r} names no server")
    return found


def connect_options(settings: Settings | None = None) -> dict:
    """Keyword arguments for ``nats.connect`` / FastStream's ``NatsBroker`` besides the servers:
    reconnect forever (``max_reconnect_attempts=-1``), ``LC_NATS_RECONNECT_WAIT_S`` seconds between
    attempts (2.0 without settings), each connect attempt bounded to 5 s."""
    wait = settings.nats_reconnect_wait_s if settings is not None else 2.0
    return {"allow_reconnect": True, "max_reconnect_attempts": -1, "reconnect_time_wait": wait,
            "connect_timeout": 5}


async def connect(url: str, *, name: str = "lecture-copilot", settings: Settings | None = None):
    """A nats-py connection to every server of ``url`` (see :func:`servers`) with
    :func:`connect_options`. Raises ``nats.errors.NoServersError`` when none answers at first."""
    return await nats.connect(servers(url), name=name, **connect_options(settings))


# a publish that got no answer: no stream leader yet, the server we were on went away, or the
# request timed out meanwhile. With Nats-Msg-Id a retry is never stored twice.
RETRYABLE_PUBLISH_ERRORS = (
    nats.errors.TimeoutError, asyncio.TimeoutError, nats.errors.NoRespondersError,
    nats.js.errors.NoStreamResponseError, nats.js.errors.ServiceUnavailableError,
    nats.errors.ConnectionReconnectingError, nats.errors.StaleConnectionError,
    nats.errors.OutboundBufferLimitError,
)


async def publish_retrying(publish: Callable[[], Awaitable[T]], retry_s: float) -> T:
    """Awaits ``publish()`` and, while it raises one of :data:`RETRYABLE_PUBLISH_ERRORS`, again
    after 0.2, 0.4 ... 2 s waits, for at most ``retry_s`` seconds; then re-raises the last error.
    Other errors (a refused message, a closed connection) are raised at once."""
    async for attempt in AsyncRetrying(
            retry=retry_if_exception_type(RETRYABLE_PUBLISH_ERRORS), stop=stop_after_delay(retry_s),
            wait=wait_exponential(multiplier=0.2, max=2.0), reraise=True,
            before_sleep=before_sleep_log(log, logging.WARNING)):
        with attempt:
            return await publish()
    raise AssertionError("unreachable")  # pragma: no cover


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


CONSUMER_CREATE_ERROR = 10012  # JSConsumerCreateErrF: the server refused to create or update the consumer
# what a durable's live config must match (the rest, e.g. where delivery starts, only matters at creation)
RECONCILED_FIELDS = ("ack_policy", "ack_wait", "max_deliver", "filter_subject", "max_ack_pending", "backoff",
                     "replay_policy", "max_waiting")


def consumer_drift(live: ConsumerConfig, desired: ConsumerConfig) -> dict[str, tuple]:
    """The fields of :data:`RECONCILED_FIELDS` that ``desired`` sets (not None) and ``live``
    has otherwise, as ``{field: (live value, desired value)}``; ack wait compared to 1 ms."""
    drift = {}
    for name in RECONCILED_FIELDS:
        want, have = getattr(desired, name), getattr(live, name)
        if want is None:
            continue
        same = abs(float(have or 0) - float(want)) < 1e-3 if name == "ack_wait" else have == want
        if not same:
            drift[name] = (have, want)
    return drift


async def reconcile_consumer(js, stream: str, desired: ConsumerConfig) -> str:
    """Makes the durable consumer ``desired.durable_name`` of ``stream`` have ``desired``'s
    fields (:func:`consumer_drift`); nats-py's ``pull_subscribe`` reuses an existing durable as it
    is, so a changed ``LC_ACK_WAIT_S`` or ``LC_MAX_DELIVER`` would otherwise never reach it.

    Returns what it did: ``"created"`` (there was none), ``"unchanged"``, ``"updated"`` (the
    server's in-place consumer update, which keeps its position and pending messages) or
    ``"recreated"``: the server refused the update (a field it cannot change, e.g. the ack policy)
    and nothing was in flight (no unacknowledged message), so the durable is deleted and created
    again starting after its ack floor, losing nothing (a message acknowledged above the floor may
    come again; the workers' ``processed_events`` drop it). ``"kept"`` when that was not safe (a
    warning is logged; the next start tries again). Raises the JetStream API errors of other
    failures (``nats.js.errors.APIError``, ``nats.errors.TimeoutError``).
    """
    name = desired.durable_name
    try:
        info = await js.consumer_info(stream, name)
    except NotFoundError:
        await js.add_consumer(stream, desired)
        return "created"
    drift = consumer_drift(info.config, desired)
    if not drift:
        return "unchanged"
    log.info("consumer %s of %s differs from its desired config %s; updating", name, stream, drift)
    try:
        await js.add_consumer(stream, desired)  # CONSUMER.DURABLE.CREATE on an existing durable = update
        return "updated"
    except nats.js.errors.APIError as e:
        # the server answers a change it cannot make in place ("ack policy can not be updated") with
        # err_code 10012 (code 500 on 2.15); anything else (no leader, a timeout) is raised
        if not (isinstance(e, BadRequestError) or e.err_code == CONSUMER_CREATE_ERROR):
            raise
        if info.num_ack_pending:
            log.warning("consumer %s cannot be updated (%s) and has %d messages in flight; kept as it is",
                        name, e, info.num_ack_pending)
            return "kept"
        floor = info.ack_floor.stream_seq if info.ack_floor and info.ack_floor.stream_seq else 0
        log.warning("consumer %s cannot be updated (%s); recreating it after stream sequence %d", name, e, floor)
    try:
        await js.delete_consumer(stream, name)
    except NotFoundError:
        pass  # another replica recreated it meanwhile
    start = {"deliver_policy": DeliverPolicy.BY_START_SEQUENCE, "opt_start_seq": floor + 1} if floor else {}
    await js.add_consumer(stream, desired.evolve(**start))
    return "recreated"


class SyncPublisher:
    """Publishes to JetStream from synchronous code (Flask, CLI) through one connection
    running on a private event-loop thread.

    ``url`` may list several servers (:func:`servers`); the connection reconnects forever
    (:func:`connect_options`). ``publish`` returns after JetStream acknowledged storage, retrying
    for ``settings.publish_retry_s`` while no answer comes (:func:`publish_retrying`); raises the
    last error after that. The current OpenTelemetry context goes along as a W3C ``traceparent``
    header.
    """

    def __init__(self, url: str, stream: str, replicas: int = 1, *, settings: Settings | None = None):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="nats-publisher")
        self._thread.start()
        self._stream = stream
        self._retry_s = settings.publish_retry_s if settings is not None else 30.0
        self._nc = self._run(connect(url, name="lecture-copilot-publisher", settings=settings))
        self._js = self._nc.jetstream()
        self._run(publish_retrying(lambda: ensure_stream(self._js, stream, replicas), self._retry_s),
                  timeout=self._retry_s + 15.0)

    def _run(self, coro, timeout: float = 15.0):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def publish(self, subject: str, payload: bytes, msg_id: str, headers: dict | None = None) -> None:
        hdrs = {"Nats-Msg-Id": msg_id, **(headers or {})}
        telemetry.inject(hdrs)  # the caller's trace (the upload request) continues in the pipeline
        self._run(publish_retrying(lambda: self._js.publish(subject, payload, stream=self._stream, headers=hdrs),
                                   self._retry_s), timeout=self._retry_s + 15.0)

    def close(self) -> None:
        try:
            self._run(self._nc.drain(), timeout=5)
        except Exception:
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)


def nats_connect_url(settings: Settings) -> str:
    """The NATS URL from settings, starting the embedded server when none is configured."""
    return embedded.nats_url(settings)
