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
    ok: bool


class Sent(Answer):
    sent: bool


# -- courses, members ------------------------------------------------------------------------
Visibility = Literal["public", "private"]


class CourseCreated(Answer):
    id: str
    title: str
    visibility: Visibility


class CourseUpdated(CourseCreated):
    assessment_mode: bool


class CourseItem(Answer):
    id: str
    title: str
    lecture_count: int
    visibility: Visibility
    can_manage: bool


class CourseList(Answer):
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
    id: str
    title: str
    visibility: Visibility
    can_manage: bool
    assessment_mode: bool
    lectures: list[LectureItem]


class Members(Answer):
    members: list[str]


# -- lectures, uploads -----------------------------------------------------------------------
class LectureQueued(Answer):
    lecture_id: str
    status: str


class UploadStatus(Answer):
    """A resumable upload: ``state`` receiving | finishing | queued | refused | expired."""

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
    start_s: float
    end_s: float
    title: str
    summary: str
    bullets: list[str]


class LectureDetail(LectureItem):
    course_id: str
    chapters: list[Chapter]


class Segment(Answer):
    start_s: float
    end_s: float
    text: str
    kind: str = Field(description="'speech' or 'slide'")


class Transcript(Answer):
    segments: list[Segment]


# -- search, ask -----------------------------------------------------------------------------
class Hit(Answer):
    lecture_id: str
    lecture_number: int
    start_s: float
    end_s: float
    text: str
    score: float


class SearchResults(Answer):
    results: list[Hit]


class Citation(Answer):
    """A chip: the lecture and second cited, labelled ``L4 · 31:32``."""

    lecture_id: str
    lecture_number: int
    t_s: float
    label: str


class Sentence(Answer):
    text: str
    citations: list[Citation]


class Source(Answer):
    lecture_id: str
    lecture_number: int
    start_s: float
    end_s: float


class Timings(Answer):
    retrieve_ms: float
    first_sentence_ms: float
    total_ms: float


class AskAnswer(Answer):
    """An answer (also the ``done`` event of the stream); ``declined`` when not covered."""

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
    id: str
    email: str
    role: str
    reason: str | None
    status: Literal["pending", "approved", "denied"]
    created_at: str


class RoleRequests(Answer):
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
    lecture_id: str | None = None
    course_id: str | None = None
    questions: list[QuizQuestion]


class QuizResult(Answer):
    question_id: str
    choice: int
    correct: bool
    answer_index: int
    answer: str
    explanation: str
    citation: Citation


class QuizScore(Answer):
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
    lecture_id: str
    method: str
    written: int
    kept: int
    seconds: float
    questions: list[QuizAdminQuestion]


class QuizAdmin(Answer):
    lecture_id: str
    generated_at: str | None
    regenerate_every_s: float
    questions: list[QuizAdminQuestion]


class PracticeQuestion(QuizQuestion):
    citation: Citation
    answer_index: int | None = None
    explanation: str | None = None


class PracticeList(Answer):
    questions: list[PracticeQuestion]


class PracticeResult(Answer):
    correct: bool
    answer_index: int
    explanation: str
    citation: Citation


# -- insights --------------------------------------------------------------------------------
class Group(Answer):
    label: str
    count: int
    examples: list[str]


class Moment(Citation):
    lecture_title: str
    count: int


class Insights(Answer):
    """What students asked over ``from``..``to`` (see ``services/gateway/insights.py``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    course_id: str
    from_: str = Field(alias="from")
    to: str
    questions: int
    declined: int
    students: int
    grouping: dict
    topics: list[Group]
    uncovered: list[Group]
    thumbs_down: list[dict]
    top_moments: list[Moment]
    per_day: list[dict]


# -- forms (not JSON: documented, checked by ingest) -----------------------------------------
class LectureUploadForm(BaseModel):
    """``POST /api/courses/{id}/lectures`` as ``multipart/form-data``: a video and/or captions."""

    video: bytes | None = Field(None, description="MP4, MOV, WebM or MKV with an audio track (≤ 2 GB, ≤ 2 h)")
    captions: bytes | None = Field(None, description="WebVTT or SRT; alone, a transcript-only lecture")
    title: str | None = Field(None, max_length=200)
    number: int | None = Field(None, ge=0, le=9999, description="unique in the course; default the next free")
    video_size: int | None = Field(None, description="the video's size in bytes, checked against what arrives")
    language: str | None = Field(None, description="a language code such as 'en'")
