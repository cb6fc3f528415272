"""Calls to the ingest service (HTTP, ``LC_INGEST_URL``): deletions, retries, uploads and the
course of a resumable upload.

Upload bodies stream through to ingest, each holding a thread while it arrives: at most
``LC_UPLOAD_RELAYS_MAX`` at once (plain requests always find a thread), each bounded in time
(``access.authenticate`` sets the bounds). A refused upload's body is not read: the connection
closes (:func:`drop_refused_upload`).
"""

from __future__ import annotations

import requests
from flask import Response, request

from lecturecopilot import httpserve

from .access import UPLOAD_ENDPOINTS
from .context import ctx
from .errors import ApiError


def call(method: str, path: str, *, timeout_s: float = 60, **kw) -> requests.Response:
    """``method path`` on ingest (``kw`` as for ``requests.request``, ``timeout_s`` in seconds);
    ApiError 503 ``ingest_unavailable`` when it is unreachable."""
    try:
        return requests.request(method, f"{ctx().settings.ingest_url}{path}", timeout=timeout_s, **kw)
    except requests.RequestException:
        raise ApiError(503, "ingest_unavailable", "The upload service is not reachable; try again shortly.") from None


def delete(path: str, what: str) -> Response:
    """``DELETE path`` on ingest (the ``what`` with its media and search points: "course" or
    "lecture"); the empty 204 on success. ApiError 502 ``delete_failed`` when ingest could not
    delete it, 503 ``ingest_unavailable`` when ingest is unreachable."""
    if call("DELETE", path).status_code != 204:
        raise ApiError(502, "delete_failed", f"Deleting the {what} failed; try again.")
    return Response(status=204)


def upload_course(upload_id: str) -> str | None:
    """The course id of a resumable upload, asked of ingest (which owns ``uploads``); None for an
    unknown upload. ApiError 503 ``ingest_unavailable`` when ingest is unreachable or fails."""
    resp = call("GET", f"/v1/uploads/{upload_id}/course", timeout_s=30)
    if resp.status_code == 404:
        return None
    if resp.status_code != 200:
        raise ApiError(503, "ingest_unavailable", "The upload service is not reachable; try again shortly.")
    return str(resp.json()["course_id"])


def relay(method: str, path: str, *, timeout_s: float = 3600, **kw) -> Response:
    """Ingest's answer to ``method path`` as ours: its status and JSON body, its ``Retry-After``."""
    resp = call(method, path, timeout_s=timeout_s, **kw)
    keep = {k: resp.headers[k] for k in ("Retry-After",) if k in resp.headers}
    return Response(resp.content, status=resp.status_code, content_type="application/json", headers=keep)


def relay_upload(method: str, path: str, headers: dict, timeout_s: float) -> Response:
    """Streams this request's body to ``method path`` on ingest and answers with ingest's
    answer; ApiError 503 ``uploads_busy`` (Retry-After) when ``upload_relays_max`` bodies are streaming."""
    slots = ctx().relay_slots
    if not slots.acquire(blocking=False):
        raise ApiError(503, "uploads_busy", "The server is receiving as many uploads as it can; try again in a "
                       "moment.", headers={"Retry-After": "10"})
    try:
        return relay(method, path, timeout_s=timeout_s, headers=headers,
                     data=iter(lambda: request.stream.read(1024 * 1024), b""))
    finally:
        slots.release()


def drop_refused_upload(resp: Response) -> Response:
    """``after_request``: an upload answered with an error closes the connection unread."""
    if request.endpoint in UPLOAD_ENDPOINTS and resp.status_code >= 400:
        httpserve.drop_body(request.environ)
    return resp
