"""Writing a cited answer from retrieved passages, with fallback and validation.

Cloud writers are tried in order. Their text is cut into sentences as it streams; a sentence
is released (text + chips) only once its citations pass :func:`citations.validate`, its words
are found in the passages it cites (:func:`refine.ungrounded`), and its citations are refined
onto the matching transcript sentence, so no unverified citation is ever shown.

- A writer that fails before any sentence was released (rate limit, timeout, outage) hands
  over to the next; after a sentence was released, the answer ends there — a second model's
  text never follows the first's.
- A sentence that fails validation before anything was released: the same writer is asked
  once more with the reason; if it fails again, the next writer (finally the extractive one)
  takes over. After something was released, the failing sentence and the rest are dropped.
- ``NOT_COVERED`` from a writer means the passages don't answer: the caller declines.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from . import citations, refine, write
from .retrieve import Passage
from .search_index import EmbeddedSearchIndex
from .writers import NOT_COVERED, PromptPassage, Writer, WriterUnavailable

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    """Filled in as :func:`compose` runs: which writer answered and whether it declined."""

    writer: str = "extractive"
    not_covered: bool = False
    attempts: int = 0


def _refs(passages: list[Passage]) -> list[citations.PassageRef]:
    return [citations.PassageRef(i + 1, p.hit.lecture_id, p.hit.lecture_number, p.hit.start_s, p.hit.end_s)
            for i, p in enumerate(passages)]


def _release(index: EmbeddedSearchIndex, text: str, valid: list[citations.ValidCitation]) -> write.AnswerSentence:
    cites = []
    for v in valid:
        t = refine.refine_time(index, v.passage.lecture_id, v.passage.start_s, v.passage.end_s, text, v.t_s)
        cite = write.Cite(v.passage.lecture_id, v.passage.lecture_number, round(t, 2))
        if cite not in cites:
            cites.append(cite)
    return write.AnswerSentence(text, cites)


def compose(index: EmbeddedSearchIndex, writers: list[Writer], question: str, query_vec: np.ndarray,
            passages: list[Passage], titles: dict[str, str], outcome: Outcome,
            max_passages: int = 6, said: set[tuple[str, float]] | None = None) -> Iterator[write.AnswerSentence]:
    """Yields validated answer sentences (see module docstring); sets ``outcome``. ``said``: what the
    previous answer cited, for a "why?" follow-up (see :func:`write.extractive_answer`)."""
    use = passages[:max_passages]
    refs = _refs(use)
    prompt = [PromptPassage(r.n, r.lecture_number, titles.get(r.lecture_id, ""), r.start_s, r.end_s, p.hit.text)
              for r, p in zip(refs, use)]
    for writer in writers:
        reason: str | None = None
        for attempt in range(2):
            outcome.attempts += 1
            released = 0
            failed: str | None = None
            buffer = ""
            try:  # closed here when given up, never by the garbage collector (OpenAIChatWriter.stream)
                with contextlib.closing(writer.stream(question, prompt, reason)) as pieces:
                    done = False
                    while not done:
                        piece = next(pieces, None)
                        if piece is None:
                            done = True
                        else:
                            buffer += piece
                        complete, buffer = ((citations.split_sentences(buffer), "") if done
                                            else citations.take_sentences(buffer))
                        for sentence in complete:
                            if sentence.strip().strip(".").upper() == NOT_COVERED and released == 0:
                                outcome.writer, outcome.not_covered = writer.name, True
                                return
                            text, raw = citations.extract(sentence)
                            valid, why = citations.validate(raw, refs)
                            if why is None and text:
                                why = refine.ungrounded(text, [use[v.passage.n - 1].hit.text for v in valid])
                            if why is not None or not text:
                                failed = why or "an empty sentence"
                                break
                            outcome.writer = writer.name
                            released += 1
                            yield _release(index, text, valid)
                        if failed:
                            break
            except WriterUnavailable as e:
                log.warning("writer %s unavailable: %s", writer.name, e)
                if released:
                    return
                break  # next writer
            if failed is None and released:
                return
            if released:  # a later sentence failed: keep what was shown, drop the rest
                log.warning("writer %s: dropped the rest of an answer (%s)", writer.name, failed)
                return
            reason = failed or "the answer had no sentence"
            log.warning("writer %s attempt %d rejected: %s", writer.name, attempt + 1, reason)
    outcome.writer = "extractive"
    yield from write.extractive_answer(index, passages, question, query_vec, said=said)
