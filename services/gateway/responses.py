"""The JSON answers of the gateway's routes, each declared once as a pydantic v2 model.

Views declare them with ``@returns(Model, status)`` (``contract.py``); the OpenAPI document takes
their JSON Schemas from here, and ``tests/integration/test_openapi.py`` checks real answers
against them (unknown fields are refused, so an undocumented field fails the test). Times are
seconds (``*_s``), dates ISO 8601.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Answer(BaseModel):
    """Base of the answer models: every field is declared."""

    model_config = ConfigDict(extra="forbid")


class ErrorDetail(BaseModel):
    """``code`` (e.g. ``not_found``, ``invalid_<field>``), a sentence, and for some errors more fields:
    ``field`` (the body field's path), ``wait_s`` (seconds until a retry is allowed)."""

    model_config = ConfigDict(extra="allow")
    code: str
    message: str
    field: str | None = None
    wait_s: int | None = None


class Error(Answer):
    """Every error: ``{"error": {"code", "message", ...}}``."""

    error: ErrorDetail


class Ok(Answer):
    """``/healthz``, ``/readyz``."""

    ok: bool


class Sent(Answer):
    """A mail was handed to the mail server."""

    sent: bool


# -- courses, members ------------------------------------------------------------------------
Visibility = Literal["public", "private"]


class CourseCreated(Answer):
    """The new course."""

    id: str
    title: str
    visibility: Visibility


class CourseUpdated(CourseCreated):
    """The course after the change; ``checkpoints``: the player pauses at chapter ends for a question."""

    assessment_mode: bool
    checkpoints: bool


class CourseItem(Answer):
    """A course as listed; ``can_manage`` when the caller owns it or is an admin."""

    id: str
    title: str
    lecture_count: int
    visibility: Visibility
    can_manage: bool


class CourseList(Answer):
    """The courses the caller may see, oldest first."""

    courses: list[CourseItem]


class LectureItem(Answer):
    """A lecture as listed: ``status`` queued | processing | ready | failed, ``stage`` and
    ``progress`` (0..1) while processing, ``error`` when failed."""

    id: str
    number: int
    title: str
    duration_s: float | None
    status: str
    stage: str | None
    progress: float | None
    error: str | None


class CourseDetail(Answer):
    """A course with its lectures by number."""

    id: str
    title: str
    visibility: Visibility
    can_manage: bool
    assessment_mode: bool
    checkpoints: bool
    lectures: list[LectureItem]


class Members(Answer):
    """The emails of a course's members, sorted."""

    members: list[str]


# -- lectures, uploads -----------------------------------------------------------------------
class LectureQueued(Answer):
    """A lecture registered and queued for processing (``status`` queued)."""

    lecture_id: str
    status: str


class UploadStatus(Answer):
    """A resumable upload: ``state`` receiving | finishing | queued | refused | expired | cancelled."""

    upload_id: str
    course_id: str
    filename: str
    size: int
    offset: int
    state: str
    expires_at: str | None
    lecture_id: str | None
    error: str | None


class Chapter(Answer):
    """A chapter: its span (seconds), title and bullets (``summary``: the bullets as one text)."""

    start_s: float
    end_s: float
    title: str
    summary: str
    bullets: list[str]


class LectureDetail(LectureItem):
    """A lecture with its course and chapters."""

    course_id: str
    chapters: list[Chapter]


class Segment(Answer):
    """One transcript sentence, or a slide's text, with its span (seconds)."""

    start_s: float
    end_s: float
    text: str
    kind: str = Field(description="'speech' or 'slide'")


class Transcript(Answer):
    """The lecture's sentences in order."""

    segments: list[Segment]


# -- search, ask -----------------------------------------------------------------------------
class Hit(Answer):
    """A passage found by search: its lecture, span (seconds), text and fused score."""

    lecture_id: str
    lecture_number: int
    start_s: float
    end_s: float
    text: str
    score: float


class SearchResults(Answer):
    """Passages of the course, best first."""

    results: list[Hit]


class Citation(Answer):
    """A chip: the lecture and second cited, labelled ``L4 · 31:32``."""

    lecture_id: str
    lecture_number: int
    t_s: float
    label: str


class Sentence(Answer):
    """One sentence of an answer with its chips."""

    text: str
    citations: list[Citation]


class Source(Answer):
    """A passage an answer was written from (span in seconds)."""

    lecture_id: str
    lecture_number: int
    start_s: float
    end_s: float


class Timings(Answer):
    """Where an answer's time went, in milliseconds."""

    retrieve_ms: float
    first_sentence_ms: float
    total_ms: float


class AskAnswer(Answer):
    """An answer (also the ``done`` event of the stream); ``declined`` when not covered. ``reason``: a decline's; else the
    bound that replaced or cut short a cloud writer's answer (writer_took_too_long, writer_answer_too_long, writers_busy)."""

    answer_id: str
    conversation_id: str
    declined: bool
    answer: str
    sentences: list[Sentence]
    sources: list[Source]
    timings: Timings
    writer: str
    reason: str | None
    rewritten_question: str | None


# -- accounts --------------------------------------------------------------------------------
class RoleRequestOut(Answer):
    """A request for the instructor role (``created_at`` ISO 8601)."""

    id: str
    email: str
    role: str
    reason: str | None
    status: Literal["pending", "approved", "denied"]
    created_at: str


class RoleRequests(Answer):
    """The pending role requests, oldest first."""

    requests: list[RoleRequestOut]


class Me(Answer):
    """Who is signed in; ``csrf_token`` is what cookie-authenticated writes send as ``X-CSRF-Token``."""

    signed_in: bool
    role: str | None
    email: str | None
    via: Literal["token", "session"] | None = None
    csrf_token: str | None
    role_request: RoleRequestOut | None


class SignedIn(Answer):
    """The session's person and role (the cookie is set)."""

    email: str
    role: str


# -- practice --------------------------------------------------------------------------------
class QuizQuestion(Answer):
    """A practice question as a student sees it before answering."""

    id: str
    lecture_id: str
    lecture_number: int
    question: str
    options: list[str]


class QuizList(Answer):
    """A lecture's (``lecture_id``) or a course's (``course_id``) practice questions."""

    lecture_id: str | None = None
    course_id: str | None = None
    questions: list[QuizQuestion]


class QuizResult(Answer):
    """One graded answer with the right option, the explanation and its chip."""

    question_id: str
    choice: int
    correct: bool
    answer_index: int
    answer: str
    explanation: str
    citation: Citation


class QuizScore(Answer):
    """A graded practice submission."""

    score: int
    total: int
    results: list[QuizResult]


class QuizAdminQuestion(QuizQuestion):
    """A question as its instructor sees it: answer, chip, reports and attempts."""

    answer_index: int
    explanation: str
    method: str
    citation: Citation
    reports: int
    report_comments: list[str]
    attempts: int
    wrong: int


class QuizGenerated(Answer):
    """A lecture's new practice set: how it was written, how many were written and kept, in how many seconds."""

    lecture_id: str
    method: str
    written: int
    kept: int
    seconds: float
    questions: list[QuizAdminQuestion]


class QuizAdmin(Answer):
    """A lecture's set as its instructor sees it; ``regenerate_every_s``: the wait between generations."""

    lecture_id: str
    generated_at: str | None
    regenerate_every_s: float
    questions: list[QuizAdminQuestion]


class PracticeQuestion(QuizQuestion):
    """A question with its chip; ``answer_index`` and ``explanation`` for the course's staff only."""

    citation: Citation
    answer_index: int | None = None
    explanation: str | None = None


class PracticeList(Answer):
    """A lecture's practice questions."""

    questions: list[PracticeQuestion]


class PracticeResult(Answer):
    """One graded answer (the attempt is recorded)."""

    correct: bool
    answer_index: int
    explanation: str
    citation: Citation
