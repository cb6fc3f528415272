"""Threads a client holds waiting for its bytes, per client (see :class:`WaitSlots`).

The gateway's threads each serve one connection at a time, and every bound of
:mod:`lecturecopilot.httpserve` holds per connection, so a client with many connections that each
sent part of a request held all of them. What one client may hold is counted here: a thread counts
while it waits for that client's bytes (a request line and headers not yet all in, a body read
whose bytes have not arrived, gunicorn's drain of a body a route did not read), not while it
works on a request that has arrived.
"""

from __future__ import annotations

import fcntl
import ipaddress
import socket
import struct
import termios
import threading
from collections import Counter

from werkzeug.exceptions import TooManyRequests


def client_network(ip: str | None) -> str:
    """Who an address stands for: an IPv4 address itself, an IPv6 address's /64 (one subscriber's
    prefix: RFC 6177 assigns a site at least a /64, and every address in it is the same client's to
    pick), an IPv4-mapped IPv6 address as its IPv4; the text as given when it is not an address."""
    try:
        addr = ipaddress.ip_address(ip or "")
    except ValueError:
        return ip or "unknown"
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{addr}/64", strict=False))
    return str(addr)


class WaitSlots:
    """How many threads each client holds waiting for its bytes, capped at ``per_client``
    (0: no cap). One client with a few dozen connections that each sent part of a request held all
    16 threads of the gateway (each bound of :mod:`lecturecopilot.httpserve` holds per connection); with the cap it holds
    ``per_client`` and every other client is served. Thread-safe; keys are :func:`client_network`'s."""

    def __init__(self, per_client: int = 0):
        self.per_client = per_client
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()

    def take(self, key: str) -> bool:
        """One more thread waits on ``key``'s bytes: True, or False when it holds ``per_client`` already."""
        with self._lock:
            if self.per_client and self._held[key] >= self.per_client:
                return False
            self._held[key] += 1
            return True

    def give(self, key: str) -> None:
        """That thread has its bytes (or gave up waiting)."""
        with self._lock:
            self._held[key] -= 1
            if self._held[key] <= 0:
                del self._held[key]

    def held(self, key: str) -> int:
        """Threads waiting on ``key``'s bytes now."""
        with self._lock:
            return self._held.get(key, 0)


def too_many_waiting(per_client: int) -> str:
    """The message of the 429 a client gets beyond its share of ``per_client`` waiting threads."""
    return (f"This address already has {per_client} requests whose bytes are still arriving; retry when they are "
            "in (each client may hold that many of the server's threads waiting for it).")


def too_many_open(per_client: int) -> str:
    """The message of the 429 a client gets beyond its share of ``per_client`` open connections."""
    return (f"This address already has {per_client} connections open to the server; close some (or wait a moment) "
            "and retry.")


class TooManyWaiting(TooManyRequests):
    """A body read by a client that already holds its share of threads waiting for bytes (429,
    ``Retry-After: 1``); the connection closes after the answer."""

    def __init__(self, per_client: int):
        super().__init__(too_many_waiting(per_client), retry_after=1)


def buffered(conn) -> bytes:
    """What gunicorn has read from ``conn`` and not yet parsed (its unreader's buffer)."""
    parser = getattr(conn, "parser", None)
    unreader = getattr(parser, "unreader", None)
    return unreader.buf.getvalue() if unreader is not None else b""


def headers_in(conn) -> bool:
    """Whether a whole request line and header block (up to its blank line) has arrived on ``conn``
    (read by gunicorn or waiting in the socket): parsing it then waits for nothing. A browser sends
    them in one segment; a client that sends them in pieces makes the parse wait for the rest."""
    try:
        waiting = conn.sock.recv(65536, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (BlockingIOError, InterruptedError):
        waiting = b""
    except OSError:
        return True  # gone: the parse ends at once
    return b"\r\n\r\n" in buffered(conn) + waiting


def _pending(sock) -> int:
    """Bytes waiting in ``sock``'s receive queue (``FIONREAD``)."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]


def rest_in(body, sock) -> bool:
    """Whether the rest of a request body of known length (gunicorn's ``Body``) has arrived: what
    its reader still has to give is in gunicorn's buffers or in the socket, so no read of it waits
    (a read that waits for even one byte counts as waiting). A chunked body's rest is never known."""
    reader = getattr(body, "reader", None)
    left = getattr(reader, "length", None)
    if left is None:
        return False
    if left == 0:
        return True
    unreader = getattr(reader, "unreader", None)
    held = len(unreader.buf.getvalue()) if unreader is not None else 0
    try:
        return held + _pending(sock) >= left
    except OSError:
        return True


def body_in(req, conn) -> bool:
    """Whether all of ``req``'s body has arrived (no body, or Content-Length bytes read ahead by
    gunicorn plus waiting in the socket, ``FIONREAD``): reading it then waits for nothing. A chunked
    body counts as still arriving."""
    body = getattr(req, "body", None)
    left = getattr(getattr(body, "reader", None), "length", None)
    if body is None or left == 0:
        return True
    if left is None:  # chunked: its end is not known
        return False
    try:
        return len(buffered(conn)) + _pending(conn.sock) >= left
    except OSError:
        return True
