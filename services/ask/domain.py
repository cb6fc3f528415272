"""The answer's domain types, shared by every step of the answer path and its writers: a cited
:class:`AnswerSentence` (its :class:`Cite`\\ s), the texts of a decline, the :class:`PromptPassage`\\ s
a cloud writer is given, and the events the use case (:func:`services.ask.answer.answer_question`)
yields: a :class:`SentenceEvent` per released sentence, then one :class:`Done`.

Times are seconds unless a name ends in ``_ms`` (milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from lecturecopilot.labels import citation_label

DECLINE_TEXT = "Not covered in these lectures."
MAX_QUESTION_CHARS = 2000  # the longest question asked, and the longest a follow-up's rewrite may grow to
NOT_COVERED = "NOT_COVERED"  # a cloud writer's whole reply when its passages don't answer the question


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


@dataclass(frozen=True)
class LectureInfo:
    """A ready lecture of a course as the outline answers about it: its ``duration_s`` (None: not known),
    ``chapters`` as ``(start_s, title)``, and per chapter its summary bullets (sentences, "\n"-joined;
    may be empty)."""

    id: str
    number: int
    title: str
    duration_s: float | None
    chapters: tuple[tuple[float, str], ...] = ()  # (start_s, title)
    summaries: tuple[str, ...] = ()  # per chapter, its summary bullets (sentences), "\n"-joined; may be empty


@dataclass(frozen=True)
class PromptPassage:
    """A retrieved passage as a cloud writer is shown it: its number ``n`` (cited as ``[S<n> @ M:SS]``),
    its lecture, and its span ``start_s``–``end_s`` (seconds)."""

    n: int
    lecture_number: int
    lecture_title: str
    start_s: float
    end_s: float
    text: str


@dataclass(frozen=True)
class Source:
    """A passage the answer was written from (seconds)."""

    lecture_id: str
    lecture_number: int
    start_s: float
    end_s: float


@dataclass(frozen=True)
class SentenceEvent:
    """One released sentence: ``delta`` is the text to append to what was shown (a space first,
    after the first sentence)."""

    sentence: AnswerSentence
    delta: str


@dataclass(frozen=True)
class Done:
    """The whole answer, once recorded. ``rewritten_question``: the standalone question a follow-up
    was rewritten into (as the student wrote it: spelling is corrected for search only), "" when
    that is the message itself; ``writer``: extractive, a cloud writer's name,
    outline, exam_prep or policy; ``reason`` of a decline: not_covered, unsupported_request,
    no_lectures, lecture_not_ready, assessment_mode; of an answer, the bound that had the extractive
    writer answer instead of the cloud writers, or cut their answer short
    (:data:`services.ask.writers.fallback.LIMITS`: writer_took_too_long, writer_answer_too_long, writers_busy);
    "" when none."""

    answer_id: str
    conversation_id: str
    declined: bool
    answer: str
    sentences: list[AnswerSentence]
    sources: list[Source]
    retrieve_ms: float
    total_ms: float
    writer: str
    reason: str
    rewritten_question: str
    first_sentence_ms: float


AnswerEvent = Union[SentenceEvent, Done]
