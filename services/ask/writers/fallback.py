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

:func:`compose` tries one writer at a time (:func:`_attempt`, which returns what the attempt came to);
:func:`_verdict` says what follows it.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Generator, Iterator

import numpy as np

from .. import bounded, citations, grounding, refine
from ..domain import NOT_COVERED, AnswerSentence, Cite, PromptPassage
from ..ports import SearchIndex
from ..retrieve import Passage
from . import extractive
from .cloud import Writer, WriterUnavailable

log = logging.getLogger(__name__)

LIMITS = (bounded.TOOK_TOO_LONG, bounded.ANSWER_TOO_LONG, bounded.BUSY)  # the bounds an answer's reason names


@dataclass(frozen=True)
class Outcome:
    """What :func:`compose` came to, its return value: which writer answered, whether it declined,
    how many cloud attempts it took, and ``limit``: the bound (one of :data:`LIMITS`) that cut the
    cloud answer short or had the extractive writer answer instead, "" when none did."""

    writer: str = "extractive"
    not_covered: bool = False
    attempts: int = 0
    limit: str = ""


@dataclass(frozen=True)
class Composition:
    """What an answer is written from: the ``question``, its embedding ``query_vec``, the retrieved
    ``passages`` (best first; the first ``max_passages`` are the cloud writers'), the course's lecture
    ``titles`` by lecture id, and ``said``: what the previous answer cited, for a "why?" follow-up (see
    :func:`.extractive.extractive_answer`); ``quoted``: for a question about a moment, its passages'
    number (they come first): the extractive writer quotes only them (:mod:`services.ask.moment`)."""

    question: str
    query_vec: np.ndarray
    passages: list[Passage]
    titles: dict[str, str]
    said: set[tuple[str, float]] | None = None
    max_passages: int = 6
    quoted: int = 0  # the extractive writer quotes only the first this many passages (a moment's); 0: any


@dataclass(frozen=True)
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


def _release(index: SearchIndex, text: str, valid: list[citations.ValidCitation]) -> AnswerSentence:
    cites = []
    for v in valid:
        t = refine.refine_time(index, v.passage.lecture_id, v.passage.start_s, v.passage.end_s, text, v.t_s)
        cite = Cite(v.passage.lecture_id, v.passage.lecture_number, round(t, 2))
        if cite not in cites:
            cites.append(cite)
    return AnswerSentence(text, cites)


def compose(index: SearchIndex, writers: list[Writer], inputs: Composition,
            budget: bounded.Budget | None = None) -> Generator[AnswerSentence, None, Outcome]:
    """Yields validated answer sentences (see module docstring), then returns the :class:`Outcome`.
    ``budget``: the bounds on the cloud writers (None: none but their own time-outs)."""
    use = inputs.passages[:inputs.max_passages]
    refs = _refs(use)
    prompt = [PromptPassage(r.n, r.lecture_number, inputs.titles.get(r.lecture_id, ""), r.start_s, r.end_s,
                            p.hit.text) for r, p in zip(refs, use)]
    budget = budget or bounded.Budget()
    settled, attempts = yield from _cloud(index, writers, _Ask(inputs.question, prompt, refs), budget)
    if settled is not None:
        return settled
    limit = next((r for r in reversed(budget.spent) if r in LIMITS), "")
    quoted = inputs.passages[:inputs.quoted] if inputs.quoted else inputs.passages
    yield from extractive.extractive_answer(index, quoted, inputs.question, inputs.query_vec, said=inputs.said)
    return Outcome("extractive", False, attempts, limit)


_FINAL, _EXTRACTIVE, _NEXT, _AGAIN = "final", "extractive", "next writer", "again"


def _cloud(index: SearchIndex, writers: list[Writer], ask: _Ask, budget: bounded.Budget
           ) -> Generator[AnswerSentence, None, tuple[Outcome | None, int]]:
    """The cloud writers' sentences, each writer tried twice at most (see module docstring); returns
    the answer's :class:`Outcome` when it is final (sentences released, declined, or the client gone),
    None when the extractive writer is to answer, and the number of attempts made."""
    attempts = 0
    for writer in writers:
        reason: str | None = None
        for n in range(2):
            attempts += 1
            att = yield from _attempt(index, writer, ask, reason, budget)
            verdict = _verdict(writer, att)
            if verdict == _FINAL:
                return _settled(writer, att, attempts), attempts
            if verdict == _EXTRACTIVE:
                return None, attempts  # no time (or no stream) left for any writer
            if verdict == _NEXT:
                break
            reason = att.rejected or "the answer had no sentence"
            log.warning("writer %s attempt %d rejected: %s", writer.name, n + 1, reason)
    return None, attempts


def _verdict(writer: Writer, att: _Attempt) -> str:
    """What follows ``att``: the answer is final (:data:`_FINAL`), the extractive writer answers
    (:data:`_EXTRACTIVE`), the next writer is tried (:data:`_NEXT`) or the same one asked again
    (:data:`_AGAIN`)."""
    if att.released and att.rejected:  # a later sentence failed: keep what was shown, drop the rest
        log.warning("writer %s: dropped the rest of an answer (%s)", writer.name, att.rejected)
    if att.released or att.not_covered or att.spent == bounded.CLIENT_LEFT:
        return _FINAL
    if att.spent in (bounded.TOOK_TOO_LONG, bounded.BUSY):
        return _EXTRACTIVE
    if att.unavailable or att.spent == bounded.ANSWER_TOO_LONG:
        return _NEXT
    return _AGAIN


def _settled(writer: Writer, att: _Attempt, attempts: int) -> Outcome:
    """The outcome of an answer that ``att`` made final; ``limit`` names the bound that cut a released
    answer short."""
    return Outcome(writer.name if att.released or att.not_covered else "extractive", att.not_covered, attempts,
                   att.spent if att.released and att.spent in LIMITS else "")


def _attempt(index: SearchIndex, writer: Writer, ask: _Ask, reason: str | None, budget: bounded.Budget
             ) -> Generator[AnswerSentence, None, _Attempt]:
    """One attempt of ``writer`` (``reason``: why its last answer was rejected): its stream read within
    ``budget``, cut into sentences, each released once it passes validation; returns what it came to.
    The stream is closed as soon as the attempt ends (see :func:`bounded.read`)."""
    released = 0
    try:
        with contextlib.closing(bounded.read(writer.stream(ask.question, ask.prompt, reason), budget)) as pieces:
            for sentence in _sentences(pieces):
                if not released and sentence.strip().strip(".").upper() == NOT_COVERED:
                    return _Attempt(not_covered=True)
                text, valid, why = _checked(sentence, ask)
                if why is not None:
                    return _Attempt(released, rejected=why)
                released += 1
                yield _release(index, text, valid)
    except WriterUnavailable as e:
        log.warning("writer %s unavailable: %s", writer.name, e)
        if e.timed_out:  # a stream that stalled past its read time-out: it, too, took too long
            budget.spent.append(bounded.TOOK_TOO_LONG)
        return _Attempt(released, unavailable=True)
    except bounded.Spent as e:
        log.warning("writer %s stopped: %s", writer.name, e.reason)
        return _Attempt(released, spent=e.reason)
    return _Attempt(released)


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
