"""The blind check every practice question goes through before it is kept: re-answered from
its cited passage alone (see :func:`check`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .questions import BLANK, EmbedFn, LectureSentence, Question
from .terms import contains, norm


@dataclass
class CheckResult:
    ok: bool
    reason: str = ""            # "" | no_citation | not_in_sentence | option_in_sentence | ...
    chosen: int | None = None   # the option the blind pass picked
    scores: list[float] = field(default_factory=list)


def filled(q: Question, option: str) -> str:
    """The statement with ``option`` in the blank (model questions: question + option)."""
    return q.statement.replace(BLANK, option) if BLANK in q.statement else f"{q.statement} {option}"


def cited_passage(q: Question, sentences: Sequence[LectureSentence], lecture_span: tuple[float, float],
                  width: int = 2) -> tuple[LectureSentence, list[LectureSentence]] | None:
    """(explaining sentence, passage = it and ``width`` sentences either side) for the question's
    citation, or None when the citation is outside ``lecture_span`` (start_s, end_s) or starts
    no sentence of the lecture."""
    lo, hi = lecture_span
    if not lo - 0.01 <= q.cite_t_s <= hi + 0.01:
        return None
    at = [i for i, s in enumerate(sentences) if abs(s.start_s - q.cite_t_s) <= 0.01]
    if not at:
        return None
    i = at[0]
    return sentences[i], list(sentences[max(0, i - width): i + width + 1])


def _without(text: str, phrase: str) -> str:
    """``text`` (normalised) with the occurrences of ``phrase`` cut out: "log n" inside a said
    "n log n" is not a statement of "log n"."""
    return f" {norm(text)} ".replace(f" {norm(phrase)} ", " | ")


def check(q: Question, sentences: Sequence[LectureSentence], lecture_span: tuple[float, float], embed: EmbedFn,
          *, margin: float = 0.02) -> CheckResult:
    """Re-answers ``q`` blind from its cited passage alone; ok only when that answer is the
    marked one and no other option is defensible there.

    Steps: the citation must start a sentence inside ``lecture_span``; the options must be 4
    distinct strings; the marked option must occur in the explaining sentence and no other
    option may; no other option may occur in a passage sentence together with the question's
    subject; the embedding vote (max cosine of each filled statement with the passage sentences)
    must pick the marked option by at least ``margin``."""
    found = cited_passage(q, sentences, lecture_span)
    if found is None:
        return CheckResult(False, "no_citation")
    if len(q.options) != 4 or len({norm(o) for o in q.options}) != 4 or not 0 <= q.answer_index < 4:
        return CheckResult(False, "bad_options")
    sent, passage = found
    if not contains(sent.text, q.answer):
        return CheckResult(False, "not_in_sentence")
    others = [o for i, o in enumerate(q.options) if i != q.answer_index]
    if any(contains(_without(sent.text, q.answer), o) for o in others):
        return CheckResult(False, "option_in_sentence")
    if q.subject and any(contains(p.text, q.subject) and contains(_without(p.text, q.answer), o)
                         for p in passage for o in others):
        return CheckResult(False, "other_option_in_passage")
    vecs = embed([filled(q, o) for o in q.options] + [p.text for p in passage])
    opt, pas = vecs[:4], vecs[4:]
    scores = (opt @ pas.T).max(axis=1)
    order = np.argsort(-scores)
    chosen = int(order[0])
    sc = [float(x) for x in scores]
    if chosen != q.answer_index:
        return CheckResult(False, "disagrees", chosen, sc)
    if scores[order[0]] - scores[order[1]] < margin:
        return CheckResult(False, "two_defensible", chosen, sc)
    return CheckResult(True, "", chosen, sc)


def checked(questions: Sequence[Question], sentences: Sequence[LectureSentence], lecture_span: tuple[float, float],
            embed: EmbedFn) -> tuple[list[Question], list[tuple[Question, CheckResult]]]:
    """(kept questions, dropped questions with the check's result)."""
    kept, dropped = [], []
    for q in questions:
        r = check(q, sentences, lecture_span, embed)
        (kept.append(q) if r.ok else dropped.append((q, r)))
    return kept, dropped
