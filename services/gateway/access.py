"""Who makes a request and what they may do: the bearer token or browser session of the request
(:func:`authenticate`, run before every view), roles (:func:`require`), rate limits
(:func:`limited`), and the course, lecture and upload a request may see or manage.

A private course is a 404 for anyone but its owner, its members and admins (also when reached
through one of its lectures, uploads, answers or questions); managing it needs its instructor
(``courses.owner_email``) or an admin: 401 anonymous, 403 otherwise.
"""

from __future__ import annotations

import uuid
from typing import Callable

from flask import g, request, session

from lecturecopilot import db, httpserve

from . import accounts, limits, security, store
from .auth import Principal, principal_for
from .context import ctx
from .contract import too_large
from .errors import ApiError, not_found

UPLOAD_ENDPOINTS = ("lectures.upload_lecture", "lectures.resumable_upload_chunk")  # bodies stream to ingest


def authenticate() -> None:
    """``before_request``: bounds the body (``max_json_bytes``, or the upload's time bounds), then
    sets ``g.principal`` (or None), ``g.via`` ("token" | "session" | None) and ``g.csrf``. Raises
    ApiError 415 ``unsupported_encoding`` for a body with a ``Content-Encoding`` (gzip, say: it would be
    read as it is, not decompressed), 413 for a too-large body, 401 for an unknown bearer token, 403
    ``csrf_failed`` for a cookie-authenticated write without the session's ``X-CSRF-Token``; first, a
    request no route takes gets that 404 / 405."""
    c = ctx()
    s = c.settings
    if request.routing_exception is not None:  # no such route (an empty id: /api/courses//lectures): 404 or
        raise request.routing_exception       # 405 first, not "too large" for an upload sent to it
    coding = request.headers.get("Content-Encoding", "").strip().lower()
    if coding not in ("", "identity"):  # RFC 9110 §15.5.16: 415 for a content coding the server does not take
        raise ApiError(415, "unsupported_encoding", f"Send the body without a Content-Encoding (not {coding!r}): "
                       "the API reads a body as it is and does not decompress it.")
    if request.endpoint not in UPLOAD_ENDPOINTS:  # uploads stream to ingest; the rest is small
        request.max_content_length = s.max_json_bytes
        if (request.content_length or 0) > s.max_json_bytes:
            raise too_large(s.max_json_bytes)
    else:
        httpserve.set_body_limits(request.environ, stall_s=s.upload_stall_s, timeout_s=(
            s.upload_timeout_s if request.endpoint == UPLOAD_ENDPOINTS[0] else s.upload_chunk_timeout_s),
            resend_hint="a resumable upload resumes from the offset GET /api/uploads/{id} gives")
    g.via, g.csrf = None, None
    header = request.headers.get("Authorization")
    if header:
        g.principal = db.retry_on_disconnect(principal_for)(c.pool, s.admin_token, header)
        if g.principal is None:
            raise ApiError(401, "unauthorized", "The token is not valid.")
        g.via = "token"  # bearer requests carry no ambient authority: no CSRF check
        return
    g.principal = None
    if "sid" in session:
        found = db.retry_on_disconnect(accounts.session_principal)(c.pool, session.get("sid"), c.admin_emails)
        if found is not None:
            g.principal, g.csrf = found
            g.via = "session"
    if g.via == "session" and request.method not in security.SAFE_METHODS and not security.csrf_ok(g.csrf):
        raise ApiError(403, "csrf_failed", "Missing or wrong X-CSRF-Token header (see GET /api/me).")


def require(*roles: str) -> Principal:
    """The request's principal when it has one of ``roles``; ApiError 401 anonymous, 403 otherwise."""
    if g.principal is None:
        raise ApiError(401, "unauthorized", "Sign in (Authorization: Bearer <token>) to do this.")
    if g.principal.role not in roles:
        raise ApiError(403, "forbidden", f"This needs the {' or '.join(roles)} role.")
    return g.principal


def person() -> str:
    """The keyed hash naming who makes this request (account, else IP); never the raw IP."""
    p = g.principal
    return limits.person_key(ctx().secret, p.email if p else None, request.remote_addr)


def unlimited() -> bool:
    """The operator (admin) is not rate-limited."""
    return bool(g.principal and g.principal.role == "admin")


def limited(checks: list[tuple[str, int, int]], what: str) -> limits.Use:
    """Counts one use of each ``(key, window_s, limit)`` (see limits.hit_all); ApiError 429
    ``rate_limited`` with ``Retry-After`` beyond one. Returns the use, for ``limits.refund`` when
    the request is refused after all."""
    use, retry = db.retry_on_disconnect(limits.hit_all)(ctx().pool, checks)
    if use is None:
        raise ApiError(429, "rate_limited", f"Too many {what}; try again in {retry // 60 + 1} minutes.",
                       headers={"Retry-After": str(retry)})
    return use


def a_uuid(value: str, what: str) -> str:
    """``value`` as a canonical UUID string; ApiError 404 "Unknown <what>." when it is not one."""
    try:
        return str(uuid.UUID(value))
    except (ValueError, TypeError):
        raise not_found(what) from None


def viewer() -> store.Viewer:
    """The request's principal as a :class:`store.Viewer`."""
    p = g.principal
    return store.Viewer(admin=bool(p and p.role == "admin"), email=(p.email.lower() if p else ""))


def may_manage(course: dict) -> bool:
    """True when the request's principal is an admin or the instructor owning ``course``."""
    p = g.principal
    return bool(p and (p.role == "admin" or (p.role == "instructor"
                                             and p.email.lower() == (course["owner_email"] or "").lower())))


@db.retry_on_disconnect
def course_row(course_id: str, *, manage: bool = False) -> dict:
    """The course if this request may see it (else ApiError 404, also for a private course it may
    not see); with ``manage``, 401 anonymous, 403 unless admin or the owning instructor."""
    row = store.visible_course(ctx().pool, a_uuid(course_id, "course"), viewer())
    if row is None:
        raise not_found("course")
    if manage:
        require("instructor", "admin")
        if not may_manage(row):
            raise ApiError(403, "forbidden", "Only the course's instructor or an admin can do this." if row["owner_email"]
                           else "Only an admin can do this: the course has no instructor (it was made on the command "
                                "line without --owner).")
    return row


def within_course(course_id: str, what: str, *, manage: bool = False) -> dict:
    """:func:`course_row` for something of that course (a lecture, an answer, a question): its
    404 says "Unknown <what>."; 401 and 403 as they are."""
    try:
        return course_row(course_id, manage=manage)
    except ApiError as e:
        if e.status == 404:
            raise not_found(what) from None
        raise


@db.retry_on_disconnect
def lecture_and_course(lecture_id: str, *, manage: bool = False) -> tuple[dict, dict]:
    """The ``lectures`` row and its course's row if the course may be seen (ApiError 404
    otherwise); ``manage`` as in :func:`course_row`."""
    row = store.lecture(ctx().pool, a_uuid(lecture_id, "lecture"))
    if row is None:
        raise not_found("lecture")
    return row, within_course(str(row["course_id"]), "lecture", manage=manage)


def lecture_row(lecture_id: str, *, manage: bool = False) -> dict:
    """The ``lectures`` row if its course may be seen (ApiError 404 otherwise); ``manage`` as in
    :func:`course_row`."""
    return lecture_and_course(lecture_id, manage=manage)[0]


def lecture_in(course: dict, lecture_id: str | None) -> str:
    """The lecture a search or question is scoped to: '' for the whole course, else the id of a
    lecture of ``course`` (ApiError 404 otherwise, checked before anything is counted)."""
    if not lecture_id:
        return ""
    try:
        lid = str(uuid.UUID(lecture_id))
    except ValueError:
        raise ApiError(404, "not_found", "Unknown lecture in this course.") from None
    if not store.lecture_in_course(ctx().pool, lid, course["id"]):
        raise ApiError(404, "not_found", "Unknown lecture in this course.")
    return lid


@db.retry_on_disconnect
def managed_upload(upload_id: str, course_of: Callable[[str], str | None]) -> str:
    """The upload's id when this request may manage its course (ApiError 401 anonymous, 403 for a
    student; 404 "Unknown upload." for an unknown upload and for one of a course it may not manage). ``course_of``
    gives an upload's course id, None when unknown (``ingest_client.upload_course``: ingest owns
    ``uploads``)."""
    require("instructor", "admin")  # first, so that who may not see it learns nothing of whether it exists
    uid = a_uuid(upload_id, "upload")
    course_id = course_of(uid)
    if course_id is None:
        raise not_found("upload")
    try:
        course_row(course_id, manage=True)
    except ApiError as e:  # another's course: the same answer as no such upload (it said "Unknown course.")
        if e.status in (403, 404):
            raise not_found("upload") from None
        raise
    return uid
