"""Where the course teaches a topic: the outline's "which lecture covers radix sort?" and the
exam-prep pointer's "quiz me on hashing" both ask it (retrieve → gate → refine onto the sentence)."""

from __future__ import annotations

from typing import Callable

from . import gate, refine, retrieve
from .ports import Embedder, SearchIndex

Locate = Callable[[str], "tuple[str, float] | None"]


def locator(index: SearchIndex, embed: Embedder, course_id: str, lecture_id: str | None,
            threshold: float, coverage_weight: float) -> Locate:
    """A function ``topic → (lecture_id, t_s)`` of the moment (seconds) the course (or the lecture
    ``lecture_id``) teaches ``topic``: the best of its top 3 retrieved passages, refined onto the
    transcript sentence that matches the topic; None when the evidence does not clear the
    relevance gate (``threshold``, ``coverage_weight``: :mod:`services.ask.gate`)."""
    def locate(topic: str) -> tuple[str, float] | None:
        vec = embed([topic])[0]
        found = retrieve.retrieve(index, course_id, lecture_id, vec, topic, k=3)
        ev = gate.evidence(index, course_id, found, topic, vec, coverage_weight)
        if not found or not gate.covered(ev, threshold):
            return None
        h = found[0].hit
        return h.lecture_id, refine.refine_time(index, h.lecture_id, h.start_s, h.end_s, topic, h.start_s)
    return locate
