"""Rate limits under bursts of concurrent requests: no request above a limit passes. A second
gateway on the same stores runs with low limits (and a secret of its own, so its people are
counted afresh); counters live in Postgres under keyed hashes, never raw IPs."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from web_helpers import Gateway, mint, upload_captions

pytestmark = pytest.mark.slow

LIMITS = {"LC_ASK_LIMIT_VISITOR": "3", "LC_ASK_LIMIT_USER": "5", "LC_ASK_LIMIT_VISITOR_TOTAL": "4",
          "LC_ASK_LIMIT_USER_TOTAL": "7", "LC_SIGNIN_LIMIT": "2", "LC_CONTACT_LIMIT": "2",
          "LC_SECRET_KEY": "limits-test-secret-0123456789"}


@pytest.fixture(scope="module")
def gw(stack):
    g = Gateway(stack, LIMITS)
    yield g
    g.close()


@pytest.fixture(scope="module")
def courses(stack):
    ids = []
    for title in ("Limits A", "Limits B"):
        course = stack.create_course(title)
        r = upload_captions(stack.base, course, headers=stack.admin)
        assert r.status_code == 202, r.text
        assert stack.wait_ready(r.json()["lecture_id"], timeout_s=90)["status"] == "ready"
        ids.append(course)
    return ids


def burst(n: int, fn) -> list[int]:
    with ThreadPoolExecutor(max_workers=n) as pool:
        return [r.status_code for r in pool.map(lambda _: fn(), range(n))]


def _ask(base, course, headers=None):
    return requests.post(f"{base}/api/courses/{course}/ask", json={"question": "What is at the root of a max heap?"},
                         headers=headers or {}, timeout=60)


def test_visitor_questions_per_course_and_across_courses(gw, courses):
    a, b = courses
    codes = burst(12, lambda: _ask(gw.base, a))
    assert codes.count(200) == 3 and codes.count(429) == 9, codes
    r = _ask(gw.base, a)
    assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited" and int(r.headers["Retry-After"]) > 0
    # the cap across all courses (4): one more question on course B, then no more
    codes = burst(8, lambda: _ask(gw.base, b))
    assert codes.count(200) == 1 and codes.count(429) == 7, codes


def test_signed_in_users_have_their_own_larger_budget(stack, gw, courses):
    a, b = courses
    alice = mint(stack, "student", "alice-limits@example.edu")
    bob = mint(stack, "student", "bob-limits@example.edu")
    codes = burst(14, lambda: _ask(gw.base, a, alice))
    assert codes.count(200) == 5 and codes.count(429) == 9, codes
    codes = burst(10, lambda: _ask(gw.base, b, alice))
    assert codes.count(200) == 2, codes  # 7 across all courses
    # another account on the same IP is counted on its own
    assert _ask(gw.base, a, bob).status_code == 200
    # the operator (admin) is not limited
    assert all(c == 200 for c in burst(6, lambda: _ask(gw.base, a, stack.admin)))


def test_sign_in_links_per_visitor_per_hour(gw, smtp_sink):
    before = len(smtp_sink.messages)
    codes = burst(10, lambda: requests.post(f"{gw.base}/api/auth/magic-link", json={"email": "burst@example.edu"},
                                            timeout=30))
    assert codes.count(202) == 2 and codes.count(429) == 8, codes
    sent = [m for m in smtp_sink.messages[before:] if "burst@example.edu" in str(m["To"])]
    assert len(sent) == 2
    # the visitor's hour is used up, whatever address it asks for
    r = requests.post(f"{gw.base}/api/auth/magic-link", json={"email": "other@example.edu"}, timeout=30)
    assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited"


def test_sign_in_requests_count_nothing_on_a_server_without_mail(stack):
    """Mail off: every request is told so (503 mail_off, naming the operator's command), none is
    counted against the hour's links (the probe got 429 after four 503s) and no link is made."""
    g = Gateway(stack, {**LIMITS, "LC_SMTP_HOST": ""})
    try:
        codes = [requests.post(f"{g.base}/api/auth/magic-link", json={"email": "no-mail@example.edu"},
                               timeout=30) for _ in range(5)]
        assert [r.status_code for r in codes] == [503] * 5, [r.text for r in codes]
        assert codes[-1].json()["error"]["code"] == "mail_off" and "signin-link" in codes[-1].json()["error"]["message"]
        with stack.db() as conn:
            made = conn.execute("SELECT count(*) FROM login_tokens WHERE email='no-mail@example.edu'").fetchone()[0]
        assert made == 0
    finally:
        g.close()


def test_contact_messages_per_day(gw, smtp_sink):
    before = len(smtp_sink.messages)
    body = {"email": "visitor@example.edu", "name": "Vis", "message": "Is there a course on graphs?\nThanks"}
    codes = burst(9, lambda: requests.post(f"{gw.base}/api/contact", json=body, timeout=30))
    assert codes.count(202) == 2 and codes.count(429) == 7, codes
    mails = [m for m in smtp_sink.messages[before:] if "operator@example.edu" in str(m["To"])]
    assert len(mails) == 2 and "Is there a course on graphs?" in mails[0].get_content()
    assert requests.post(f"{gw.base}/api/contact", json={"email": "nope", "message": "x"}, timeout=10).status_code == 400


def test_counters_hold_no_raw_ip(stack, gw, courses):
    with stack.db() as c:
        keys = [r[0] for r in c.execute("SELECT key FROM rate_counters").fetchall()]
    assert keys and not any("127.0.0.1" in k or "@" in k for k in keys)
