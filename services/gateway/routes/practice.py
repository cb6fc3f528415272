"""Practice questions (exam prep), on top of :mod:`services.ask.examprep_store`.

Students (anyone who may see the course) list a lecture's or a course's questions without their
answers, submit chosen options and get the score with, per question, the correct option, the
explanation and a chip; they may report a question. The course's instructor (or an admin)
generates a lecture's set (at most once per lecture every 5 minutes: 429 with ``Retry-After`` and
``wait_s``), edits and deletes questions, and sees answers, reports and how often each question was
answered wrongly. Generation runs in ask (``GeneratePractice``), which holds the sentence embedder the
blind check needs; the gateway loads no model.
"""

from __future__ import annotations

import grpc
from flask import Blueprint, Response, jsonify

from lecturecopilot import telemetry
from lecturecopilot.ask.v1 import ask_pb2
from lecturecopilot.labels import citation_label
from services.ask import examprep_store as quiz

from .. import limits, responses as out, schemas, store
from ..access import course_row, lecture_row, limited, may_manage, person, within_course
from ..context import ctx
from ..contract import accepts, returns
from ..errors import ApiError, grpc_error, not_found

bp = Blueprint("practice", __name__)


def citation_json(lecture_id: str, lecture_number: int, t_s: float) -> dict:
    """A chip as in answers: ``{"lecture_id", "lecture_number", "t_s", "label"}``."""
    return {"lecture_id": lecture_id, "lecture_number": lecture_number, "t_s": t_s,
            "label": citation_label(lecture_number, t_s)}


def _chip(r: dict) -> dict:
    return citation_json(r["cite_lecture_id"], r["cite_lecture_number"], r["cite_t_s"])


def public_json(r: dict) -> dict:
    """A question as a student sees it before answering: no answer, no explanation, no chip."""
    return {"id": r["id"], "lecture_id": r["lecture_id"], "lecture_number": r["lecture_number"],
            "question": r["stem"], "options": list(r["options"])}


def question_row(question_id: str, *, manage: bool = False) -> dict:
    """The question if its course may be seen (ApiError 404 otherwise; ``manage`` as in course_row)."""
    try:
        with ctx().pool.connection() as conn:
            q = quiz.get_question(conn, question_id)
    except quiz.QuizError:
        raise not_found("question") from None
    within_course(q["course_id"], "question", manage=manage)
    return q


def admin_json(conn, rows: list[dict]) -> list[dict]:
    """The questions as their instructor sees them: answer, explanation, chip, reports with
    their comments, attempts and wrong attempts (two queries for the whole list)."""
    stats, comments = store.practice_stats(conn, [r["id"] for r in rows])
    found = []
    for r in rows:
        mine, st = comments.get(r["id"], []), stats.get(r["id"], {"n": 0, "wrong": 0})
        found.append({**public_json(r), "answer_index": r["answer_index"], "explanation": r["explanation"],
                      "method": r["method"], "citation": _chip(r),
                      "reports": len(mine), "report_comments": [c for c in mine if c],
                      "attempts": st["n"], "wrong": st["wrong"]})
    return found


def grade(rows: list[dict], body: schemas.QuizAnswers) -> dict:
    """Grades ``body.answers`` against ``rows`` (the questions the request may answer), records
    every attempt, returns the score and per-question results. ApiError 404 for a question not in
    ``rows``, 400 ``invalid_answers`` for one answered twice, 429 past ``LC_QUIZ_ANSWER_LIMIT``."""
    by_id = {r["id"]: r for r in rows}
    seen = set()
    for a in body.answers:
        if a.question_id not in by_id:
            raise ApiError(404, "not_found", "Unknown question in 'answers' (not of this lecture or course).")
        if a.question_id in seen:
            raise ApiError(400, "invalid_answers", "A question is answered twice.")
        seen.add(a.question_id)
    limited([(f"quiz-answer:{person()}", limits.HOUR_S, ctx().settings.quiz_answer_limit)], "practice answers")
    results = []
    with ctx().pool.connection() as conn:
        for a in body.answers:
            r = by_id[a.question_id]
            got = quiz.record_attempt(conn, r["id"], a.choice)
            results.append({"question_id": r["id"], "choice": a.choice, "correct": got["correct"],
                            "answer_index": got["answer_index"], "answer": r["options"][got["answer_index"]],
                            "explanation": got["explanation"], "citation": _chip(r)})
    return {"score": sum(1 for x in results if x["correct"]), "total": len(results), "results": results}


def _questions(**scope: str) -> list[dict]:
    with ctx().pool.connection() as conn:
        return quiz.list_questions(conn, **scope)


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
    """Grades answers to questions of the lecture (attempts recorded)."""
    return grade(_questions(lecture_id=str(lecture_row(lecture_id)["id"])), body)


@bp.post("/api/courses/<course_id>/quiz/answers")
@accepts(schemas.QuizAnswers)
@returns(out.QuizScore)
def answer_course_quiz(course_id: str, body: schemas.QuizAnswers):
    """Grades answers to questions of the course (attempts recorded)."""
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
    try:
        gen = ctx().ask.GeneratePractice(ask_pb2.GeneratePracticeRequest(lecture_id=str(r["id"])), timeout=120,
                                         metadata=telemetry.grpc_metadata())
    except grpc.RpcError as e:
        raise grpc_error(e, invalid="invalid_quiz", exhausted="regenerate_too_soon",
                         precondition="no_questions") from None
    with ctx().pool.connection() as conn:
        by_id = {x["id"]: x for x in quiz.list_questions(conn, lecture_id=str(r["id"]))}
        questions = admin_json(conn, [by_id[i] for i in gen.question_ids if i in by_id])
    return jsonify({"lecture_id": str(r["id"]), "method": gen.method, "written": gen.written, "kept": gen.kept,
                    "seconds": round(gen.seconds, 2), "questions": questions}), 201


@bp.get("/api/lectures/<lecture_id>/quiz/admin")
@returns(out.QuizAdmin)
def lecture_quiz_admin(lecture_id: str):
    """The set with answers, explanations, chips, report counts and comments, attempts and how
    often each was answered wrongly (owner or admin)."""
    r = lecture_row(lecture_id, manage=True)
    with ctx().pool.connection() as conn:
        rows = quiz.list_questions(conn, lecture_id=str(r["id"]))
        last = store.last_generation(conn, r["id"])
        questions = admin_json(conn, rows)
    return {"lecture_id": str(r["id"]), "generated_at": last.isoformat() if last else None,
            "regenerate_every_s": quiz.REGENERATE_EVERY_S, "questions": questions}


@bp.patch("/api/quiz/questions/<question_id>")
@accepts(schemas.QuizEdit)
@returns(out.QuizAdminQuestion)
def edit_quiz_question(question_id: str, body: schemas.QuizEdit):
    """Edits ``question`` (stem), ``options``, ``answer_index``, ``explanation``, ``cite_lecture_id``,
    ``cite_t_s``; the whole question is validated (400 ``invalid_quiz``). Owner or admin."""
    q = question_row(question_id, manage=True)
    changes = body.model_dump(exclude_none=True)
    if "question" in changes:
        changes["stem"] = changes.pop("question")
    try:
        with ctx().pool.connection() as conn:
            quiz.edit_question(conn, q["id"], **changes)
            [row] = [x for x in quiz.list_questions(conn, lecture_id=q["lecture_id"]) if x["id"] == q["id"]]
            return admin_json(conn, [row])[0]
    except quiz.QuizError as e:
        raise ApiError(400, "invalid_quiz", str(e)) from None


@bp.delete("/api/quiz/questions/<question_id>")
@returns(None, 204, media="")
def delete_quiz_question(question_id: str):
    """Deletes a question (owner or admin) → 204."""
    q = question_row(question_id, manage=True)
    with ctx().pool.connection() as conn:
        quiz.delete_question(conn, q["id"])
    return Response(status=204)


@bp.post("/api/quiz/questions/<question_id>/report")
@accepts(schemas.QuizReport)
@returns(None, 204, media="")
def report_quiz_question(question_id: str, body: schemas.QuizReport):
    """``{"comment": str | null}`` → 204; anyone who may see the course, ``LC_QUIZ_REPORT_LIMIT`` a day."""
    q = question_row(question_id)
    limited([(f"quiz-report:{person()}", limits.DAY_S, ctx().settings.quiz_report_limit)], "question reports today")
    with ctx().pool.connection() as conn:
        quiz.report_question(conn, q["id"], body.comment)
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
    for x in _questions(lecture_id=str(r["id"])):
        q = {**public_json(x), "citation": _chip(x)}
        if manager:
            q.update(answer_index=x["answer_index"], explanation=x["explanation"])
        found.append(q)
    return {"questions": found}


@bp.post("/api/practice/<question_id>/answer")
@accepts(schemas.PracticeAnswer)
@returns(out.PracticeResult)
def practice_answer(question_id: str, body: schemas.PracticeAnswer):
    """``{"choice": int}`` → ``{"correct", "answer_index", "explanation", "citation"}`` (the attempt
    is recorded)."""
    q = question_row(question_id)
    limited([(f"quiz-answer:{person()}", limits.HOUR_S, ctx().settings.quiz_answer_limit)], "practice answers")
    with ctx().pool.connection() as conn:
        got = quiz.record_attempt(conn, q["id"], body.choice)
    number = store.lecture_number(ctx().pool, got["cite_lecture_id"])
    return {"correct": got["correct"], "answer_index": got["answer_index"], "explanation": got["explanation"],
            "citation": citation_json(got["cite_lecture_id"], number, got["cite_t_s"])}
