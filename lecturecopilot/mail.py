"""Outgoing mail over SMTP with the standard library (``smtplib`` + ``email.message``).

Mail is off while ``LC_SMTP_HOST`` is unset: :func:`send_mail` then returns False and logs the
message it would have sent, so a one-machine install without a mail server loses nothing else.
"""

from __future__ import annotations

import logging
import smtplib
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from .settings import Settings

log = logging.getLogger(__name__)


def send_mail(settings: Settings, to: str, subject: str, body: str, *, timeout_s: float = 10.0) -> bool:
    """Sends a plain-text mail to ``to``; returns True when the SMTP server accepted it.

    Returns False (and logs) when mail is not configured or ``to`` is empty. Raises
    ``smtplib.SMTPException`` or ``OSError`` when the configured server refuses or is unreachable;
    callers that must not fail on mail (pipeline notices) catch these.
    """
    if not settings.smtp_host or not to:
        log.info("mail off (LC_SMTP_HOST unset or no recipient); not sent: %r to %r", subject, to)
        return False
    msg = EmailMessage()
    msg["From"] = settings.mail_from
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = make_msgid(domain="lecture-copilot")
    msg["Date"] = formatdate(localtime=False)
    msg.set_content(body)
    with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=timeout_s) as smtp:
        if settings.smtp_starttls:
            smtp.starttls()
        if settings.smtp_user:
            smtp.login(settings.smtp_user, settings.smtp_password or "")
        smtp.send_message(msg)
    return True
