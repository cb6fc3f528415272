"""Practice questions (exam prep), reached through ask's gRPC: ask owns the questions, their
reports, attempts and generations (``ListPractice``, ``GetPracticeQuestion``, ``UpdatePracticeQuestion``,
``DeletePracticeQuestion``, ``ReportPracticeQuestion``, ``AnswerPractice``, ``GeneratePractice`` in
ask.proto); the gateway decides who may call what and maps ask's status codes back to HTTP
(:func:`~services.gateway.errors.grpc_error`).

Students (anyone who may see the course) list a lecture's or a course's questions without their
answers, submit chosen options and get the score with, per question, the correct option, the
explanation and a chip; they may report a question. The course's instructor (or an admin)
generates a lecture's set (at most once per lecture every 5 minutes: 429 with ``Retry-After`` and
``wait_s``), edits and deletes questions, and sees answers, reports and how often each question was
answered wrongly. Generation runs in ask, which holds the sentence embedder the blind check needs;
the gateway loads no model.
"""

from __future__ import annotations

import grpc
from flask import Blueprint, Response, jsonify

from lecturecopilot import telemetry
from lecturecopilot.ask.v1 import ask_pb2
from lecturecopilot.labels import citation_label

from .. import limits, responses as out, schemas, store
from ..access import course_row, lecture_row, limited, may_manage, person, within_course
from ..checkpoints import Checkpoint, pick
from ..context import ctx
from ..contract import accepts, returns
from ..errors import ApiError, grpc_error

bp = Blueprint("practice", __name__)
CALL_TIMEOUT_S = 30


def ask_call(method: str, request, *, timeout_s: float = CALL_TIMEOUT_S, **codes):
    """``method`` of ask's stub on ``request``; a failed call becomes an ApiError by
    :func:`grpc_error` (``codes`` as its keyword arguments: NOT_FOUND 404, INVALID_ARGUMENT 400
    ``invalid``, unreachable 503 ...)."""
    try:
        return getattr(ctx().ask, method)(request, timeout=timeout_s, metadata=telemetry.grpc_metadata())
    except grpc.RpcError as e:
        raise grpc_error(e, **codes) from None


def citation_json(lecture_id: str, lecture_number: int, t_s: float) -> dict:
    """A chip as in answers: ``{"lecture_id", "lecture_number", "t_s", "label"}``."""
    return {"lecture_id": lecture_id, "lecture_number": lecture_number, "t_s": t_s,
            "label": citation_label(lecture_number, t_s)}


def _chip(c: ask_pb2.Citation) -> dict:
    return citation_json(c.lecture_id, c.lecture_number, c.t_s)


def public_json(q: ask_pb2.PracticeQuestion) -> dict:
    """A question as a student sees it before answering: no answer, no explanation, no chip."""
    return {"id": q.id, "lecture_id": q.lecture_id, "lecture_number": q.lecture_number,
            "question": q.question, "options": list(q.options)}


def admin_json(q: ask_pb2.PracticeQuestion) -> dict:
    """A question as its instructor sees it (from a call ``with_answers``): answer, explanation,
    chip, reports with their comments, attempts and wrong attempts."""
    return {**public_json(q), "answer_index": q.answer_index, "explanation": q.explanation, "method": q.method,
            "citation": _chip(q.citation), "reports": q.reports, "report_comments": list(q.report_comments),
            "attempts": q.attempts, "wrong": q.wrong}


def question_row(question_id: str, *, manage: bool = False) -> ask_pb2.PracticeQuestion:
    """The question if its course may be seen (ApiError 404 otherwise; ``manage`` as in course_row)."""
    q = ask_call("GetPracticeQuestion", ask_pb2.PracticeQuestionRef(question_id=question_id))
    within_course(q.course_id, "question", manage=manage)
    return q


def _listed(*, with_answers: bool = False, **scope: str) -> ask_pb2.ListPracticeResponse:
    return ask_call("ListPractice", ask_pb2.ListPracticeRequest(with_answers=with_answers, **scope))


def _questions(**scope: str) -> list[ask_pb2.PracticeQuestion]:
    return list(_listed(**scope).questions)


def _answered(course_id: str, answers: list[tuple[str, int]], checkpoint: bool = False) -> list[ask_pb2.PracticeResult]:
    """Records and grades ``(question_id, choice)`` pairs of course ``course_id`` in ask, marked as given
    at a checkpoint when ``checkpoint`` and with who answered (:func:`~services.gateway.access.person`:
    the statistics count each person once, so a visitor repeating an answer does not skew them); the
    course's instructor and admins are graded, not recorded (as their questions are not counted in the
    insights); 400 ``invalid_answers`` if ask refuses one."""
    req = ask_pb2.AnswerPracticeRequest(answers=[ask_pb2.PracticeAnswer(question_id=q, choice=c, checkpoint=checkpoint)
                                                 for q, c in answers], person=person(),
                                        staff=may_manage(course_row(course_id)))
    return list(ask_call("AnswerPractice", req, invalid="invalid_answers").results)


def lecture_checkpoints(lecture_id: str) -> list[Checkpoint]:
    """The lecture's checkpoints (whatever the course's setting), from its chapters and ask's
    questions of the lecture (see :func:`services.gateway.checkpoints.pick`). ApiError as
    :func:`grpc_error` when ask fails."""
    return pick(store.chapters(ctx().pool, lecture_id), _questions(lecture_id=lecture_id), lecture_id)


def _require_checkpoint(q: ask_pb2.PracticeQuestion) -> None:
    """ApiError 409 ``checkpoints_off`` when the question's course has checkpoints off, 400
    ``not_a_checkpoint`` when the question is not one of its lecture's checkpoints."""
    if not course_row(q.course_id)["checkpoints"]:
        raise ApiError(409, "checkpoints_off", "This course has checkpoints off.")
    if q.id not in {c.question.id for c in lecture_checkpoints(q.lecture_id)}:
        raise ApiError(400, "not_a_checkpoint", "This question is not a checkpoint of its lecture.")


def grade(rows: list[ask_pb2.PracticeQuestion], body: schemas.QuizAnswers) -> dict:
    """Grades ``body.answers`` against ``rows`` (the questions the request may answer), records
    every attempt, returns the score and per-question results. ApiError 404 for a question not in
    ``rows``, 400 ``invalid_answers`` for one answered twice, 429 past ``LC_QUIZ_ANSWER_LIMIT``."""
    by_id = {r.id: r for r in rows}
    seen = set()
    for a in body.answers:
        if a.question_id not in by_id:
            raise ApiError(404, "not_found", "Unknown question in 'answers' (not of this lecture or course).")
        if a.question_id in seen:
            raise ApiError(400, "invalid_answers", "A question is answered twice.")
        seen.add(a.question_id)
    limited([(f"quiz-answer:{person()}", limits.HOUR_S, ctx().settings.quiz_answer_limit)], "practice answers")
    results = [{"question_id": got.question_id, "choice": got.choice, "correct": got.correct,
                "answer_index": got.answer_index, "answer": by_id[got.question_id].options[got.answer_index],
                "explanation": got.explanation, "citation": _chip(got.citation)}
               for got in _answered(rows[0].course_id, [(a.question_id, a.choice) for a in body.answers])]
    return {"score": sum(1 for x in results if x["correct"]), "total": len(results), "results": results}


@bp.get("/api/lectures/<lecture_id>/quiz")
@returns(out.QuizList)
def lecture_quiz(lecture_id: str):
    """The lecture's practice questions without answers (anyone who may see the course)."""
    lid = str(lecture_row(lecture_id)["id"])
    return {"lecture_id": lid, "questions": [public_json(x) for x in _questions(lecture_id=lid)]}


@bp.get("/api/courses/<course_id>/quiz")
@returns(out.QuizList)
def course_quiz(course_id: str):
    """The course's practice questions without answers, in lecture and time order."""
    cid = str(course_row(course_id)["id"])
    return {"course_id": cid, "questions": [public_json(x) for x in _questions(course_id=cid)]}


@bp.post("/api/lectures/<lecture_id>/quiz/answers")
@accepts(schemas.QuizAnswers)
@returns(out.QuizScore)
def answer_lecture_quiz(lecture_id: str, body: schemas.QuizAnswers):
    """Grades answers to questions of the lecture (attempts recorded, not those of the course's
    instructor or an admin)."""
    return grade(_questions(lecture_id=str(lecture_row(lecture_id)["id"])), body)


@bp.post("/api/courses/<course_id>/quiz/answers")
@accepts(schemas.QuizAnswers)
@returns(out.QuizScore)
def answer_course_quiz(course_id: str, body: schemas.QuizAnswers):
    """Grades answers to questions of the course (attempts recorded, not those of the course's
    instructor or an admin)."""
    return grade(_questions(course_id=str(course_row(course_id)["id"])), body)


@bp.post("/api/lectures/<lecture_id>/quiz/generate")
@returns(out.QuizGenerated, 201)
def generate_quiz(lecture_id: str):
    """Writes (replaces) the lecture's set: owner or admin; 409 before the lecture is ready;
    429 ``regenerate_too_soon`` (``Retry-After``, ``wait_s``) within 5 minutes of the last;
    422 ``no_questions`` when nothing in the lecture makes a question that passes the check."""
    r = lecture_row(lecture_id, manage=True)
    if r["status"] != "ready":
        raise ApiError(409, "not_ready", "The lecture is not processed yet; generate questions once it is ready.")
    gen = ask_call("GeneratePractice", ask_pb2.GeneratePracticeRequest(lecture_id=str(r["id"])), timeout_s=120,
                   invalid="invalid_quiz", exhausted="regenerate_too_soon", precondition="no_questions")
    by_id = {x.id: x for x in _listed(lecture_id=str(r["id"]), with_answers=True).questions}
    questions = [admin_json(by_id[i]) for i in gen.question_ids if i in by_id]
    return jsonify({"lecture_id": str(r["id"]), "method": gen.method, "written": gen.written, "kept": gen.kept,
                    "seconds": round(gen.seconds, 2), "questions": questions}), 201


@bp.get("/api/lectures/<lecture_id>/quiz/admin")
@returns(out.QuizAdmin)
def lecture_quiz_admin(lecture_id: str):
    """The set with answers, explanations, chips, report counts and comments, attempts and how
    often each was answered wrongly (owner or admin)."""
    r = lecture_row(lecture_id, manage=True)
    found = _listed(lecture_id=str(r["id"]), with_answers=True)
    return {"lecture_id": str(r["id"]), "generated_at": found.generated_at or None,
            "regenerate_every_s": found.regenerate_every_s, "questions": [admin_json(x) for x in found.questions]}


@bp.patch("/api/quiz/questions/<question_id>")
@accepts(schemas.QuizEdit)
@returns(out.QuizAdminQuestion)
def edit_quiz_question(question_id: str, body: schemas.QuizEdit):
    """Edits ``question`` (stem), ``options``, ``answer_index``, ``explanation``, ``cite_lecture_id``,
    ``cite_t_s``; the whole question is validated (400 ``invalid_quiz``). Owner or admin."""
    q = question_row(question_id, manage=True)
    changes = body.model_dump(exclude_none=True)
    if "options" in changes:
        changes["options"] = ask_pb2.OptionList(values=changes["options"])
    req = ask_pb2.UpdatePracticeQuestionRequest(question_id=q.id, **changes)
    return admin_json(ask_call("UpdatePracticeQuestion", req, invalid="invalid_quiz"))


@bp.delete("/api/quiz/questions/<question_id>")
@returns(None, 204, media="")
def delete_quiz_question(question_id: str):
    """Deletes a question (owner or admin) → 204."""
    q = question_row(question_id, manage=True)
    ask_call("DeletePracticeQuestion", ask_pb2.PracticeQuestionRef(question_id=q.id))
    return Response(status=204)


@bp.post("/api/quiz/questions/<question_id>/report")
@accepts(schemas.QuizReport)
@returns(None, 204, media="")
def report_quiz_question(question_id: str, body: schemas.QuizReport):
    """``{"comment": str | null}`` → 204; anyone who may see the course, ``LC_QUIZ_REPORT_LIMIT`` a day."""
    q = question_row(question_id)
    limited([(f"quiz-report:{person()}", limits.DAY_S, ctx().settings.quiz_report_limit)], "question reports today")
    ask_call("ReportPracticeQuestion", ask_pb2.ReportPracticeQuestionRequest(question_id=q.id, comment=body.comment),
             invalid="invalid_comment")
    return Response(status=204)


# -- the documented contract (docs/API.md, "Exam prep and insights") ------------------------------
@bp.get("/api/lectures/<lecture_id>/practice")
@returns(out.PracticeList)
def lecture_practice(lecture_id: str):
    """Each question with its chip; the course's instructor and admins also get ``answer_index``
    and ``explanation``."""
    r = lecture_row(lecture_id)
    manager = may_manage(course_row(str(r["course_id"])))
    found = []
    for x in _listed(lecture_id=str(r["id"]), with_answers=manager).questions:
        q = {**public_json(x), "citation": _chip(x.citation)}
        if manager:
            q.update(answer_index=x.answer_index, explanation=x.explanation)
        found.append(q)
    return {"questions": found}


@bp.post("/api/practice/<question_id>/answer")
@accepts(schemas.PracticeAnswer)
@returns(out.PracticeResult)
def practice_answer(question_id: str, body: schemas.PracticeAnswer):
    """``{"choice": int, "checkpoint": bool}`` → ``{"correct", "answer_index", "explanation",
    "citation"}`` (the attempt is recorded, unless by the course's instructor or an admin). With
    ``checkpoint`` true the answer was given at a checkpoint while watching and is counted for it in
    the course's insights: 409 ``checkpoints_off`` when the course has them off, 400
    ``not_a_checkpoint`` when the question is not one of its lecture's checkpoints."""
    q = question_row(question_id)
    if body.checkpoint:
        _require_checkpoint(q)
    limited([(f"quiz-answer:{person()}", limits.HOUR_S, ctx().settings.quiz_answer_limit)], "practice answers")
    [got] = _answered(q.course_id, [(q.id, body.choice)], checkpoint=body.checkpoint)
    return {"correct": got.correct, "answer_index": got.answer_index, "explanation": got.explanation,
            "citation": _chip(got.citation)}
