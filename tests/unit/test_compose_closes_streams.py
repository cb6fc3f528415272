"""``services.ask.writers.fallback.compose`` closes a writer's stream as soon as it gives the answer up: left to
the garbage collector, httpcore's finalizer for an open response can take the connection pool's lock
inside the same thread's request and hang it (encode/httpcore#990; the ask service hung so in CI)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from services.ask.domain import NOT_COVERED
from services.ask.retrieve import Passage
from services.ask.writers.fallback import Composition, compose
from generators import drained


class RecordingWriter:
    """A writer whose first answer cites a passage it was not given, then says it is not covered;
    ``events`` records when each stream is asked for and when it is closed, in order."""

    name = "recording"

    def __init__(self):
        self.events: list[str] = []

    def stream(self, question, passages, reason=None):
        n = sum(e.startswith("asked") for e in self.events) + 1
        self.events.append(f"asked {n}")  # when compose asks (the generator below runs at its first read)
        return self._pieces(n)

    def _pieces(self, n):
        try:
            if n == 1:
                yield "Hashing maps keys to slots [S9 @ 0:05]. "
                yield "Never read past the rejected sentence. "
            else:
                yield f"{NOT_COVERED}."
        finally:
            self.events.append(f"closed {n}")

    def complete(self, system, user, max_tokens=120):
        raise AssertionError("not used")


def test_a_rejected_stream_is_closed_before_the_next_attempt_starts():
    hit = SimpleNamespace(lecture_id="L1", lecture_number=1, start_s=0.0, end_s=30.0,
                          text="Hashing maps keys to slots.")
    writer = RecordingWriter()
    out, outcome = drained(compose(None, [writer], Composition(
        "what is hashing?", np.zeros(384, dtype=np.float32), [Passage(hit, 1.0)], {"L1": "Hashing"})))
    assert out == [] and outcome.not_covered and outcome.attempts == 2
    assert writer.events == ["asked 1", "closed 1", "asked 2", "closed 2"]
