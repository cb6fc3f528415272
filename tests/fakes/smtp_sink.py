"""A local SMTP sink for tests (aiosmtpd): keeps every mail it is sent, in memory."""

from __future__ import annotations

import socket
import threading
import time
from email import message_from_bytes, policy
from email.message import EmailMessage


class SmtpSink:
    """An SMTP server on 127.0.0.1 (a free port) in a thread of its own; ``messages`` grows."""

    def __init__(self):
        from aiosmtpd.controller import Controller

        self.messages: list[EmailMessage] = []
        self._cond = threading.Condition()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self._controller.start()

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's hook name
        msg = message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        with self._cond:
            self.messages.append(msg)
            self._cond.notify_all()
        return "250 OK"

    def wait_for(self, to, timeout_s: float = 10.0, since: int = 0) -> EmailMessage:
        """The first message among ``messages[since:]`` addressed to ``to`` (a string) or for which
        ``to(msg)`` is true (a callable); waits up to ``timeout_s``. Raises TimeoutError when none arrives."""
        match = to if callable(to) else (lambda m: to.lower() in str(m["To"]).lower())
        deadline = time.time() + timeout_s
        with self._cond:
            while True:
                for m in self.messages[since:]:
                    if match(m):
                        return m
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError(f"no matching mail within {timeout_s} s; got {[m['Subject'] for m in self.messages]}")
                self._cond.wait(left)

    def close(self) -> None:
        self._controller.stop()
