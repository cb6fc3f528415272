"""The ingest HTTP service (internal: the gateway forwards uploads here after checking auth).

``POST /v1/courses/<course_id>/lectures`` — multipart ``video`` and/or ``captions``, ``title``,
``number``, ``language``, optional ``video_size`` → 202 ``{"lecture_id", "status": "queued"}`` or a
JSON error (507 ``insufficient_storage`` when the body, by its ``Content-Length`` or the gateway's
``X-LC-Body-Length``, does not fit in the store with ``LC_UPLOAD_DISK_RESERVE_BYTES`` kept, as for a
resumable start; the form's files are spooled in the store and keep the reserve while they arrive).
``POST /v1/courses/<course_id>/lectures/check`` with ``X-LC-Body-Length`` → 200 ``{"ok": true}`` or
that 507: the gateway asks it before it relays a body.

Resumable: ``POST /v1/courses/<course_id>/uploads`` (JSON ``filename``, ``size``, ``title``,
``number``; headers ``X-LC-Owner``: who starts it, ``X-LC-Owner-Role``: ``admin`` is not capped) →
201 status; ``PUT /v1/uploads/<id>`` with ``Content-Range: bytes a-b/size`` per chunk → 200 status
(202 with ``lecture_id`` after the last one); ``GET /v1/uploads/<id>`` → the offset;
``GET /v1/uploads/<id>/course`` → ``{"upload_id", "course_id"}`` (404 unknown). A thread sweeps
uploads (expiry, interrupted finishes) at start and every few seconds (``resumable.sweep``), then
what crashes and races left in the media store: unfinished multipart uploads, spool files,
objects of deleted lectures (``leftovers.sweep``).
The routes are :mod:`.routes`' blueprints; errors and body bounds are wired in :mod:`.web`.
Request bodies are bounded in time (``httpserve.bounded_bodies``), a little beyond the gateway's
bounds so that the gateway, which faces the client, is the one that drops a slow upload.
``POST /v1/lectures/<id>/retry`` → 202 (a failed lecture re-queued), 404, 409.
``PATCH /v1/lectures/<id>`` JSON ``title``, ``number`` → 204 (renamed and renumbered: ingest owns the
``lectures`` rows), 400, 404, 409 ``number_taken``.
``DELETE /v1/lectures/<id>`` and ``DELETE /v1/courses/<id>`` → 204: the lectures' rows and media (and a course's
resumable uploads) removed; the course row is the gateway's to delete after.
"""

from __future__ import annotations

import logging
import threading
import time

from flask import Flask

from lecturecopilot import bus, db, embedded, telemetry
from lecturecopilot.mediastores import media_store
from lecturecopilot.points import PointWriter
from lecturecopilot.settings import get_settings

from . import leftovers, resumable, web
from .routes import BLUEPRINTS
from .store import IngestStore

log = logging.getLogger("services.ingest")


def _sweeper(parts: web.Ingest) -> None:
    """Sweeps resumable uploads (see resumable.sweep), then what crashes and races left in the
    media store (see leftovers.sweep), at start and every ``sweep_interval_s``."""
    while True:
        try:
            resumable.sweep(settings=parts.settings, records=parts.records, store=parts.store, publish=parts.publish)
        except Exception:
            log.exception("sweeping uploads failed")
        try:
            leftovers.sweep(settings=parts.settings, records=parts.records, store=parts.store)
        except Exception:
            log.exception("sweeping leftovers failed")
        time.sleep(resumable.sweep_interval_s(parts.settings))


def create_app() -> Flask:
    """The ingest WSGI app: connects to Postgres (a pool of 8), the media store and the bus, wires
    the routes and starts the upload sweeper thread. Settings come from the environment."""
    settings = get_settings()
    tracing = telemetry.setup("ingest")
    publisher = bus.SyncPublisher(embedded.nats_url(settings), settings.stream, settings.stream_replicas,
                                 settings=settings)
    parts = web.Ingest(settings=settings, records=IngestStore(db.make_pool(settings, max_size=8)),
                       store=media_store(settings), publish=publisher.publish,
                       points=PointWriter.from_settings(settings))  # None: no Qdrant server, ask's shards follow Postgres
    app = Flask("ingest")
    if tracing:
        from opentelemetry.instrumentation.flask import FlaskInstrumentor

        FlaskInstrumentor().instrument_app(app, excluded_urls="healthz,readyz")
    web.install(app, parts)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    threading.Thread(target=_sweeper, args=(parts,), daemon=True, name="upload-sweeper").start()
    return app
