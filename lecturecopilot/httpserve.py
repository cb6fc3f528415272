"""Serving a Flask app with gunicorn (threaded workers stream SSE responses as they are written),
and bounding how long a request body may take to arrive.

A gthread worker reads a request's body in the thread that runs the request, so a client that
sends its body slowly holds that thread for as long as it keeps sending. :func:`bounded_bodies`
wraps the app so that every body has two bounds: a deadline for the whole body (``timeout_s``,
enforced by a timer that shuts the socket's read side, which ends a read in progress) and a stall
bound (``stall_s``: the socket's timeout, so a client that sends nothing is dropped sooner). A
body past either bound raises :class:`BodyTimeout` (HTTP 408) in the reader, and the connection
closes after the response instead of being drained (gunicorn would otherwise read the rest of
the body, in the worker thread and then in its main loop; the body code is in
:mod:`lecturecopilot.bodies`, its API named here too). Routes set their own bounds with
:func:`set_body_limits` before they read (uploads get minutes, JSON bodies seconds). The request line
and headers have their own deadline (:class:`HeaderDeadlineWorker`, ``LC_HEADER_TIMEOUT_S``), and so
does each send of the response (``LC_SEND_TIMEOUT_S``: a client that stops reading loses its connection).

Each bound holds per connection, and a client can open many: :class:`~lecturecopilot.waiting.WaitSlots`
caps how many threads one client (:func:`~lecturecopilot.waiting.client_network`) holds at once waiting
for its bytes (a request line and headers still arriving, a body read blocked on the network, a drain of
a body the app did not read, the wait for its close), and another how many connections it has open; one
more is answered 429 at once.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import socket
import threading
import weakref
from dataclasses import dataclass
from http import HTTPStatus

from gunicorn import util as gunicorn_util
from gunicorn.app.base import BaseApplication
from gunicorn.workers import gthread
from gunicorn.workers.gthread import ThreadWorker

from . import health, logsafe
from .bodies import BodyTimeout, BoundedBody, bounded_bodies, drop_body, set_body_limits  # noqa: F401 (the API)
from .waiting import WaitSlots, body_in, client_network, headers_in, rest_in, too_many_open, too_many_waiting

def _write_json_error(sock, status_int: int, reason: str, mesg: str, headers: dict | None = None) -> None:
    """gunicorn's answer to a request it cannot parse (a Content-Length that is not a number, a
    request line over its limit: 414, too many or too large headers: 431), written before any app
    runs, as every answer of the API is: ``{"error": {"code", "message"}}`` (gunicorn writes an
    HTML page). The status line's phrase and the code are the status's standard ones (gunicorn wrote
    "501 Bad Request" for a transfer coding it does not know); the code is the phrase in snake case
    ("uri_too_long")."""
    try:
        phrase = HTTPStatus(status_int).phrase
    except ValueError:
        phrase = reason.strip() or "Bad Request"
    body = json.dumps({"error": {"code": re.sub(r"\W+", "_", phrase.lower()).strip("_") or "bad_request",
                                 "message": f"{reason}: {mesg}" if mesg else reason}}).encode()
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    head = (f"HTTP/1.1 {status_int} {phrase}\r\nConnection: close\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1")
    gunicorn_util.write_nonblock(sock, head + body)


gunicorn_util.write_error = _write_json_error  # the one writer of gunicorn's own errors (gunicorn==27.0.1 is pinned)


class _App(BaseApplication):
    def __init__(self, factory, options: dict):
        self._factory = factory
        self._options = options
        super().__init__()

    def load_config(self):
        for key, value in self._options.items():
            self.cfg.set(key, value)

    def load(self):
        return self._factory()


class HeaderDeadlineWorker(ThreadWorker):
    """gunicorn's gthread worker with a deadline on a request's line and headers: a client that
    trickles its headers (a header line every few seconds: "slowloris") holds a worker thread while
    gunicorn parses them, and 16 such clients held every thread of the gateway. When the request
    line and headers have not all arrived ``header_timeout_s`` after the thread took the connection,
    its socket is shut down, which ends the parse (gunicorn drops the connection) and frees the thread.
    The body has its own bounds (:func:`bounded_bodies`)."""

    header_timeout_s = 10.0
    send_timeout_s = 30.0
    linger_s = 0.5  # a client's FIN comes within a round trip of its reading the answer; a thread waits this long
    # gunicorn 27's gthread waits up to 5 s (its DEFAULT_WORKER_DATA_TIMEOUT) in a worker thread for a new
    # connection's first byte before it hands the connection to its poller; 40 sockets that connect and send
    # nothing then held the 16 threads, and every page waited 3-13 s. A client sends its request right after
    # the handshake, so this worker waits FIRST_BYTE_S and else defers at once (nothing is refused: the
    # poller hands the connection back to a thread when its bytes come, within gunicorn's keepalive).
    first_byte_s = 0.05
    wait_slots = WaitSlots(0)  # threads one client may hold waiting for its bytes (run_wsgi sets the cap)
    open_slots = WaitSlots(0)  # connections one client may have open (run_wsgi sets the cap)

    def accept(self, listener):
        """gunicorn's accept (27.0.1, pinned), with each client's open connections counted: beyond
        ``open_slots``' share one more is answered 429 and closed at once. gunicorn accepts nothing
        while a process has ``worker_connections`` (1000) open, and one client opening ~700 a second
        that it kept (each answered, then idle for gunicorn's keepalive) made /healthz wait 2.6-4.9 s."""
        try:
            sock, addr = listener.accept()
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        key = client_network(addr[0] if isinstance(addr, tuple) else str(addr))
        if not self.open_slots.take(key):
            _refuse(sock, too_many_open(self.open_slots.per_client))
            return
        self.nr_conns += 1
        sock.setblocking(True)
        conn = _Conn(self.cfg, sock, addr, listener.getsockname())
        conn.lc_release = weakref.finalize(conn, self.open_slots.give, key)  # once: at its close, or when dropped
        self.enqueue_req(conn)

    def handle(self, conn):
        if not conn.initialized and not conn.data_ready and not conn.wait_for_data(self.first_byte_s):
            return gthread._DEFER  # to the poller, no thread held (gunicorn==27.0.1 is pinned for this)
        key = client_network(conn.client[0] if isinstance(conn.client, tuple) else str(conn.client))
        conn.lc_client, conn.lc_wait = key, None
        if self.wait_slots.per_client and not headers_in(conn):  # this thread will wait for them
            if not self.wait_slots.take(key):
                _refuse(conn.sock, too_many_waiting(self.wait_slots.per_client))
                _release(conn)
                conn.close = lambda graceful=False: None  # closed already
                return False
            conn.lc_wait = key
        timer = threading.Timer(self.header_timeout_s, _shut, (conn.sock,))
        timer.daemon = True
        conn.lc_header_timer = timer
        timer.start()
        try:
            keep = super().handle(conn)
        finally:
            timer.cancel()
            self._headers_done(conn)
        if keep is False:  # closed here, in this thread: gunicorn closes in its main loop, lingering up to 2 s
            # for the client's FIN (RFC 9112 §9.6), and 8 clients that never closed held it 16 s, accepting nothing
            self._close(conn)
            _release(conn)
            conn.close = lambda graceful=False: None  # nothing is left for the main loop to close
        return keep

    def _close(self, conn) -> None:
        """Closes a connection whose answer is sent, waiting up to ``linger_s`` for the client's FIN
        so that what it still sends does not reset the answer (RFC 9112 §9.6). That wait is one more
        thread waiting on the client: 60 requests a second that asked for ``Connection: close`` and
        never closed held every thread 0.5 s each. At the client's share it closes without waiting."""
        key = conn.lc_client
        if not self.wait_slots.take(key):
            _shut(conn.sock)
            conn.sock.close()
            return
        try:
            gunicorn_util.close_graceful(conn.sock, timeout=self.linger_s)
        finally:
            self.wait_slots.give(key)

    def _headers_done(self, conn) -> None:
        """The request line and headers are in (or the parse ended): the thread no longer waits on them."""
        key, conn.lc_wait = getattr(conn, "lc_wait", None), None
        if key is not None:
            self.wait_slots.give(key)

    def _keepalive_after(self, conn, keepalive):
        """gunicorn drains a body the app did not read before the connection is kept (up to 5 s, its
        DEFAULT_WORKER_DATA_TIMEOUT, for bytes a client may never send): that wait is one more thread
        waiting on the client, so at its share the connection is closed instead."""
        key = getattr(conn, "lc_client", None) if getattr(conn, "lc_body_waits", False) else None
        if key is not None and rest_in(getattr(getattr(conn.parser, "mesg", None), "body", None), conn.sock):
            key = None  # what is left of the body is here: the drain does not wait
        if not keepalive or key is None:  # no body, or all of it had arrived: the drain does not wait
            return super()._keepalive_after(conn, keepalive)
        if not self.wait_slots.take(key):
            return False
        try:
            return super()._keepalive_after(conn, keepalive)
        finally:
            self.wait_slots.give(key)

    def handle_request(self, req, conn):
        timer = getattr(conn, "lc_header_timer", None)
        if timer is not None:  # the request line and headers are in: the deadline is met
            timer.cancel()
        self._headers_done(conn)
        _defer_continue(req)
        conn.lc_body_waits = bool(self.wait_slots.per_client) and not body_in(req, conn)
        if conn.lc_body_waits:  # a read of the rest of the body waits on the same client
            req.body.lc_wait = (self.wait_slots, conn.lc_client)
        # each send may wait this long for the client to take more (gunicorn's sockets have no timeout:
        # 16 clients that never read a video held every thread, and /healthz went unanswered for minutes);
        # a body read sets its own stall bound (BoundedBody), and the next request on the connection again this
        conn.sock.settimeout(self.send_timeout_s)
        try:
            return super().handle_request(req, conn)
        except TimeoutError:
            logging.getLogger(__name__).info("%s stopped reading its response for %g s: connection closed",
                                             conn.client, self.send_timeout_s)
            _shut(conn.sock)  # what it did not take is dropped, and the close does not wait for it
            return False


def _defer_continue(req) -> None:
    """gunicorn answers ``Expect: 100-continue`` with ``100 Continue`` before the app runs, so a
    client starts sending a body the app is about to refuse (a chunk of an upload whose number was
    taken: curl sent 2.7 MB of it). RFC 9110 §10.1.1 lets the server send it when it wants the body;
    :class:`BoundedBody` sends it at the first read, so a route that answers without reading (an
    error) gets a client that never sent its body. gunicorn has no setting for this: its request's
    private ``_expected_100_continue`` is taken over here, and the request is put on its body for
    :meth:`BoundedBody.drop` (``must_close``, so the answer says ``Connection: close``)."""
    body = getattr(req, "body", None)
    if body is None:
        return
    body.lc_request = req
    body.lc_continue = bool(getattr(req, "_expected_100_continue", False))
    req._expected_100_continue = False


class _Conn(gthread.TConn):
    """gunicorn's connection, whose close gives back its client's open-connection slot."""

    lc_release = None

    def close(self, graceful=False):
        _release(self)
        super().close(graceful)


def _release(conn) -> None:
    """Gives back ``conn``'s open-connection slot (once; a no-op for a connection not counted)."""
    release = getattr(conn, "lc_release", None)
    if release is not None:
        release()


def _refuse(sock: socket.socket, message: str) -> None:
    """429 to a connection whose client holds its share (of threads waiting for bytes, or of open
    connections), before its request is read, then closed at once: the bytes already in are discarded first so that the close
    is a FIN the client reads the answer before, not a reset (a client that sends more gets one)."""
    try:
        sock.setblocking(False)
        for _ in range(16):  # at most 1 MiB: a client that keeps sending gets a reset
            if not sock.recv(65536):
                break
    except OSError:  # nothing more is in (BlockingIOError) or the client is gone
        pass
    try:
        _write_json_error(sock, 429, "Too Many Requests", message, {"Retry-After": "1"})
    except OSError:
        pass
    _shut(sock)
    sock.close()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


@dataclass(frozen=True)
class ServerLimits:
    """The limits :func:`run_wsgi` serves under: ``threads`` threads; a request is given
    ``timeout_s`` seconds (gunicorn's worker ``timeout``); request line and headers due within
    ``header_timeout_s`` seconds; each send of the response taken by the client within
    ``send_timeout_s`` seconds; at most ``waiting_per_client`` threads (0: no cap) waiting at once
    for one client's request line, headers or body (:class:`WaitSlots`; beyond: 429
    ``too_many_requests``, ``Retry-After: 1``); at most ``connections_per_client`` connections of
    one client open at once (0: no cap; beyond: the same 429)."""

    threads: int = 16
    timeout_s: int = 600
    header_timeout_s: float = 10.0
    send_timeout_s: float = 30.0
    waiting_per_client: int = 0
    connections_per_client: int = 0


def run_wsgi(factory, *, host: str, port: int, limits: ServerLimits = ServerLimits()) -> None:
    """Runs ``factory()``'s WSGI app under gunicorn on ``host``:``port``: one
    :class:`HeaderDeadlineWorker` (gthread) under ``limits`` (see :class:`ServerLimits`).

    One worker keeps the models and pools of a process single; scale with more processes. gunicorn's
    control socket is off: every gunicorn of a user shares one path (``~/.gunicorn/gunicorn.ctl``), so
    the gateway and ingest (and a second stack) would take it from each other, and nothing uses it.
    """
    logsafe.install()  # a log it cannot write (a full disk) must not end the server
    health.MAIN_PID = os.getpid()  # the arbiter's: every worker's /healthz and /readyz name it (health.PID_HEADER)
    HeaderDeadlineWorker.header_timeout_s = limits.header_timeout_s
    HeaderDeadlineWorker.send_timeout_s = limits.send_timeout_s
    HeaderDeadlineWorker.wait_slots = WaitSlots(limits.waiting_per_client)
    HeaderDeadlineWorker.open_slots = WaitSlots(limits.connections_per_client)
    _App(factory, {"bind": f"{host}:{port}", "workers": 1, "worker_class": HeaderDeadlineWorker,
                   "threads": limits.threads, "timeout": limits.timeout_s, "graceful_timeout": 10, "accesslog": None, "errorlog": "-",
                   "loglevel": "info", "control_socket_disable": True}).run()
