"""The extractive answer writer (no model, no key): the answer is made of sentences the
lecturer said, each cited at the second it was said, so every citation is true by
construction. Fillers ("um", "uh") and immediate word repeats ("the the") are removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from lecturecopilot.labels import citation_label

from .retrieve import Passage
from .search_index import EmbeddedSearchIndex

DECLINE_TEXT = "Not covered in these lectures."

_FILLER = re.compile(r"\b(?:um+|uh+|erm|er|hmm+|you know)\b[,.]?\s*", re.IGNORECASE)
_REPEAT = re.compile(r"\b(\w+)(\s+\1\b)+", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = set("the a an of to in and or is are was were be it that this for on with as by at from what how why "
            "when which who does do did can you i we they he she there their our your my".split())


@dataclass(frozen=True)
class Cite:
    """A validated citation: the moment ``t_s`` (seconds) of a lecture of the active course."""

    lecture_id: str
    lecture_number: int
    t_s: float

    @property
    def label(self) -> str:
        return citation_label(self.lecture_number, self.t_s)


@dataclass
class AnswerSentence:
    """One sentence of an answer and the citations that back it (at least one, unless declined)."""

    text: str
    cites: list[Cite]


def clean(text: str) -> str:
    """Removes fillers and stutter repeats without changing the sentence's words otherwise."""
    t = _FILLER.sub("", text)
    t = _REPEAT.sub(r"\1", t)
    t = re.sub(r"\s+([,.?!])", r"\1", re.sub(r"\s{2,}", " ", t)).strip()
    t = re.sub(r"^[,;\s]+", "", t)
    return t[:1].upper() + t[1:] if t else t


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def extractive_answer(index: EmbeddedSearchIndex, passages: list[Passage], query: str, query_vec: np.ndarray,
                      *, max_sentences: int = 3, from_passages: int = 3) -> list[AnswerSentence]:
    """Picks up to ``max_sentences`` sentences from the best ``from_passages`` passages.

    Score = cosine(sentence, query) + 0.05 × shared content words; sentences under 5 words
    and questions are skipped; the chosen ones are returned in lecture order (lecture number, time).
    """
    qwords = _content(query)
    scored: list[tuple[float, AnswerSentence]] = []
    for p in passages[:from_passages]:
        entry = index.sentences.get((p.hit.lecture_id, p.hit.segment_idx))
        if not entry:
            continue
        sents, vecs = entry
        sims = vecs @ query_vec
        for s, sim in zip(sents, sims):
            text = clean(s.text)
            if len(text.split()) < 5 or text.endswith("?"):  # a question asked in class is no answer
                continue
            score = float(sim) + 0.05 * len(qwords & _content(text))
            scored.append((score, AnswerSentence(text, [Cite(p.hit.lecture_id, p.hit.lecture_number, s.start_s)])))
    if not scored:
        return []
    scored.sort(key=lambda x: -x[0])
    best = scored[0][0]
    chosen = [cs for sc, cs in scored[:max_sentences] if sc >= best - 0.15]
    chosen.sort(key=lambda a: (a.cites[0].lecture_number, a.cites[0].t_s))
    return chosen
