"""A local SMTP sink (aiosmtpd) that keeps every message it receives, for mail tests."""

from __future__ import annotations

import email
import socket
import time
from email.message import Message

from aiosmtpd.controller import Controller


class _Collect:
    def __init__(self, box: list[Message]):
        self.box = box

    async def handle_DATA(self, server, session, envelope):  # aiosmtpd handler hook
        self.box.append(email.message_from_bytes(envelope.original_content or envelope.content))
        return "250 OK"


class SmtpSink:
    """Listens on 127.0.0.1 at a free port; ``messages`` holds what arrived (``email.message.Message``)."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.messages: list[Message] = []
        self._controller = Controller(_Collect(self.messages), hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def wait_for(self, predicate, timeout_s: float = 30.0) -> Message:
        """The first message for which ``predicate(msg)`` is true; raises ``TimeoutError``."""
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            for m in list(self.messages):
                if predicate(m):
                    return m
            time.sleep(0.2)
        raise TimeoutError(f"no matching mail in {timeout_s} s; got {[m['Subject'] for m in self.messages]}")

    def close(self) -> None:
        self._controller.stop()
