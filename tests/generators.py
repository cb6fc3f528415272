"""Test helpers for generators that return a value (``compose`` yields sentences, then returns its outcome)."""

from __future__ import annotations


def drained(gen) -> tuple[list, object]:
    """``(items yielded, value returned)`` of the generator ``gen``, run to its end."""
    out = []
    while True:
        try:
            out.append(next(gen))
        except StopIteration as stop:
            return out, stop.value
