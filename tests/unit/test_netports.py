"""Free ports for a test stack (``lecturecopilot/netports.py``)."""

from __future__ import annotations

import random
import socket

from lecturecopilot.netports import free_ports


def test_free_ports_are_distinct_even_when_the_draws_repeat(monkeypatch):
    """``free_port`` reserves nothing, so two draws may give one port: CI once gave a stack's ingest the
    port its NATS server had, and the stack met its own port taken. ``free_ports`` never repeats one."""
    with socket.socket() as s:  # a port free now, to be drawn three times over
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    draws = iter([port, port, port, port + 1 if port < 60999 else port - 1])
    real = random.randint
    monkeypatch.setattr(random, "randint", lambda a, b: next(draws, None) or real(a, b))
    got = free_ports(2)
    assert len(got) == 2 and len(set(got)) == 2 and got[0] == port
    for p in got:
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))  # free now
