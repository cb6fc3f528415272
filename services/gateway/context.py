"""What the gateway's views share, on one typed object: ``app.extensions["gateway"]`` holds a
:class:`GatewayContext` that ``create_app`` builds once; a view fetches it with :func:`ctx`.

It carries the settings, the Postgres pool, ask's gRPC stub, the server secret (for keyed
hashes and the session cookie), the admin emails, the mailer, the media store, and the caps on threads held
by long requests: upload bodies relayed to ingest (:attr:`GatewayContext.relay_slots`), live
progress streams and video bodies (:class:`StreamSlots`).
"""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path
from dataclasses import dataclass
from typing import Callable

from flask import current_app
from psycopg_pool import ConnectionPool

from lecturecopilot.ask.v1 import ask_pb2_grpc
from lecturecopilot.settings import Settings
from lecturecopilot.storage import MediaStore

from .errors import ApiError

STATIC = Path(str(resources.files("services.gateway").joinpath("static")))  # the web client


_PROGRESS_FULL = ("Too many live progress streams are open; poll GET /api/lectures/{id} for the status instead, "
                  "or retry shortly.")


class StreamSlots:
    """Caps long responses that each hold a thread while they are written — live progress streams
    (SSE), video bodies: at most ``total`` at once in the process and ``per_person`` per person
    (:func:`.access.person`: the account, else the client's network), and signed-out people together
    at most ``signed_out`` (None: no share of their own), so visitors who never sign in can't take
    every slot from the course's own students."""

    def __init__(self, total: int, per_person: int, full: str = _PROGRESS_FULL, retry_after_s: int = 5,
                 signed_out: int | None = None):
        self._slots = threading.BoundedSemaphore(total)
        self._per_person, self._signed_out_cap = per_person, signed_out
        self._of: dict[str, int] = {}
        self._signed_out = 0
        self._lock = threading.Lock()
        self._full, self._retry = full, retry_after_s

    def take(self, who: str, signed_in: bool = True) -> Callable[[], None]:
        """Reserves a slot for person ``who``; returns its (idempotent) release. Raises ApiError
        429 ``too_many_streams`` (``Retry-After``) when the person, the signed-out share (for a
        person not ``signed_in``) or the process is at its cap."""
        anonymous = not signed_in and self._signed_out_cap is not None
        with self._lock:
            if (self._of.get(who, 0) >= self._per_person or (anonymous and self._signed_out >= self._signed_out_cap)
                    or not self._slots.acquire(blocking=False)):
                raise ApiError(429, "too_many_streams", self._full, headers={"Retry-After": str(self._retry)})
            self._of[who] = self._of.get(who, 0) + 1
            self._signed_out += anonymous
        released = threading.Event()

        def release() -> None:
            with self._lock:
                if released.is_set():
                    return
                released.set()
                self._of[who] -= 1
                self._signed_out -= anonymous
                if not self._of[who]:
                    del self._of[who]
                self._slots.release()
        return release


@dataclass
class GatewayContext:
    """The gateway's shared dependencies (one per app)."""

    settings: Settings
    pool: ConnectionPool
    ask: ask_pb2_grpc.AskServiceStub
    secret: bytes  # LC_SECRET_KEY or the data dir's secret_key (accounts.server_secret)
    admin_emails: frozenset[str]  # LC_ADMIN_EMAILS, lower-case
    relay_slots: threading.BoundedSemaphore  # upload bodies streaming to ingest at once
    streams: StreamSlots  # live progress streams open at once
    videos: StreamSlots  # video bodies being sent at once
    mail: Callable[[str, str, str], bool]  # (to, subject, body) → sent (False when mail is off); lecturecopilot.mail
    media: MediaStore  # the media store (lecturecopilot.mediastores.media_store): presigned video URLs with object storage


def ctx() -> GatewayContext:
    """The running app's :class:`GatewayContext` (inside a request or app context)."""
    return current_app.extensions["gateway"]
