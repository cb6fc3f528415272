"""Checkpoints while watching (issue 33): with a course's ``checkpoints`` on, the player pauses at
each chapter's end and offers one practice question from that chapter. This module decides which:
for each chapter, the earliest of the lecture's (already checked) questions whose explaining moment
lies inside the chapter; a chapter with none has no checkpoint. Pure: the routes bring the chapters
(index's rows, read by :func:`services.gateway.store.chapters`) and the questions (ask's
``ListPractice``, in lecture and time order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence


class _Cited(Protocol):
    lecture_id: str
    t_s: float


class Question(Protocol):
    """What :func:`pick` reads of a question: an ask ``PracticeQuestion`` (``id``, ``citation``)."""

    id: str
    citation: _Cited


@dataclass(frozen=True)
class Checkpoint:
    """Chapter ``chapter_index`` (0-based, in time order) titled ``chapter_title`` runs from
    ``start_s`` to ``at_s`` (seconds into the lecture); ``question`` is offered at ``at_s``."""

    chapter_index: int
    chapter_title: str
    start_s: float
    at_s: float
    question: Question


def _inside(t_s: float, start_s: float, end_s: float, last: bool) -> bool:
    # a chapter is [start, end); the last one keeps its end (a moment at the lecture's very end)
    return start_s <= t_s < end_s or (last and t_s == end_s)


def pick(chapters: Sequence[dict], questions: Sequence[Question], lecture_id: str) -> list[Checkpoint]:
    """The lecture's checkpoints in time order. ``chapters``: ``{"start_s", "end_s", "title"}`` in
    order (seconds); ``questions``: the lecture's questions. A question counts for a chapter when it
    cites this lecture (``citation.lecture_id``) at a second inside the chapter; the earliest cited
    wins, ties kept in the order given (deterministic: ask lists by time, then creation)."""
    found = []
    mine = [(q.citation.t_s, i, q) for i, q in enumerate(questions) if q.citation.lecture_id == lecture_id]
    for idx, ch in enumerate(chapters):
        last = idx == len(chapters) - 1
        inside = [x for x in mine if _inside(x[0], ch["start_s"], ch["end_s"], last)]
        if inside:
            _, _, q = min(inside, key=lambda x: (x[0], x[1]))
            found.append(Checkpoint(idx, ch["title"], float(ch["start_s"]), float(ch["end_s"]), q))
    return found
