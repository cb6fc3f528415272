"""A cloud writer's stream read within bounds (issue 31): a deadline for the whole answer, a cap on
the characters one stream may send, a cap on the streams open at once, and the client still there.

The stream is read by a thread of its own into a queue, and the thread that answers waits on the
queue at most ``Budget.poll_s`` at a time, so it stops the moment the deadline passes or the client
goes, whatever the writer does: a stream that sends a word every 0.3 s forever, or that stalls
mid-answer (its HTTP read then waits up to the writer's read timeout, ``LC_WRITER_TIMEOUT_S``, in the
reading thread only). The reading thread stops at its next piece once told to, and closes the
stream itself (never the garbage collector: see :meth:`services.ask.writers.cloud.OpenAIChatWriter.stream`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from .ports import Slots

log = logging.getLogger(__name__)

TOOK_TOO_LONG = "writer_took_too_long"
ANSWER_TOO_LONG = "writer_answer_too_long"
BUSY = "writers_busy"
CLIENT_LEFT = "client_left"


class Spent(Exception):
    """A bound stopped the stream: ``reason`` is TOOK_TOO_LONG (the deadline passed), ANSWER_TOO_LONG
    (the stream sent more than ``max_chars``), BUSY (every stream slot taken) or CLIENT_LEFT."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Budget:
    """The bounds on one answer's cloud writing. ``deadline``: the time on ``clock`` (monotonic
    seconds) by which every stream must have ended; ``max_chars``: characters one stream may send;
    ``still_wanted()``: False once the client has gone; ``slots``: a semaphore (``acquire(blocking=False)``,
    ``release()``) of the streams open at once in this process, None for no cap; ``poll_s``: seconds
    between two looks at the deadline and the client while a piece is awaited."""

    deadline: float = math.inf
    max_chars: int = 1 << 30
    still_wanted: Callable[[], bool] = lambda: True
    clock: Callable[[], float] = time.perf_counter
    slots: Slots | None = None
    poll_s: float = 0.25
    spent: list[str] = field(default_factory=list)  # why streams were stopped (or timed out), in order

    @classmethod
    def starting_now(cls, seconds: float, max_chars: int, clock: Callable[[], float] = time.perf_counter,
                     **kw) -> "Budget":
        """A budget whose deadline is ``seconds`` from now on ``clock``; ``kw``: the other fields."""
        return cls(deadline=clock() + seconds, max_chars=max_chars, clock=clock, **kw)

    def left_s(self) -> float:
        """Seconds until the deadline (negative once it passed)."""
        return self.deadline - self.clock()

    def check(self) -> None:
        """Raises Spent(CLIENT_LEFT) when the client has gone, Spent(TOOK_TOO_LONG) past the deadline."""
        if not self.still_wanted():
            raise Spent(CLIENT_LEFT)
        if self.left_s() <= 0:
            raise Spent(TOOK_TOO_LONG)


def read(stream: Iterator[str], budget: Budget) -> Iterator[str]:
    """Yields ``stream``'s pieces, read by a thread of its own, until it ends. Raises Spent when a
    bound stops it (the reason is also appended to ``budget.spent``); re-raises what the stream
    raised (e.g. ``WriterUnavailable``). ``stream`` (a generator) is closed by the reading thread in
    every case (here when it is never started, BUSY), at its next piece when this generator is
    closed early; a moment (``poll_s``) is waited for that."""
    try:
        budget.check()
        if budget.slots is not None and not budget.slots.acquire(blocking=False):
            raise Spent(BUSY)
    except Spent as e:
        stream.close()
        budget.spent.append(e.reason)
        raise
    stop = threading.Event()
    pieces: queue.Queue = queue.Queue(maxsize=1)  # the reading thread runs at most a piece ahead
    reader = threading.Thread(target=_pump, args=(stream, pieces, stop, budget.max_chars, budget.slots),
                              daemon=True, name="writer-stream")
    reader.start()
    try:
        while True:
            budget.check()
            try:
                kind, value = pieces.get(timeout=max(0.001, min(budget.poll_s, budget.left_s())))
            except queue.Empty:
                continue
            if kind == "piece":
                yield value
            elif kind == "end":
                return
            elif kind == "spent":
                raise Spent(value)
            else:
                raise value
    except Spent as e:
        budget.spent.append(e.reason)
        raise
    finally:
        stop.set()
        reader.join(timeout=budget.poll_s)  # a stream that is sending closes now; a stalled one at its read timeout


def _pump(stream: Iterator[str], pieces: queue.Queue, stop: threading.Event, max_chars: int,
          slots: Slots | None) -> None:
    """Reads ``stream`` into ``pieces`` (``("piece", text)`` ..., then ``("end", None)``, ``("spent",
    ANSWER_TOO_LONG)`` past ``max_chars``, or ``("error", exception)``) until it ends or ``stop`` is
    set; closes it and gives its slot back."""
    chars = 0
    try:
        with contextlib.closing(stream):
            for piece in stream:
                chars += len(piece)
                if chars > max_chars:
                    _put(pieces, ("spent", ANSWER_TOO_LONG), stop)
                    return
                if not _put(pieces, ("piece", piece), stop):
                    return
        _put(pieces, ("end", None), stop)
    except Exception as e:  # noqa: BLE001 - handed to the answering thread, which raises it
        _put(pieces, ("error", e), stop)
    finally:
        if slots is not None:
            slots.release()


def _put(pieces: queue.Queue, item: tuple, stop: threading.Event) -> bool:
    """Puts ``item`` once the reader has taken the one before; False (not put) once ``stop`` is set."""
    while not stop.is_set():
        try:
            pieces.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False
