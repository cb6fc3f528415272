"""Output a service survives losing: ``sys.stdout`` and ``sys.stderr`` that drop what cannot be written.

A service's output goes to its log file (``<data_dir>/logs/<service>.log`` under ``make up``). On a full
disk a write to it fails with ENOSPC; Python's ``print`` and any library that writes to
``sys.stderr`` itself (not through :mod:`logging`, which already swallows such errors) then raises in
the code that wrote, and an uncaught error in the main thread ends the service without a word (its
traceback cannot be written either). :func:`install` replaces both streams with
:class:`DroppingStream`: every write goes straight to the file descriptor, unbuffered; what cannot be
written is counted and dropped, the service keeps serving, and the first write that succeeds again
is preceded by a line saying how much was lost and why.
"""

from __future__ import annotations

import io
import os
import sys
import threading


class _DroppingBytes:
    """The ``buffer`` of a :class:`DroppingStream`: bytes written to the same descriptor, dropped the same way."""

    def __init__(self, owner: "DroppingStream"):
        self._owner = owner

    def write(self, data) -> int:
        self._owner.write_bytes(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self._owner.fileno()


class DroppingStream(io.TextIOBase):
    """A text stream writing to descriptor ``fd`` (UTF-8, unbuffered) that never raises for a failed
    write: it counts the bytes it dropped (``lost``) and the reason, and reports them on the stream
    once writing works again."""

    def __init__(self, fd: int, name: str = ""):
        super().__init__()
        self._fd = fd
        self._name = name or f"<fd {fd}>"
        self._lock = threading.Lock()
        self.lost = 0
        self.reason = ""
        self.buffer = _DroppingBytes(self)

    @property
    def encoding(self) -> str:  # noqa: D401 - io API
        return "utf-8"

    @property
    def errors(self) -> str:
        return "backslashreplace"

    @property
    def name(self) -> str:
        return self._name

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        try:
            return os.isatty(self._fd)
        except OSError:
            return False

    def flush(self) -> None:
        pass

    def write(self, text: str) -> int:
        self.write_bytes(text.encode("utf-8", "backslashreplace"))
        return len(text)

    def write_bytes(self, data: bytes) -> None:
        with self._lock:
            if self.lost:
                note = (f"[{self.lost} bytes of this service's output could not be written "
                        f"({self.reason}) and were lost]\n").encode()
                if not self._write_all(note):
                    self.lost += len(data)
                    return
                self.lost, self.reason = 0, ""
            if not self._write_all(data):
                self.lost += len(data)

    def _write_all(self, data: bytes) -> bool:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as e:
            self.reason = e.strerror or str(e)
            return False
        return True


def install() -> None:
    """Makes ``sys.stdout`` and ``sys.stderr`` :class:`DroppingStream` s on descriptors 1 and 2 (once;
    a descriptor that is not open is left alone). Call it first thing in a service's ``__main__``,
    before anything keeps a reference to the old streams (``logging.StreamHandler()`` does)."""
    for attr, fd in (("stdout", 1), ("stderr", 2)):
        current = getattr(sys, attr)
        if isinstance(current, DroppingStream):
            continue
        try:
            os.fstat(fd)
        except OSError:
            continue
        try:
            if current is not None:
                current.flush()
        except (OSError, ValueError):
            pass
        setattr(sys, attr, DroppingStream(fd, f"<{attr}>"))
