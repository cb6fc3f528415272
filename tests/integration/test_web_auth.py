"""Sign-in by emailed link (through a local aiosmtpd sink), browser sessions, CSRF on cookie
writes, roles and instructor-access requests, against the real stack."""

from __future__ import annotations

import pytest
import requests

from web_helpers import link_token, mint, sign_in

pytestmark = pytest.mark.slow


def test_magic_link_signs_in_once_with_a_safe_cookie(stack, smtp_sink):
    since = len(smtp_sink.messages)
    s = requests.Session()
    r = s.post(f"{stack.base}/api/auth/magic-link", json={"email": "Ada@Example.edu"}, timeout=10)
    assert r.status_code == 202, r.text
    mail = smtp_sink.wait_for("ada@example.edu", since=since)
    assert "sign-in" in mail["Subject"].lower()
    token = link_token(mail)
    assert s.get(f"{stack.base}/api/me", timeout=10).json()["signed_in"] is False
    r = s.post(f"{stack.base}/api/auth/verify", json={"token": token}, timeout=10)
    assert r.status_code == 200 and r.json() == {"email": "ada@example.edu", "role": "student"}
    cookie = r.headers["Set-Cookie"]
    assert "lc_session=" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert "Secure" not in cookie  # plain http in tests; https public URLs get Secure
    me = s.get(f"{stack.base}/api/me", timeout=10).json()
    assert me["signed_in"] and me["role"] == "student" and me["via"] == "session" and me["csrf_token"]
    # the link works once
    r2 = requests.post(f"{stack.base}/api/auth/verify", json={"token": token}, timeout=10)
    assert r2.status_code == 400 and r2.json()["error"]["code"] == "invalid_link"
    # the verify page itself is served (the browser posts the token from it)
    assert requests.get(f"{stack.base}/auth/verify?token={token}", timeout=10).status_code == 200
    # sign-out ends the session on the server: the old cookie is worthless afterwards
    old = dict(s.cookies)
    assert s.post(f"{stack.base}/api/auth/logout", headers={"X-CSRF-Token": me["csrf_token"]}, timeout=10).status_code == 204
    assert requests.get(f"{stack.base}/api/me", cookies=old, timeout=10).json()["signed_in"] is False


def test_bad_sign_in_input(stack):
    r = requests.post(f"{stack.base}/api/auth/magic-link", json={"email": "not-an-address"}, timeout=10)
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_email"
    r = requests.post(f"{stack.base}/api/auth/verify", json={"token": "made-up"}, timeout=10)
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_link"


def test_csrf_on_cookie_writes_but_not_on_bearer_tokens(stack, smtp_sink):
    s = sign_in(stack.base, smtp_sink, "csrf-student@example.edu")
    csrf = s.headers.pop("X-CSRF-Token")
    url = f"{stack.base}/api/role-requests"
    for headers in ({}, {"X-CSRF-Token": "wrong"}, {"X-CSRF-Token": csrf, "Origin": "https://evil.example"}):
        r = s.post(url, json={"reason": "I teach"}, headers=headers, timeout=10)
        assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed", (headers, r.text)
    with stack.db() as c:
        assert c.execute("SELECT count(*) FROM role_requests WHERE email='csrf-student@example.edu'").fetchone()[0] == 0
    r = s.post(url, json={"reason": "I teach"}, headers={"X-CSRF-Token": csrf, "Origin": stack.base}, timeout=10)
    assert r.status_code == 201, r.text
    # a bearer-token request carries no ambient authority: no CSRF token needed
    r = requests.post(f"{stack.base}/api/courses", json={"title": "By token"}, headers=stack.admin, timeout=10)
    assert r.status_code == 201
    # an anonymous write (asking a public course) needs none either; a cookie write of the admin does
    admin = sign_in(stack.base, smtp_sink, "admin@example.edu")
    admin.headers.pop("X-CSRF-Token")
    r = admin.post(f"{stack.base}/api/courses", json={"title": "x"}, timeout=10)
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed"


def test_instructor_access_requested_and_approved_or_denied(stack, smtp_sink):
    student = sign_in(stack.base, smtp_sink, "wants-to-teach@example.edu")
    other = sign_in(stack.base, smtp_sink, "also-wants@example.edu")
    admin = sign_in(stack.base, smtp_sink, "admin@example.edu")
    assert admin.get(f"{stack.base}/api/me", timeout=10).json()["role"] == "admin"
    # a student can't create a course yet, nor see or decide requests
    r = student.post(f"{stack.base}/api/courses", json={"title": "Mine"}, timeout=10)
    assert r.status_code == 403
    req = student.post(f"{stack.base}/api/role-requests", json={"reason": "I teach CS 101"}, timeout=10).json()
    assert req["status"] == "pending"
    again = student.post(f"{stack.base}/api/role-requests", json={}, timeout=10).json()
    assert again["id"] == req["id"]  # one pending request per person
    req2 = other.post(f"{stack.base}/api/role-requests", json={}, timeout=10).json()
    assert student.get(f"{stack.base}/api/role-requests", timeout=10).status_code == 403
    assert student.post(f"{stack.base}/api/role-requests/{req['id']}/approve", timeout=10).status_code == 403
    pending = admin.get(f"{stack.base}/api/role-requests", timeout=10).json()["requests"]
    assert {p["id"] for p in pending} >= {req["id"], req2["id"]}
    r = admin.post(f"{stack.base}/api/role-requests/{req['id']}/approve", timeout=10)
    assert r.status_code == 200 and r.json()["status"] == "approved"
    r = admin.post(f"{stack.base}/api/role-requests/{req2['id']}/deny", timeout=10)
    assert r.status_code == 200 and r.json()["status"] == "denied"
    assert admin.post(f"{stack.base}/api/role-requests/{req['id']}/deny", timeout=10).status_code == 404
    me = student.get(f"{stack.base}/api/me", timeout=10).json()
    assert me["role"] == "instructor" and me["role_request"]["status"] == "approved"
    assert other.get(f"{stack.base}/api/me", timeout=10).json()["role"] == "student"
    r = student.post(f"{stack.base}/api/courses", json={"title": "Now mine"}, timeout=10)
    assert r.status_code == 201
    with stack.db() as c:
        owner = c.execute("SELECT owner_email FROM courses WHERE id=%s", (r.json()["id"],)).fetchone()[0]
    assert owner == "wants-to-teach@example.edu"
    # an instructor token-holder asking again is told so
    inst = mint(stack, "instructor", "tok-inst@example.edu")
    assert requests.post(f"{stack.base}/api/role-requests", json={}, headers=inst, timeout=10).status_code == 409


def test_an_admin_no_longer_listed_is_a_student_and_revoking_ends_browser_sessions(stack, smtp_sink):
    """The probe: an admin removed from LC_ADMIN_EMAILS stayed admin in every session, and
    ``revoke-tokens`` left browser sessions alone (14 days)."""
    import subprocess
    import sys

    from lecturecopilot import db
    from lecturecopilot_ops.stack import service_env

    s = sign_in(stack.base, smtp_sink, "was-admin@example.edu")
    pool = db.make_pool(stack.settings, max_size=1)
    try:  # as if the address had been listed when this user last signed in
        with pool.connection() as conn:
            conn.execute("UPDATE users SET role='admin' WHERE email='was-admin@example.edu'")
    finally:
        pool.close()
    assert s.get(f"{stack.base}/api/me", timeout=10).json()["role"] == "student"
    assert s.get(f"{stack.base}/api/role-requests", timeout=10).status_code == 403
    listed = sign_in(stack.base, smtp_sink, "admin@example.edu")  # LC_ADMIN_EMAILS of the test stack
    assert listed.get(f"{stack.base}/api/me", timeout=10).json()["role"] == "admin"
    out = subprocess.run([sys.executable, "-m", "lecturecopilot_ops.cli", "revoke-tokens", "--email", "Was-Admin@example.edu"],
                         capture_output=True, text=True, env=service_env(stack.settings), timeout=60)
    assert "revoked 0 token(s) and 1 browser session(s)" in out.stdout, (out.stdout, out.stderr)
    assert s.get(f"{stack.base}/api/me", timeout=10).json()["signed_in"] is False
    assert listed.get(f"{stack.base}/api/me", timeout=10).json()["signed_in"] is True


def test_an_operator_whose_server_sends_no_mail_prints_a_sign_in_link(stack):
    """``lecture-copilot signin-link --email``: the link the mail would hold, printed (the newcomer's
    ``make demo`` has no mail, so the web pages for instructors were out of reach); it works once."""
    import subprocess
    import sys
    from urllib.parse import parse_qs, urlparse

    from lecturecopilot_ops.stack import service_env

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "lecturecopilot_ops.cli", "signin-link", *args],
                              capture_output=True, text=True, env=service_env(stack.settings), timeout=60)

    out = cli("--email", "Operator@Example.edu")
    assert out.returncode == 0, out.stderr
    url = urlparse(out.stdout.strip())
    assert f"{url.scheme}://{url.netloc}" == stack.settings.public_url.rstrip("/") and url.path == "/auth/verify"
    token = parse_qs(url.query)["token"][0]
    s = requests.Session()
    r = s.post(f"{stack.base}/api/auth/verify", json={"token": token}, timeout=10)
    assert r.status_code == 200 and r.json()["email"] == "operator@example.edu", r.text
    assert s.get(f"{stack.base}/api/me", timeout=10).json()["signed_in"] is True
    again = requests.post(f"{stack.base}/api/auth/verify", json={"token": token}, timeout=10)
    assert again.status_code == 400 and again.json()["error"]["code"] == "invalid_link"
    bad = cli("--email", "not an address")
    assert bad.returncode == 2 and "not an email address" in bad.stderr, (bad.stdout, bad.stderr)


def test_an_instructor_token_makes_the_account_an_instructor_in_the_browser_too(stack, smtp_sink):
    """The hostile probe: an instructor minted with ``mint-token --role instructor`` signed in with a
    browser as a student and could not manage the course the token had made."""
    from web_helpers import mint

    token = mint(stack, "instructor", "Minted-Inst@example.edu")
    assert requests.post(f"{stack.base}/api/courses", json={"title": "Minted"}, headers=token, timeout=10).status_code == 201
    s = sign_in(stack.base, smtp_sink, "minted-inst@example.edu")
    assert s.get(f"{stack.base}/api/me", timeout=10).json()["role"] == "instructor"
    mine = s.get(f"{stack.base}/api/courses?mine=1", timeout=10).json()["courses"]
    assert [c["title"] for c in mine] == ["Minted"]
    plain = sign_in(stack.base, smtp_sink, "just-signed-in@example.edu")  # no token: a student, as before
    assert plain.get(f"{stack.base}/api/me", timeout=10).json()["role"] == "student"
    # revoking cuts the person off, the instructor role too: signed in again, a student
    import subprocess
    import sys

    from lecturecopilot_ops.stack import service_env

    out = subprocess.run([sys.executable, "-m", "lecturecopilot_ops.cli", "revoke-tokens", "--email", "minted-inst@example.edu"],
                         capture_output=True, text=True, env=service_env(stack.settings), timeout=60)
    assert "revoked 1 token(s) and 1 browser session(s) of minted-inst@example.edu; the account is a student again" \
        in out.stdout, (out.stdout, out.stderr)
    again = sign_in(stack.base, smtp_sink, "minted-inst@example.edu")
    assert again.get(f"{stack.base}/api/me", timeout=10).json()["role"] == "student"
