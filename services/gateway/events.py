"""The server-sent events of the gateway's two streams, each event's ``data`` (JSON) declared once
as a pydantic model: what the views send and what the OpenAPI document states (``openapi.py``
describes each event as ``{"event": <name>, "data": <JSON of its model>}``).

* ``POST /api/courses/{id}/ask`` with ``Accept: text/event-stream`` (:data:`ASK_EVENTS`): ``delta``
  events as the answer is written, a ``sentence`` with its chips as each one is settled, then one
  ``done`` (the whole answer, as the JSON answer) or one ``error``.
* ``GET /api/lectures/{id}/events`` (:data:`LECTURE_EVENTS`): a ``status`` whenever the lecture's
  status, stage, progress or error changes, or ``deleted`` once it is gone.

Comments (``: keep-alive``) and the stream's ``retry`` are not events.
"""

from __future__ import annotations

from pydantic import BaseModel

from . import responses


class Delta(responses.Answer):
    """``delta``: the next piece of the answer's text as it is written."""

    text: str


class StreamError(responses.Answer):
    """``error``: the stream ends without an answer (``code`` as the JSON errors', e.g. ``ask_unavailable``)."""

    code: str
    message: str


class LectureStatus(responses.Answer):
    """``status``: ``status`` queued | processing | ready | failed, ``stage`` and ``progress`` (0..1)
    while processing, ``error`` when failed; the stream ends after ready or failed."""

    status: str
    stage: str | None
    progress: float | None
    error: str | None


class LectureDeleted(responses.Answer):
    """``deleted``: the lecture is gone; the stream ends."""

    lecture_id: str


ASK_EVENTS: dict[str, type[BaseModel]] = {"delta": Delta, "sentence": responses.Sentence,
                                          "done": responses.AskAnswer, "error": StreamError}
LECTURE_EVENTS: dict[str, type[BaseModel]] = {"status": LectureStatus, "deleted": LectureDeleted}
