"""Notices to the instructor when a lecture is ready or has failed (mail over SMTP).

Consumes ``lecture.indexed`` and ``lecture.failed``; the worker's processed-events table makes it
one mail per event even when JetStream redelivers. A mail server that refuses or is down is
logged, never retried into a failed lecture: the lecture's state in Postgres is the truth and
the page shows it.
"""

from __future__ import annotations

import logging
import smtplib

from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.labels import clock
from lecturecopilot.mail import send_mail
from lecturecopilot.worker import StageContext

log = logging.getLogger(__name__)


def _recipient_and_lecture(ctx: StageContext) -> tuple[str | None, dict | None]:
    with ctx.pool.connection() as conn:
        row = conn.execute(
            "SELECT l.number, l.title, l.duration_s, l.status, l.error, l.course_id, c.title AS course_title, "
            "c.owner_email "
            "FROM lectures l JOIN courses c ON c.id=l.course_id WHERE l.id=%s", (ctx.lecture_id,)).fetchone()
    if row is None:
        return None, None
    owner = row["owner_email"] if row["owner_email"] and "@" in row["owner_email"] else None
    return owner or ctx.settings.operator_email, row


def _send(ctx: StageContext, subject: str, body: str, to: str | None) -> None:
    if not to:
        log.info("no recipient for notice %r (course has no owner address, LC_OPERATOR_EMAIL unset)", subject)
        return
    try:
        send_mail(ctx.settings, to, subject, body)
    except (smtplib.SMTPException, OSError) as e:
        log.warning("notice %r to %s not sent: %s", subject, to, e)


def _notify(ctx: StageContext, compose) -> None:
    """Mails ``compose(row, course_url)`` → ``(subject, body)`` (or None: no mail) about the lecture to
    its recipient."""
    to, row = _recipient_and_lecture(ctx)
    if row is None:
        return
    mail = compose(row, f"{ctx.settings.public_url.rstrip('/')}/courses/{row['course_id']}")
    if mail is not None:
        _send(ctx, *mail, to)


def lecture_ready(event: ev.LectureIndexed, ctx: StageContext):
    """``lecture.indexed`` → a "ready" mail to the course owner; returns None (no next event)."""
    n = event.segment_count
    _notify(ctx, lambda row, url: (
        f"Lecture {row['number']} is ready: {row['title'] or 'untitled'}",
        f"Lecture {row['number']} ({row['title'] or 'untitled'}, {clock(row['duration_s'] or 0)}) of "
        f"{row['course_title']} is transcribed, indexed and ready for questions ({n} passage{'s' if n != 1 else ''}).\n\n"
        f"Open the course: {url}\n"))
    return None


STAGES = {"transcribing", "slides", "indexing"}  # the stages whose failure is the lecture's


def lecture_failed(event: ev.LectureFailed, ctx: StageContext):
    """``lecture.failed`` → a "failed" mail with the stage and the reason the lecture records; returns
    None. The mail says what Postgres says (``lectures.error``, our sentence), never the event's own
    text: anyone who may publish ``lecture.failed`` could otherwise mail any words to an instructor.
    No mail for a lecture that has not failed."""
    stage = f" at the {event.stage} stage" if event.stage in STAGES else ""
    _notify(ctx, lambda row, url: None if row["status"] != "failed" else (
        f"Lecture {row['number']} could not be processed: {row['title'] or 'untitled'}",
        f"Lecture {row['number']} ({row['title'] or 'untitled'}) of {row['course_title']} failed{stage}.\n\n"
        f"Reason: {row['error'] or 'not recorded'}\n\nYou can retry it or upload another file: {url}\n"))
    return None
