"""Slow request bodies (issue #12 item 18): chunk PUTs that crawl or stall hold no database
connection and no thread plain requests need, are dropped after their bounds with nothing of them
kept, and the rest of the site keeps answering meanwhile. A second ingest and gateway on the
stack's stores run with short bounds so the test does not wait minutes."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

import pytest
import requests

from web_helpers import Gateway

pytestmark = pytest.mark.slow

CHUNK_S, STALL_S, BODY_S, RELAYS = 6, 3, 3, 4
BOUNDS = {"LC_UPLOAD_CHUNK_TIMEOUT_S": str(CHUNK_S), "LC_UPLOAD_STALL_S": str(STALL_S),
          "LC_BODY_TIMEOUT_S": str(BODY_S), "LC_UPLOAD_RELAYS_MAX": str(RELAYS),
          "LC_MAX_WAITING_PER_CLIENT": "0"}  # these tests' clients all share 127.0.0.1: the bounds alone are tested
WAITING = 6  # the gateway's default LC_MAX_WAITING_PER_CLIENT
SIZE = 1000


@pytest.fixture(scope="module")
def slow(stack):
    ingest = Gateway(stack, BOUNDS, service="ingest")
    gw = Gateway(stack, {**BOUNDS, "LC_INGEST_PORT": str(ingest.port)})
    yield gw
    gw.close()
    ingest.close()


def _start(base, stack, course) -> str:
    r = requests.post(f"{base}/api/courses/{course}/uploads", headers=stack.admin, timeout=10,
                      json={"filename": "slow.mp4", "size": SIZE})
    assert r.status_code == 201, r.text
    return r.json()["upload_id"]


def _status(base, stack, uid) -> dict:
    r = requests.get(f"{base}/api/uploads/{uid}", headers=stack.admin, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()


def _trickle(stop: threading.Event):
    """A body that sends 3 bytes a second (until ``stop``)."""
    sent = 0
    while sent < SIZE and not stop.is_set():
        yield b"x" * 3
        sent += 3
        stop.wait(1.0)


def test_crawling_chunks_do_not_stall_the_site_and_are_dropped_after_their_bound(stack, slow):
    course = stack.create_course("Slow chunks")
    uploads = [_start(slow.base, stack, course) for _ in range(16)]  # as many as the gateway has threads
    probe = _start(slow.base, stack, course)
    stop = threading.Event()
    ended: dict[str, tuple[object, float]] = {}

    def crawl(uid: str) -> None:
        t0 = time.monotonic()
        try:
            r = requests.put(f"{slow.base}/api/uploads/{uid}", data=_trickle(stop), timeout=(5, 60),
                             headers={**stack.admin, "Content-Range": f"bytes 0-{SIZE - 1}/{SIZE}"})
            ended[uid] = (r.status_code, time.monotonic() - t0)
        except requests.RequestException as e:  # dropped while it was still sending
            ended[uid] = (type(e).__name__, time.monotonic() - t0)

    threads = [threading.Thread(target=crawl, args=(uid,), daemon=True) for uid in uploads]
    try:
        for t in threads:
            t.start()
        time.sleep(1.0)
        slowest = 0.0
        for _ in range(4):  # meanwhile the rest of the site answers at once
            for url, headers in ((f"{slow.base}/api/courses", {}), (f"{slow.base}/api/uploads/{probe}", stack.admin)):
                t0 = time.monotonic()
                assert requests.get(url, headers=headers, timeout=10).status_code == 200
                slowest = max(slowest, time.monotonic() - t0)
            time.sleep(0.5)
        assert slowest < 2.0, f"a plain request took {slowest:.1f} s while uploads crawled"
        for t in threads:
            t.join(CHUNK_S + 20)
    finally:
        stop.set()
    assert len(ended) == len(uploads), "some crawling chunks were never dropped"
    for uid, (outcome, took) in ended.items():
        assert outcome not in (200, 202), (outcome, took)
        assert took < CHUNK_S + 5, f"a crawling chunk lasted {took:.1f} s ({outcome})"
    # nothing of a dropped chunk is kept: the offset is where it was
    for uid in uploads:
        st = _status(slow.base, stack, uid)
        assert st["state"] == "receiving" and st["offset"] == 0, st


def _raw(base: str, method: str, path: str, headers: dict, first: bytes) -> tuple[http.client.HTTPConnection, float]:
    """Sends the request line, headers and ``first`` bytes of the body, then nothing more."""
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.putrequest(method, path)
    for k, v in headers.items():
        conn.putheader(k, v)
    conn.endheaders()
    conn.send(first)
    return conn, time.monotonic()


def test_a_stalled_chunk_is_dropped_and_its_bytes_discarded(stack, slow):
    course = stack.create_course("Stalled chunk")
    uid = _start(slow.base, stack, course)
    conn, t0 = _raw(slow.base, "PUT", f"/api/uploads/{uid}", {
        **stack.admin, "Content-Range": f"bytes 0-{SIZE - 1}/{SIZE}", "Content-Length": str(SIZE)}, b"x" * 100)
    resp = conn.getresponse()  # the gateway answers once the body has sent nothing for LC_UPLOAD_STALL_S
    took = time.monotonic() - t0
    body = json.loads(resp.read())
    conn.close()
    assert resp.status == 408 and body["error"]["code"] == "request_timeout", body
    assert f"nothing arrived for {STALL_S} s" in body["error"]["message"]
    assert "a resumable upload resumes from the offset" in body["error"]["message"]
    assert STALL_S - 0.5 < took < STALL_S + 4, took
    st = _status(slow.base, stack, uid)
    assert st["state"] == "receiving" and st["offset"] == 0, st
    # the upload goes on from where it was
    r = requests.put(f"{slow.base}/api/uploads/{uid}", data=b"y" * 400, timeout=10,
                     headers={**stack.admin, "Content-Range": f"bytes 0-399/{SIZE}"})
    assert r.status_code == 200 and r.json()["offset"] == 400, r.text


def test_slow_json_bodies_are_bounded_too(stack, slow):
    """The README's old known limit: any request body that crawls held a gateway thread."""
    course = stack.create_course("Slow JSON")
    conn, t0 = _raw(slow.base, "POST", f"/api/courses/{course}/ask",
                    {"Content-Type": "application/json", "Content-Length": "400"}, b'{"question": "wh')
    resp = conn.getresponse()
    took = time.monotonic() - t0
    body = json.loads(resp.read())
    conn.close()
    assert resp.status == 408 and body["error"]["code"] == "request_timeout", body
    assert body["error"]["message"].endswith("Send it again."), body  # no word of uploads for a question
    assert took < BODY_S + 4, took
    # a body that keeps sending, slowly, is dropped at its deadline
    stop = threading.Event()

    def drip():
        yield b'{"question": "'
        while not stop.is_set():
            yield b"a"
            stop.wait(0.5)

    t0 = time.monotonic()
    try:
        r = requests.post(f"{slow.base}/api/courses/{course}/ask", data=drip(), timeout=(5, 30),
                          headers={"Content-Type": "application/json"})
        outcome = r.status_code
    except requests.RequestException as e:
        outcome = type(e).__name__
    finally:
        stop.set()
    took = time.monotonic() - t0
    assert outcome != 200 and took < BODY_S + 4, (outcome, took)


def test_clients_trickling_headers_lose_their_connection_and_the_site_keeps_answering(stack):
    """20 connections that send a request line and then one header line a second (more than the
    gateway's 16 threads) held every thread before; with ``LC_HEADER_TIMEOUT_S`` each is dropped when
    its headers are not in by then, and a plain request meanwhile is answered."""
    gw = Gateway(stack, {"LC_HEADER_TIMEOUT_S": "3", "LC_MAX_WAITING_PER_CLIENT": "0"})  # the deadline alone
    stop, socks = threading.Event(), []
    try:
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", gw.port), timeout=30)
            s.sendall(b"GET /api/courses HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)

        def trickle(s):
            n = 0
            while not stop.is_set():
                try:
                    s.sendall(f"X-Slow-{n}: y\r\n".encode())
                except OSError:
                    return
                n += 1
                stop.wait(1.0)

        threads = [threading.Thread(target=trickle, args=(s,), daemon=True) for s in socks]
        for t in threads:
            t.start()
        time.sleep(1.5)  # every thread is now busy parsing a trickle
        t0 = time.monotonic()
        r = requests.get(f"{gw.base}/api/courses", timeout=25)
        assert r.status_code == 200, r.text
        waited = time.monotonic() - t0
        closed = 0
        for s in socks:  # each trickling connection was dropped by the server (EOF or reset)
            s.settimeout(10)
            try:
                closed += s.recv(1024) == b""
            except (ConnectionResetError, BrokenPipeError):
                closed += 1
            except socket.timeout:
                pass
        assert closed == len(socks), f"{closed} of {len(socks)} dropped; the plain request waited {waited:.1f} s"
    finally:
        stop.set()
        for s in socks:
            s.close()
        gw.close()


def test_connections_that_send_nothing_hold_no_thread(stack):
    """40 connections that connect and send nothing (more than the gateway's 16 threads; a browser's
    speculative connections look the same) each held a thread for gunicorn's 5 s wait for a first
    byte, and every request meanwhile waited 3-13 s behind them. Now a connection without a byte is
    handed to the poller at once: a plain request is answered while they are open, and each of them
    is still served when it does send its request."""
    socks = []
    try:
        for _ in range(40):
            socks.append(socket.create_connection(("127.0.0.1", stack.settings.gateway_port), timeout=10))
        time.sleep(0.3)
        t0 = time.monotonic()
        r = requests.get(f"{stack.base}/healthz", timeout=25)
        waited = time.monotonic() - t0
        assert r.status_code == 200
        assert waited < 2.5, f"a request waited {waited:.1f} s behind connections that sent nothing"  # 5 s before
        late = socks[0]
        late.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert late.recv(1024).startswith(b"HTTP/1.1 200")  # a deferred connection is still answered
    finally:
        for s in socks:
            s.close()


def _from(addr: str, port: int, first: bytes):
    """A connection from loopback address ``addr`` (a second client on this machine) that has sent ``first``."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(addr, 0))
    s.sendall(first)
    return s


def _answer(s, wait_s: float) -> bytes:
    """What the server sent on ``s`` within ``wait_s`` seconds, up to its close (b"" when it sent nothing)."""
    s.settimeout(wait_s)
    got = b""
    try:
        while chunk := s.recv(65536):
            got += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    return got


def test_one_client_with_many_half_sent_headers_holds_its_share_of_threads_and_no_more(stack):
    """The hostile probe's open finding: connections that each sent part of a request's headers held a
    thread for up to LC_HEADER_TIMEOUT_S each, so one client with no token and 20 of them stalled
    /healthz for 8 s (50: 28 s). Now one client (here 127.0.0.2) holds at most WAITING threads waiting
    for its bytes: its other connections are answered 429 at once, every other client is served at
    once, and the ones it holds are still dropped at the deadline."""
    gw = Gateway(stack, {"LC_HEADER_TIMEOUT_S": "8"})
    socks = []
    try:
        for _ in range(20):
            socks.append(_from("127.0.0.2", gw.port, b"GET /api/courses HTTP/1.1\r\nHost: x\r\nX-Slow: "))
        time.sleep(0.5)
        t0 = time.monotonic()
        r = requests.get(f"{gw.base}/healthz", timeout=25)  # another client: 127.0.0.1
        waited = time.monotonic() - t0
        assert r.status_code == 200 and waited < 1.0, f"/healthz waited {waited:.1f} s"
        answers = [_answer(s, 0.3) for s in socks]  # a refused one is closed at once, a held one waits 0.3 s
        refused = [a for a in answers if a.startswith(b"HTTP/1.1 429 Too Many Requests")]
        assert len(refused) == 20 - WAITING, [a[:40] for a in answers]
        head, _, body = refused[0].partition(b"\r\n\r\n")
        assert b"Retry-After: 1" in head and b"Connection: close" in head
        assert json.loads(body)["error"]["code"] == "too_many_requests"
        held = [s for s, a in zip(socks, answers) if not a]
        assert len(held) == WAITING
        # while it holds its share, one more half-sent request of it is refused; a whole request is
        # served (it waits on nothing) ...
        more = _from("127.0.0.2", gw.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        assert _answer(more, 5).startswith(b"HTTP/1.1 429"), "a half-sent request over the client's share was kept"
        more.close()
        whole = _from("127.0.0.2", gw.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert _answer(whole, 5).startswith(b"HTTP/1.1 200"), "a whole request of the client was refused"
        whole.close()
        # ... the connections it holds are dropped at the header deadline, and then its share is free again
        for s in held:
            assert _answer(s, 12) == b"", "a half-sent request got an answer"
        later = [_from("127.0.0.2", gw.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ") for _ in range(WAITING)]
        socks.extend(later)
        assert all(_answer(s, 0.3) == b"" for s in later), "the client's share was not given back"
    finally:
        for s in socks:
            s.close()
        gw.close()


def test_one_client_with_many_half_sent_bodies_holds_its_share_of_threads_and_no_more(stack):
    """The same for bodies: 20 asks from one client that send their headers and part of a JSON body,
    then nothing. WAITING of them wait in a read until LC_BODY_TIMEOUT_S (408); the rest are answered
    429 as they start to read, and another client is served at once meanwhile."""
    course = stack.create_course("Half-sent bodies")
    gw = Gateway(stack, {"LC_BODY_TIMEOUT_S": "4"})
    head = (f"POST /api/courses/{course}/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 400\r\n\r\n{\"question\": \"wh").encode()
    socks = []
    try:
        for _ in range(20):
            socks.append(_from("127.0.0.2", gw.port, head))
        time.sleep(1.0)
        t0 = time.monotonic()
        r = requests.get(f"{gw.base}/api/courses", timeout=25)
        waited = time.monotonic() - t0
        assert r.status_code == 200 and waited < 1.0, f"a plain request waited {waited:.1f} s"
        answers = [_answer(s, 8) for s in socks]
        codes = sorted(a.split(b" ", 2)[1].decode() if a else "none" for a in answers)
        assert codes == ["408"] * WAITING + ["429"] * (20 - WAITING), codes
        refused = next(a for a in answers if a.startswith(b"HTTP/1.1 429"))
        assert b"Retry-After: 1" in refused and b'"too_many_requests"' in refused
    finally:
        for s in socks:
            s.close()
        gw.close()


def test_behind_a_proxy_the_cap_is_off_by_default(stack):
    """Behind LC_PROXY_HOPS proxies every client has the proxy's address, so the cap would be on all
    of them together: unset, it is off there (the proxy limits connections per client)."""
    gw = Gateway(stack, {"LC_HEADER_TIMEOUT_S": "3", "LC_PROXY_HOPS": "1"})
    socks = []
    try:
        for _ in range(WAITING + 2):
            socks.append(_from("127.0.0.2", gw.port, b"GET /api/courses HTTP/1.1\r\nHost: x\r\nX-Slow: "))
        time.sleep(0.5)
        assert all(_answer(s, 0.5) == b"" for s in socks), "a connection was refused behind a proxy"
    finally:
        for s in socks:
            s.close()
        gw.close()


def test_bodies_never_sent_to_routes_that_do_not_read_them_hold_only_the_clients_share(stack):
    """A request that announces a body and sends none is answered, then gunicorn waits up to 5 s for
    that body before it keeps the connection: 20 such requests from one client held 16 threads for
    5 s. Now the wait counts in the client's share: each of its connections is answered at once (200,
    or 429 for those beyond its share), no more than the share still wait, and another client is
    served at once."""
    gw = Gateway(stack, {})
    socks = []
    try:
        for _ in range(20):
            socks.append(_from("127.0.0.2", gw.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"))
        time.sleep(1.0)
        t0 = time.monotonic()
        r = requests.get(f"{gw.base}/healthz", timeout=25)
        waited = time.monotonic() - t0
        assert r.status_code == 200 and waited < 1.0, f"/healthz waited {waited:.1f} s"
        answers = [_answer(s, 0.5) for s in socks]  # closed within 0.5 s: the answer up to its close
        codes = [a[:12] for a in answers]
        assert all(c in (b"HTTP/1.1 200", b"HTTP/1.1 429") for c in codes), codes
        assert codes.count(b"HTTP/1.1 200") >= WAITING, codes
        t1 = time.monotonic()
        still_open = 0
        for s in socks:
            s.settimeout(0.01)
            try:
                still_open += s.recv(1) != b""
            except socket.timeout:
                still_open += 1
            except OSError:
                pass
        assert still_open <= WAITING, f"{still_open} connections still wait for their body (t {time.monotonic() - t1:.1f} s)"
    finally:
        for s in socks:
            s.close()
        gw.close()


def test_clients_that_never_close_after_a_closing_answer_hold_only_their_share(stack):
    """The second probe's bypass: after an answer that closes the connection, the thread waited up
    to 0.5 s for the client's FIN, uncounted, so one client sending 60 ``Connection: close`` requests
    a second and never closing held every thread (/healthz 1.6 s, then 10 s). Now that wait counts
    in the client's share and beyond it the connection closes without waiting."""
    gw = Gateway(stack, {})
    socks, stop = [], threading.Event()

    def flood():
        while not stop.is_set() and len(socks) < 600:
            try:
                s = _from("127.0.0.2", gw.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            except OSError:
                continue
            socks.append(s)  # never read, never closed
            stop.wait(1 / 60)

    t = threading.Thread(target=flood, daemon=True)
    try:
        t.start()
        time.sleep(2.0)
        slowest = 0.0
        for _ in range(6):
            t0 = time.monotonic()
            assert requests.get(f"{gw.base}/healthz", timeout=30).status_code == 200
            slowest = max(slowest, time.monotonic() - t0)
            time.sleep(0.5)
        assert slowest < 1.0, f"/healthz waited {slowest:.1f} s behind connections that never closed"
    finally:
        stop.set()
        t.join(5)
        for s in socks:
            s.close()
        gw.close()


def test_one_client_keeps_at_most_its_share_of_connections_open_and_gets_them_back(stack):
    """gunicorn accepts nothing while a process holds 1000 connections, and one client opening ~700 a
    second that it kept made /healthz wait seconds. A client may keep LC_MAX_CONNECTIONS_PER_CLIENT
    open (here 20): the next is answered 429 at once; another client is served meanwhile; and once it
    closes them, it may open as many again (a slot given back at each close)."""
    gw = Gateway(stack, {"LC_MAX_CONNECTIONS_PER_CLIENT": "20"})
    whole = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"  # keep-alive: answered, then kept open
    try:
        for round_ in range(2):
            socks = [_from("127.0.0.2", gw.port, whole) for _ in range(30)]
            answers = [_answer(s, 0.5) for s in socks]
            codes = [a[:12] for a in answers]
            assert codes.count(b"HTTP/1.1 200") == 20 and codes.count(b"HTTP/1.1 429") == 10, (round_, codes)
            assert b"connections open" in next(a for a in answers if a.startswith(b"HTTP/1.1 429"))
            t0 = time.monotonic()
            assert requests.get(f"{gw.base}/healthz", timeout=10).status_code == 200
            assert time.monotonic() - t0 < 1.0
            for s in socks:
                s.close()
            time.sleep(1.0)  # the server sees each close (EOF on a kept connection) and gives its slot back
    finally:
        gw.close()
