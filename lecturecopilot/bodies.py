"""Request bodies bounded in time (see :mod:`lecturecopilot.httpserve`): a deadline for the whole
body and a stall bound, enforced in the thread that reads it; a body read that would wait on a
client holding its share of waiting threads is refused (429, :mod:`lecturecopilot.waiting`)."""

from __future__ import annotations

import socket
import threading
import time

from gunicorn.http.errors import ParseException
from werkzeug.exceptions import BadRequest, RequestTimeout
from werkzeug.wsgi import ClosingIterator

from .waiting import TooManyWaiting, rest_in

_KEY = "lecturecopilot.body"


class BodyTimeout(RequestTimeout):
    """A request body that did not arrive within its bounds (408)."""


class MalformedBody(BadRequest):
    """A chunked request body whose framing gunicorn cannot parse (400): a chunk size that is not
    hexadecimal, a chunk without its CRLF, an invalid chunk extension."""


class BoundedBody:
    """``wsgi.input`` with a deadline and a stall bound (see the module docstring). The clock
    starts at the first read, so a route can still change the bounds before it reads."""

    def __init__(self, inner, sock: socket.socket | None, timeout_s: float, stall_s: float,
                 length: int | None = None):
        self._inner, self._sock = inner, sock
        self.timeout_s, self.stall_s = timeout_s, stall_s
        self._timer: threading.Timer | None = None
        self._started = 0.0
        self._left = length  # bytes still to come when Content-Length says (None: chunked)
        self.expired = False  # a bound was passed: the rest of the body is not read
        self.done = length == 0  # the body was read to its end
        self.resend_hint = ""  # see set_body_limits

    def _start(self) -> None:
        self._started = time.monotonic()
        if self._sock is not None:
            self._sock.settimeout(self.stall_s)
            if getattr(self._inner, "lc_continue", False):  # the client waits for it before its body
                self._inner.lc_continue = False
                self._sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        self._timer = threading.Timer(self.timeout_s, self.drop)
        self._timer.daemon = True
        self._timer.start()

    def drop(self) -> None:
        """Stops reading this body: ends a read in progress and closes the connection after the
        response (shuts the socket's read side; the response can still be written)."""
        self.expired = True
        if hasattr(self._inner, "failed"):  # gunicorn's Body: don't drain the rest, close the connection
            self._inner.failed = True
        req = getattr(self._inner, "lc_request", None)
        if req is not None:  # and say so in the answer (gunicorn would write "Connection: keep-alive")
            req.must_close = True
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RD)
            except OSError:
                pass

    def _timeout(self) -> BodyTimeout:
        self.drop()
        waited = time.monotonic() - self._started
        why = (f"nothing arrived for {self.stall_s:g} s" if waited < self.timeout_s - 0.5
               else f"it took longer than {self.timeout_s:g} s")
        return BodyTimeout(f"The request body was dropped: {why}. Send it again"
                           + (f" ({self.resend_hint})." if self.resend_hint else "."))

    def _call(self, fn, size: int) -> bytes:
        if self.expired:
            raise self._timeout()
        if self._timer is None and not self.done:
            self._start()
        slots, key = getattr(self._inner, "lc_wait", None) or (None, "")
        if slots is not None and rest_in(self._inner, self._sock):  # all of it is here by now: no read waits
            slots = None
        if slots is not None and not slots.take(key):  # this client holds its share of threads waiting already
            self.drop()
            raise TooManyWaiting(slots.per_client)
        try:
            data = fn(size)
        except (TimeoutError, socket.timeout):
            raise self._timeout() from None
        except ParseException as e:  # the rest of the body cannot be found: close the connection after the 400
            self.drop()
            raise MalformedBody(f"The request body's chunked encoding is malformed ({type(e).__name__}).") from None
        except Exception:
            if self.expired:
                raise self._timeout() from None
            raise
        finally:
            if slots is not None:
                slots.give(key)
        if self.expired:
            raise self._timeout()
        if self._left is not None:
            self._left -= len(data)
        if (not data and size != 0) or (self._left is not None and self._left <= 0):
            self.done = True
            self.close()
        return data

    def read(self, size: int = -1) -> bytes:
        return self._call(self._inner.read, size)

    def readline(self, size: int = -1) -> bytes:
        return self._call(self._inner.readline, size)

    def __iter__(self):
        return iter(self.readline, b"")

    def close(self) -> None:
        """Ends the bounds (at the body's end or the response's end); drops an unfinished body
        that passed a bound."""
        if self._timer is not None:
            self._timer.cancel()
        if self._sock is not None and not self.expired:
            try:
                self._sock.settimeout(None)
            except OSError:
                pass


def bounded_bodies(app, *, timeout_s: float, stall_s: float):
    """WSGI middleware: every request body of ``app`` gets a :class:`BoundedBody` with these
    default bounds (seconds). Under gunicorn the socket is ``environ["gunicorn.socket"]``; without
    it only the deadline between reads applies. A request with ``Expect: 100-continue`` (see
    :func:`_defer_continue`) gets ``100 Continue`` at its body's first read; answered before that, it
    gets ``Connection: close`` and the connection closes without waiting for the body."""

    def wrapped(environ, start_response):
        length, chunked = environ.get("CONTENT_LENGTH") or "", "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "")
        body = BoundedBody(environ["wsgi.input"], environ.get("gunicorn.socket"), timeout_s, stall_s,
                           None if chunked else int(length) if length.isdigit() else 0)
        environ["wsgi.input"] = environ[_KEY] = body

        def start(status, headers, exc_info=None):
            if getattr(body._inner, "lc_continue", False) and not body.done:
                body.drop()  # answered before the body the client holds back: close rather than wait for it
            return start_response(status, headers, exc_info)

        return ClosingIterator(app(environ, start), body.close)

    return wrapped


def set_body_limits(environ, *, timeout_s: float, stall_s: float, resend_hint: str = "") -> None:
    """Sets this request's body bounds (seconds) before its first read, and what a 408 adds to
    "Send it again" (``resend_hint``: an upload's "a resumable upload resumes from…"); a no-op
    outside :func:`bounded_bodies`."""
    body = environ.get(_KEY)
    if body is not None and body._timer is None:
        body.timeout_s, body.stall_s, body.resend_hint = timeout_s, stall_s, resend_hint


def drop_body(environ) -> None:
    """The rest of this request's body will not be read: the connection closes after the response
    instead of gunicorn draining the body in a thread (for a refused upload)."""
    body = environ.get(_KEY)
    if body is not None and not body.done:
        body.drop()
