"""Free local ports for the services of a test or benchmark stack (:func:`lecturecopilot.stack.ephemeral`)."""

from __future__ import annotations

from pathlib import Path


def free_port() -> int:
    """A port free now on 127.0.0.1, chosen below the kernel's range for outgoing connections
    (``ip_local_port_range``, 32768–60999 by default on Linux). A port the kernel hands out for
    ``bind(0)`` lies in that range, so any outgoing connection (to Postgres, to NATS) may take it
    between this check and the service's own bind: a test stack's ask service once failed to start
    with EADDRINUSE that way. Falls back to ``bind(0)`` when 50 random tries find nothing free."""
    import random
    import socket

    try:
        first = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first = 32768
    for _ in range(50):
        port = random.randint(20000, max(20001, first - 1))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
