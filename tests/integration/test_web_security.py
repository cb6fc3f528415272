"""Gateway safety in HTTP terms: a fresh CSP nonce per page that matches its script tags, the
usual security headers, the web client's modules served as JavaScript and revalidated, JSON errors
everywhere, no media type on an empty answer, request size limits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.slow


def test_pages_have_a_fresh_nonce_and_security_headers(stack):
    nonces = []
    course = stack.create_course("Pages")
    for path, status in (("/", 200), ("/manage", 200), ("/help", 200), ("/signin", 200), ("/contact", 200),
                         (f"/courses/{course}", 200), (f"/courses/{course}/practice", 200),
                         ("/courses/00000000-0000-0000-0000-000000000000", 404), ("/courses/not-a-course", 404)):
        r = requests.get(stack.base + path, timeout=10)
        assert r.status_code == status and r.headers["Content-Type"].startswith("text/html"), (path, r.status_code)
        csp = r.headers["Content-Security-Policy"]
        m = re.search(r"script-src 'self' 'nonce-([A-Za-z0-9_\-]+)'", csp)
        assert m, csp
        assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
        scripts = re.findall(r"<script[^>]*>", r.text)
        assert scripts and all(f'nonce="{m.group(1)}"' in s for s in scripts), scripts
        assert "{{NONCE}}" not in r.text
        nonces.append(m.group(1))
        h = r.headers
        assert h["X-Content-Type-Options"] == "nosniff" and h["X-Frame-Options"] == "DENY"
        assert h["Referrer-Policy"] == "no-referrer" and h["Cross-Origin-Opener-Policy"] == "same-origin"
        assert "camera=()" in h["Permissions-Policy"]
        assert "Strict-Transport-Security" not in h  # plain http here
    assert len(set(nonces)) == len(nonces)


def test_an_unknown_page_is_html_for_a_browser_and_json_for_an_api_client(stack):
    browser = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    r = requests.get(f"{stack.base}/nonexistent", headers=browser, timeout=10)
    assert r.status_code == 404 and r.headers["Content-Type"].startswith("text/html")
    assert 'id="not-found"' in r.text and "Content-Security-Policy" in r.headers and "{{NONCE}}" not in r.text
    for path, headers in (("/nonexistent", {}), ("/nonexistent", {"Accept": "application/json"}),
                          ("/api/nonexistent", browser)):
        r = requests.get(stack.base + path, headers=headers, timeout=10)
        assert r.status_code == 404 and r.headers["Content-Type"] == "application/json", (path, headers)
        assert r.json()["error"]["code"] == "not_found"


def test_the_client_modules_are_served_as_javascript_and_revalidated(stack):
    """The page loads one module script (js/main.js); it and every module it imports, followed
    through their ``import`` lines, come from /static as JavaScript (a module script of another
    type is refused under nosniff) with an ETag and ``no-cache``: the browser asks again on each load
    (a 304 when unchanged), so after a deploy no page mixes old and new modules."""
    page = requests.get(f"{stack.base}/", timeout=10).text
    entry = re.findall(r'<script type="module"[^>]* src="([^"]+)"', page)
    assert entry == ["/static/js/main.js"], entry
    todo, seen = list(entry), set()
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        r = requests.get(stack.base + url, timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/javascript"), (url, r.headers)
        assert "no-cache" in r.headers["Cache-Control"] and r.headers["ETag"], (url, r.headers)
        again = requests.get(stack.base + url, headers={"If-None-Match": r.headers["ETag"]}, timeout=10)
        assert again.status_code == 304, url
        base = url.rsplit("/", 1)[0]
        todo += [f"{base}/{m}" for m in re.findall(r'^import (?:[^"]+ from )?"\./([\w-]+\.js)";$', r.text, re.M)]
    shipped = Path(__file__).resolve().parents[2] / "services/gateway/static/js"
    assert seen == {f"/static/js/{p.name}" for p in shipped.glob("*.js")}  # every module, none unused


def test_favicon_is_served(stack):
    """Issue #12.15: /favicon.ico was a 404 in every page's console; now it and the page's icon links answer."""
    r = requests.get(f"{stack.base}/favicon.ico", timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("image/"), (r.status_code, r.headers)
    assert r.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    page = requests.get(f"{stack.base}/", timeout=10).text
    icons = re.findall(r'<link rel="icon" href="([^"]+)"', page)
    assert "/favicon.ico" in icons and len(icons) >= 2, icons
    for href in icons:
        r = requests.get(stack.base + href, timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("image/"), (href, r.headers)
    assert b"<svg" in requests.get(f"{stack.base}/static/favicon.svg", timeout=10).content


def test_api_answers_carry_headers_and_no_store(stack):
    r = requests.get(f"{stack.base}/api/courses", timeout=10)
    assert r.headers["Cache-Control"] == "no-store" and r.headers["X-Content-Type-Options"] == "nosniff"
    assert "Content-Security-Policy" in r.headers


def test_an_empty_answer_has_no_media_type(stack):
    course = stack.create_course("Empty answers")
    r = requests.post(f"{stack.base}/api/courses/{course}/members", json={"email": "someone@example.org"},
                      headers=stack.admin, timeout=10)
    assert r.status_code == 204 and r.content == b"" and "Content-Type" not in r.headers, r.headers
    r = requests.options(f"{stack.base}/api/courses", timeout=10)
    assert r.status_code == 200 and r.content == b"" and "Content-Type" not in r.headers, r.headers
    assert {"GET", "POST"} <= {m.strip() for m in r.headers["Allow"].split(",")}
    r = requests.get(f"{stack.base}/api/courses/{course}/members", headers=stack.admin, timeout=10)
    assert r.headers["Content-Type"].startswith("application/json")  # an answer with a body keeps its type


def test_errors_are_json(stack):
    for method, path in (("GET", "/api/nope"), ("DELETE", "/api/courses"), ("GET", "/api/lectures/x/events"),
                         ("POST", "/api/role-requests/00000000-0000-0000-0000-000000000000/approve")):
        r = requests.request(method, stack.base + path, timeout=10)
        assert r.status_code in (401, 404, 405), (path, r.status_code)
        assert r.headers["Content-Type"].startswith("application/json")
        assert set(r.json()["error"]) == {"code", "message"}


def test_request_size_limits(stack):
    course = stack.create_course("Size limits")
    big = {"question": "x" * 100, "padding": "y" * (80 * 1024)}
    r = requests.post(f"{stack.base}/api/courses/{course}/ask", json=big, timeout=10)
    assert r.status_code == 413 and r.json()["error"]["code"] == "request_entity_too_large"
    r = requests.post(f"{stack.base}/api/contact", json={"email": "a@example.edu", "message": "z" * (70 * 1024)},
                      timeout=10)
    assert r.status_code == 413
    # a chunked body (no Content-Length) is cut off at the same limit
    def chunks():
        yield b'{"email": "a@example.edu", "message": "'
        for _ in range(100):
            yield b"z" * 1024
        yield b'"}'
    r = requests.post(f"{stack.base}/api/auth/magic-link", data=chunks(), timeout=10,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 413, r.text


def test_https_deployments_get_secure_cookies_and_hsts(stack, smtp_sink):
    from web_helpers import Gateway, link_token

    gw = Gateway(stack, {"LC_PUBLIC_URL": "https://lectures.example.edu"})
    try:
        since = len(smtp_sink.messages)
        r = requests.post(f"{gw.base}/api/auth/magic-link", json={"email": "tls@example.edu"}, timeout=10)
        assert r.status_code == 202
        assert r.headers["Strict-Transport-Security"].startswith("max-age=")
        mail = smtp_sink.wait_for("tls@example.edu", since=since)
        assert "https://lectures.example.edu/auth/verify?token=" in mail.get_content()
        r = requests.post(f"{gw.base}/api/auth/verify", json={"token": link_token(mail)}, timeout=10)
        cookie = r.headers["Set-Cookie"]
        assert r.status_code == 200 and "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    finally:
        gw.close()
