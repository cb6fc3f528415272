"""Pure pieces of the web product: the people hash, email normalisation, the CSP."""

from services.gateway.emails import normal_email
from services.gateway.limits import person_key
from services.gateway.security import csp


def test_person_key_is_keyed_and_hides_the_ip():
    a = person_key(b"secret-1", None, "203.0.113.7")
    assert a == person_key(b"secret-1", None, "203.0.113.7")
    assert a != person_key(b"secret-2", None, "203.0.113.7")  # another server secret, another pseudonym
    assert "203" not in a and len(a) == 32
    # an account is counted by account, whatever its IP, case-insensitively
    assert person_key(b"s", "Ada@Example.edu", "1.1.1.1") == person_key(b"s", "ada@example.edu", "2.2.2.2")
    assert person_key(b"s", None, "1.1.1.1") != person_key(b"s", None, "2.2.2.2")


def test_normal_email():
    assert normal_email("  Ada@Example.EDU ") == "ada@example.edu"
    for bad in ("", "ada", "ada@", "@example.edu", "a b@example.edu", None, 5, "x@" + "y" * 260 + ".edu",
                "a\u200b@x.edu", "bo\u017fs@x.edu", "a@[127.0.0.1]", "a@x.edu.", "a@localhost", "x" * 65 + "@x.edu"):
        assert normal_email(bad) is None, bad  # look-alikes, an IP literal, a trailing dot: never beside a@x.edu
    assert normal_email("a@b\u00fccher.example") == "a@xn--bcher-kva.example"


def test_csp_allows_only_the_nonce_and_self():
    policy = csp("abc123")
    assert "script-src 'self' 'nonce-abc123'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    assert "media-src 'self';" in policy


def test_csp_lets_videos_come_from_the_object_store_only_when_there_is_one():
    policy = csp("abc123", "https://media.example.r2.cloudflarestorage.com")
    assert "media-src 'self' https://media.example.r2.cloudflarestorage.com;" in policy
    assert "img-src 'self' data:;" in policy and "connect-src 'self';" in policy  # nothing else widened


def test_the_upload_form_accepts_exactly_what_ingest_takes():
    """The form's ``accept=`` list is written by hand in index.html; ingest's lists are the truth."""
    import re
    from pathlib import Path

    from lecturecopilot.media import VIDEO_EXTENSIONS
    from services.ingest.core import CAPTION_EXTENSIONS

    html = (Path(__file__).resolve().parents[2] / "services/gateway/static/index.html").read_text()
    accept = re.search(r'id="up-file"[^>]*accept="([^"]+)"', html).group(1).split(",")
    assert accept == [*VIDEO_EXTENSIONS, *sorted(CAPTION_EXTENSIONS, key=[".vtt", ".srt"].index)]
