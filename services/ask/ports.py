"""The ports of the answer path (:func:`services.ask.answer.answer_question`): what the use case
needs from the outside world, as ``typing.Protocol``s, so it runs against the real adapters
(:class:`services.ask.store.AskStore` over Postgres, :class:`services.ask.search_index.EmbeddedSearchIndex`,
the cloud writers, the embedding model) or against in-memory fakes (``tests/unit/test_answer_usecase.py``).

Times are seconds unless a name ends in ``_ms``.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

import numpy as np

from .domain import LectureInfo
from .search_index import Hit, IndexedSentence


class Embedder(Protocol):
    """Texts → their embeddings, an ``(n, d)`` float32 array of L2-normalised rows."""

    def __call__(self, texts: list[str]) -> np.ndarray: ...


class SearchIndex(Protocol):
    """The course-filtered search index the answer steps read (retrieve, gate, write, refine).

    ``sentences``: ``(lecture_id, segment_idx)`` → (the segment's sentences, their embeddings
    ``(k, d)``); ``lecture_sentences``: ``lecture_id`` → (all its sentences in time order, their
    embeddings). Every query names one course; nothing of another course is ever returned."""

    sentences: dict[tuple[str, int], tuple[list[IndexedSentence], np.ndarray]]
    lecture_sentences: dict[str, tuple[list[IndexedSentence], np.ndarray]]

    def sync_course(self, course_id: str) -> None:
        """Brings the course's points up to date with the system of record."""

    def course_vocabulary(self, course_id: str) -> dict[str, int]:
        """Lower-case words of the course's segments → their counts."""

    def course_compounds(self, course_id: str) -> dict[str, str]:
        """Word pairs the course says (at least twice) by their joined form it never says: {"lookup": "look up"}."""

    def course_df(self, course_id: str) -> tuple[int, dict[int, int]]:
        """(number of segments of the course, document frequency per token id)."""

    def query_tokens(self, text: str) -> list[int]:
        """The token ids of ``text`` as a query (the ids ``course_df`` counts)."""

    def passage_tokens(self, hit: Hit) -> frozenset[int]:
        """The token ids ``hit``'s segment says (the ids ``course_df`` counts)."""

    def course_grams(self, course_id: str):
        """The course's character n-gram statistics (:class:`services.ask.chargrams.CourseGrams`)."""

    def chapter_prior(self, hit: Hit, query_vec: np.ndarray) -> float | None:
        """The chapter-summary prior of the hit's chapter for the query, or None."""

    def expanded_query(self, text: str, feedback: list[str], terms: int = 8, weight: float = 0.4):
        """The BM25 query of ``text`` with pseudo-relevance feedback from the ``feedback`` passages' texts
        (a sparse vector, given back to :meth:`search` as ``sparse_query``)."""

    def search(self, course_id: str, lecture_id: str | None, dense: np.ndarray, text: str, limit: int,
               sparse_query=None) -> dict[str, list[Hit]]:
        """Ranked lists (``dense``, ``bm25``, ``dense_sub``, ``bm25_sub``) of the course's segments."""

    def lecture_segments(self, lecture_id: str) -> list[Hit]:
        """The lecture's segments in time order (a moment's passages, :mod:`services.ask.moment`)."""

    def lecture_slides(self, lecture_id: str) -> list[tuple[float, float, str]]:
        """The lecture's slides as ``(start_s, end_s, text)`` in time order (what was on screen when)."""


@dataclass(frozen=True)
class RecordedAnswer:
    """One exchange as the store keeps it (``answers`` row). ``sentences``: ``[{"text", "citations":
    [{"lecture_id", "t_s"}]}]``; ``sources``: ``[{"lecture_id", "start_s", "end_s"}]``."""

    answer_id: str
    conversation_id: str
    course_id: str
    lecture_id: str | None
    question: str
    rewritten_question: str
    answer: str
    declined: bool
    reason: str | None
    sentences: list[dict]
    sources: list[dict]
    writer: str
    retrieve_ms: float
    total_ms: float
    asker: str | None
    staff: bool


class AnswerStore(Protocol):
    """What the answer path reads and writes in the system of record (all of ask's SQL)."""

    def course_exists(self, course_id: str) -> bool:
        """True when the course exists."""

    def lecture_in_course(self, lecture_id: str, course_id: str) -> bool:
        """True when the lecture exists and belongs to the course."""

    def continues(self, conversation_id: str, course_id: str, asker: str | None) -> bool:
        """True when the conversation exists and is this asker's in this course (it has answers,
        none of another course or asker)."""

    def history(self, conversation_id: str, course_id: str, n: int = 3) -> list[str]:
        """The conversation's last ``n`` standalone questions that were answered (not declined), oldest first."""

    def said(self, conversation_id: str, course_id: str, n: int = 3) -> set[tuple[str, float]]:
        """The moments ``(lecture_id, t_s)`` the conversation's last ``n`` answered replies cited."""

    def assessment_mode(self, course_id: str) -> bool:
        """True when the course is in assessment mode."""

    def lectures(self, course_id: str) -> list[LectureInfo]:
        """The course's ready lectures by number, each with its chapters."""

    def practice_questions(self, lecture_id: str, embed: Embedder) -> int:
        """How many exam-prep questions the lecture has, writing its set first when it has none."""

    def record(self, answer: RecordedAnswer) -> None:
        """Stores the exchange (storing the same ``answer_id`` twice changes nothing)."""


class Reranker(Protocol):
    """Orders search's passages for a question with a cloud model, within a time cap
    (:class:`services.ask.rerank.Reranker`)."""

    def order(self, question: str, passages: Sequence) -> tuple[list[int] | None, str]:
        """``(indices of the passages kept, best first, or None to keep search's order; outcome)``.
        Never raises."""


class Slots(Protocol):
    """A semaphore of the writer streams open at once (``threading.BoundedSemaphore``)."""

    def acquire(self, blocking: bool = True) -> bool:
        """True when a slot was taken (``blocking=False``: at once or not at all)."""

    def release(self) -> None:
        """Gives a taken slot back."""


@dataclass
class AskPorts:
    """The use case's dependencies. ``writers``: cloud writers tried in order (may be empty: the
    extractive writer is always the last resort); ``clock``: monotonic seconds; ``new_id``: a fresh
    id for a conversation or an answer; ``writer_slots``: a semaphore of the writer streams open at
    once in the process (``acquire(blocking=False)``, ``release()``; None: no cap), see
    :mod:`services.ask.bounded`; ``reranker``: the rerank step's
    (:class:`services.ask.rerank.Reranker`; None: no cloud model, search order)."""

    store: AnswerStore
    index: SearchIndex
    embed: Embedder
    writers: Sequence = ()
    clock: Callable[[], float] = time.perf_counter
    new_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    writer_slots: Slots | None = None
    reranker: Reranker | None = None
