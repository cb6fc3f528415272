"""Writing a cited answer from retrieved passages, with fallback and validation.

Cloud writers are tried in order. Their text is cut into sentences as it streams; a sentence
is released (text + chips) only once its citations pass :func:`citations.validate`, what it says
is found in the passages it cites (:func:`grounding.ungrounded`, on its text with any markup taken
out), and its citations are refined onto the matching transcript sentence, so no unverified
citation is ever shown.

- A writer that fails before any sentence was released (rate limit, timeout, outage) hands
  over to the next; after a sentence was released, the answer ends there — a second model's
  text never follows the first's.
- A sentence that fails validation before anything was released: the same writer is asked
  once more with the reason; if it fails again, the next writer (finally the extractive one)
  takes over. After something was released, the failing sentence and the rest are dropped.
- ``NOT_COVERED`` from a writer means the passages don't answer: the caller declines.
- Bounds (:mod:`services.ask.bounded`, issue 31): every stream is read within one deadline for the
  whole answer, a cap on its characters and a cap on the streams open at once, and stops when the
  client goes. Past the deadline, or with every stream slot taken, the extractive writer answers at
  once (or, after a sentence was released, the answer ends there); a stream over its characters is
  that writer's failure. :attr:`Outcome.limit` then names the bound, for the answer's ``reason``.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Generator, Iterator

import numpy as np

from .. import bounded, citations, grounding, refine
from ..domain import NOT_COVERED, AnswerSentence, Cite, PromptPassage
from ..retrieve import Passage
from ..search_index import EmbeddedSearchIndex
from . import extractive
from .cloud import Writer, WriterUnavailable

log = logging.getLogger(__name__)

LIMITS = (bounded.TOOK_TOO_LONG, bounded.ANSWER_TOO_LONG, bounded.BUSY)  # the bounds an answer's reason names


@dataclass
class Outcome:
    """Filled in as :func:`compose` runs: which writer answered, whether it declined, and ``limit``:
    the bound (one of :data:`LIMITS`) that cut the cloud answer short or had the extractive writer
    answer instead, "" when none did."""

    writer: str = "extractive"
    not_covered: bool = False
    attempts: int = 0
    limit: str = ""


@dataclass
class _Attempt:
    """What one attempt of one writer came to: sentences ``released``; ``rejected``, why a sentence
    failed validation; ``unavailable``, the writer failed; ``spent``, the bound that stopped its
    stream (:class:`bounded.Spent`); ``not_covered``, the writer declined."""

    released: int = 0
    rejected: str | None = None
    unavailable: bool = False
    spent: str | None = None
    not_covered: bool = False


@dataclass(frozen=True)
class _Ask:
    """What every attempt is given: the question, the prompt's passages and their references."""

    question: str
    prompt: list[PromptPassage]
    refs: list[citations.PassageRef]


class _Cutter:
    """Streamed text cut into complete sentences (:func:`citations.take_sentences`), each character
    looked at a bounded number of times however long the text runs without a sentence end."""

    def __init__(self):
        self.buffer = ""
        self.seen = 0  # the buffer's length when it was last found to hold no further sentence end

    def add(self, piece: str) -> list[str]:
        """The sentences ``piece`` completes."""
        self.buffer += piece
        complete, self.buffer = citations.take_sentences(self.buffer, self.seen)
        self.seen = len(self.buffer)
        return complete

    def end(self) -> list[str]:
        """The sentences of what is left, at the stream's end."""
        return citations.split_sentences(self.buffer)


def _refs(passages: list[Passage]) -> list[citations.PassageRef]:
    return [citations.PassageRef(i + 1, p.hit.lecture_id, p.hit.lecture_number, p.hit.start_s, p.hit.end_s)
            for i, p in enumerate(passages)]


def _release(index: EmbeddedSearchIndex, text: str, valid: list[citations.ValidCitation]) -> AnswerSentence:
    cites = []
    for v in valid:
        t = refine.refine_time(index, v.passage.lecture_id, v.passage.start_s, v.passage.end_s, text, v.t_s)
        cite = Cite(v.passage.lecture_id, v.passage.lecture_number, round(t, 2))
        if cite not in cites:
            cites.append(cite)
    return AnswerSentence(text, cites)


def compose(index: EmbeddedSearchIndex, writers: list[Writer], question: str, query_vec: np.ndarray,
            passages: list[Passage], titles: dict[str, str], outcome: Outcome,
            max_passages: int = 6, said: set[tuple[str, float]] | None = None,
            budget: bounded.Budget | None = None) -> Iterator[AnswerSentence]:
    """Yields validated answer sentences (see module docstring); sets ``outcome``. ``said``: what the
    previous answer cited, for a "why?" follow-up (see :func:`.extractive.extractive_answer`); ``budget``:
    the bounds on the cloud writers (None: none but their own time-outs)."""
    use = passages[:max_passages]
    refs = _refs(use)
    prompt = [PromptPassage(r.n, r.lecture_number, titles.get(r.lecture_id, ""), r.start_s, r.end_s, p.hit.text)
              for r, p in zip(refs, use)]
    budget = budget or bounded.Budget()
    if (yield from _cloud(index, writers, _Ask(question, prompt, refs), budget, outcome)):
        return
    outcome.writer = "extractive"
    outcome.limit = next((r for r in reversed(budget.spent) if r in LIMITS), "")
    yield from extractive.extractive_answer(index, passages, question, query_vec, said=said)


def _cloud(index: EmbeddedSearchIndex, writers: list[Writer], ask: _Ask, budget: bounded.Budget,
           outcome: Outcome) -> Generator[AnswerSentence, None, bool]:
    """The cloud writers' sentences, each writer tried twice at most (see module docstring); returns
    True when the answer is final (sentences released, declined, or the client gone), False when
    the extractive writer is to answer."""
    for writer in writers:
        reason: str | None = None
        for n in range(2):
            outcome.attempts += 1
            att = _Attempt()
            yield from _attempt(index, writer, ask, reason, budget, outcome, att)
            if att.released and att.spent in LIMITS:
                outcome.limit = att.spent  # an answer cut short by a bound: say so
            if att.released and att.rejected:  # a later sentence failed: keep what was shown, drop the rest
                log.warning("writer %s: dropped the rest of an answer (%s)", writer.name, att.rejected)
            if att.released or att.not_covered or att.spent == bounded.CLIENT_LEFT:
                return True
            if att.spent in (bounded.TOOK_TOO_LONG, bounded.BUSY):
                return False  # no time (or no stream) left for any writer
            if att.unavailable or att.spent == bounded.ANSWER_TOO_LONG:
                break  # next writer
            reason = att.rejected or "the answer had no sentence"
            log.warning("writer %s attempt %d rejected: %s", writer.name, n + 1, reason)
    return False


def _attempt(index: EmbeddedSearchIndex, writer: Writer, ask: _Ask, reason: str | None, budget: bounded.Budget,
             outcome: Outcome, att: _Attempt) -> Iterator[AnswerSentence]:
    """One attempt of ``writer`` (``reason``: why its last answer was rejected): its stream read within
    ``budget``, cut into sentences, each released once it passes validation; what it came to is left
    in ``att``. The stream is closed as soon as the attempt ends (see :func:`bounded.read`)."""
    try:
        with contextlib.closing(bounded.read(writer.stream(ask.question, ask.prompt, reason), budget)) as pieces:
            for sentence in _sentences(pieces):
                if sentence.strip().strip(".").upper() == NOT_COVERED and not att.released:
                    att.not_covered = True
                    outcome.writer, outcome.not_covered = writer.name, True
                    return
                text, valid, why = _checked(sentence, ask)
                if why is not None:
                    att.rejected = why
                    return
                outcome.writer = writer.name
                att.released += 1
                yield _release(index, text, valid)
    except WriterUnavailable as e:
        log.warning("writer %s unavailable: %s", writer.name, e)
        att.unavailable = True
        if e.timed_out:  # a stream that stalled past its read time-out: it, too, took too long
            budget.spent.append(bounded.TOOK_TOO_LONG)
    except bounded.Spent as e:
        log.warning("writer %s stopped: %s", writer.name, e.reason)
        att.spent = e.reason


def _sentences(pieces: Iterator[str]) -> Iterator[str]:
    """The complete sentences of streamed ``pieces``, as each is completed, then the rest's at their end."""
    cutter = _Cutter()
    for piece in pieces:
        yield from cutter.add(piece)
    yield from cutter.end()


def _checked(sentence: str, ask: _Ask) -> tuple[str, list[citations.ValidCitation], str | None]:
    """``sentence``'s text without its citations, as plain text (:func:`grounding.plain_text`: no markup
    is ever shown or stored), its valid citations, and why it is rejected (None: it may be shown): a
    citation outside the passages, what the cited passage does not say (:func:`grounding.ungrounded`),
    no text."""
    text, raw = citations.extract(sentence)
    text = grounding.plain_text(text)
    valid, why = citations.validate(raw, ask.refs)
    if why is None and text:
        cited = [ask.prompt[v.passage.n - 1] for v in valid]
        why = grounding.ungrounded(text, [f"{p.lecture_title}: {p.text}" for p in cited],
                                   tuple(p.lecture_number for p in cited))
    if why is None and not text:
        why = "an empty sentence"
    return text, valid, why
