"""Proto ↔ domain for exam prep's practice RPCs (``ListPractice``, ``GetPracticeQuestion``,
``UpdatePracticeQuestion``, ``DeletePracticeQuestion``, ``ReportPracticeQuestion``,
``AnswerPractice`` in ask.proto): question rows of :mod:`services.ask.examprep.practice` to
messages, an update request to changes, and exam prep's errors to gRPC status codes."""

from __future__ import annotations

from contextlib import contextmanager

import grpc

from lecturecopilot.ask.v1 import ask_pb2
from lecturecopilot.labels import citation_label

from .examprep import practice


def citation(lecture_id: str, lecture_number: int, t_s: float) -> ask_pb2.Citation:
    """The chip of a moment (``t_s`` seconds into the lecture)."""
    return ask_pb2.Citation(lecture_id=lecture_id, lecture_number=lecture_number, t_s=t_s,
                            label=citation_label(lecture_number, t_s))


def question_pb(q: dict) -> ask_pb2.PracticeQuestion:
    """A question row (with or without the instructor's fields) as a message; the instructor's
    fields stay unset (zero) when the row has none."""
    return ask_pb2.PracticeQuestion(
        id=q["id"], course_id=q["course_id"], lecture_id=q["lecture_id"], lecture_number=q["lecture_number"],
        question=q["stem"], options=list(q["options"]),
        citation=citation(q["cite_lecture_id"], q["cite_lecture_number"], q["cite_t_s"]),
        answer_index=q["answer_index"], explanation=q["explanation"] or "", method=q["method"] or "",
        report_comments=q.get("report_comments", []), reports=q.get("reports", 0),
        attempts=q.get("attempts", 0), wrong=q.get("wrong", 0),
        checkpoint_attempts=q.get("checkpoint_attempts", 0), checkpoint_wrong=q.get("checkpoint_wrong", 0))


def public_pb(q: dict) -> ask_pb2.PracticeQuestion:
    """A question as a student sees it before answering: no answer, explanation or statistics."""
    return ask_pb2.PracticeQuestion(
        id=q["id"], course_id=q["course_id"], lecture_id=q["lecture_id"], lecture_number=q["lecture_number"],
        question=q["stem"], options=list(q["options"]),
        citation=citation(q["cite_lecture_id"], q["cite_lecture_number"], q["cite_t_s"]))


def list_pb(found: dict, with_answers: bool) -> ask_pb2.ListPracticeResponse:
    """:func:`practice.list_practice`'s result as a message."""
    last = found["generated_at"]
    return ask_pb2.ListPracticeResponse(
        questions=[(question_pb if with_answers else public_pb)(q) for q in found["questions"]],
        generated_at=last.isoformat() if last else "", regenerate_every_s=practice.store.REGENERATE_EVERY_S)


def changes(request: ask_pb2.UpdatePracticeQuestionRequest) -> dict:
    """The fields an update sets, named as :func:`practice.edit` takes them."""
    found = {name: getattr(request, field) for field, name in (
        ("question", "stem"), ("answer_index", "answer_index"), ("explanation", "explanation"),
        ("cite_lecture_id", "cite_lecture_id"), ("cite_t_s", "cite_t_s")) if request.HasField(field)}
    if request.HasField("options"):
        found["options"] = list(request.options.values)
    return found


def result_pb(r: dict) -> ask_pb2.PracticeResult:
    """One graded answer of :func:`practice.answer` as a message."""
    return ask_pb2.PracticeResult(question_id=r["question_id"], choice=r["choice"], correct=r["correct"],
                                  answer_index=r["answer_index"], explanation=r["explanation"] or "",
                                  citation=citation(r["cite_lecture_id"], r["cite_lecture_number"], r["cite_t_s"]))


@contextmanager
def quiz_errors(context: grpc.ServicerContext):
    """Aborts the call with NOT_FOUND for :class:`practice.NotFound`, INVALID_ARGUMENT for any
    other :class:`practice.QuizError` (the message is the error's)."""
    try:
        yield
    except practice.NotFound as e:
        context.abort(grpc.StatusCode.NOT_FOUND, str(e))
    except practice.QuizError as e:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
