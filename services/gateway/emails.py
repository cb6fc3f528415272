"""Email addresses as sign-in, tokens and course members take them: one normal form
(:func:`normal_email`), used by :mod:`.accounts` and :mod:`.auth` alike."""

from __future__ import annotations

from email_validator import EmailNotValidError, validate_email


def normal_email(value) -> str | None:
    """The address lower-cased and stripped, or None when it is not one (``email-validator``, RFC 5322
    syntax, no DNS lookup): an ASCII local part only, so look-alikes ("bo\u017fs@x.edu" with a long s,
    "a\u200b@x.edu" with a zero-width space) never sit beside the real address; no IP-literal domain
    ("a@[127.0.0.1]"), no trailing dot; a local part of at most 64 characters, at most 254 in all; an
    internationalised domain in its ASCII (punycode) form."""
    if not isinstance(value, str) or len(value) > 320:
        return None
    try:
        got = validate_email(value.strip(), check_deliverability=False, allow_smtputf8=False)
    except EmailNotValidError:
        return None
    out = (got.ascii_email or got.normalized).lower()
    local, _, domain = out.rpartition("@")
    return out if len(out) <= 254 and len(local) <= 64 and "." in domain else None
