"""Exam-prep (practice question) routes of the gateway, on top of :mod:`services.ask.examprep_store`.

Students (anyone who may see the course) list a lecture's or a course's questions without their
answers, submit chosen options and get the score with, per question, the correct option, the
explanation and a chip; they may report a question. The course's instructor (or an admin)
generates a lecture's set (at most once per lecture every 5 minutes: 429 with ``Retry-After`` and
``wait_s``), edits and deletes questions, and sees answers, reports and how often each question was
answered wrongly. Generation runs in ask (``GeneratePractice``), which holds the sentence embedder the
blind check needs; the gateway loads no model.
"""

from __future__ import annotations

from types import SimpleNamespace

import grpc
from flask import Flask, Response, jsonify

from lecturecopilot import telemetry
from lecturecopilot.ask.v1 import ask_pb2
from lecturecopilot.labels import citation_label
from services.ask import examprep_store as store

from . import limits, schemas
from .schemas import accepts


def citation_json(lecture_id: str, lecture_number: int, t_s: float) -> dict:
    """A chip as in answers: ``{"lecture_id", "lecture_number", "t_s", "label"}``."""
    return {"lecture_id": lecture_id, "lecture_number": lecture_number, "t_s": t_s,
            "label": citation_label(lecture_number, t_s)}


def public_json(r: dict) -> dict:
    """A question as a student sees it before answering: no answer, no explanation, no chip."""
    return {"id": r["id"], "lecture_id": r["lecture_id"], "lecture_number": r["lecture_number"],
            "question": r["stem"], "options": list(r["options"])}


def install(app: Flask, pool, h: SimpleNamespace, ApiError, settings) -> None:  # noqa: N803 - a class
    """Adds the exam-prep routes to ``app``. ``h`` carries the gateway's helpers: ``course_row``,
    ``lecture_row``, ``require``, ``body`` (the JSON body the view declares with ``@accepts``, validated),
    ``limited``, ``person``, ``ask`` (the ask service's gRPC stub) and ``grpc_error``."""

    def question_row(question_id: str, *, manage: bool = False) -> dict:
        """The question if its course may be seen (404 otherwise; ``manage`` as in course_row)."""
        try:
            with pool.connection() as conn:
                q = store.get_question(conn, question_id)
        except store.QuizError:
            raise ApiError(404, "not_found", "Unknown question.") from None
        try:
            h.course_row(q["course_id"], manage=manage)
        except ApiError as e:
            if e.status == 404:
                raise ApiError(404, "not_found", "Unknown question.") from None
            raise
        return q

    def admin_json(conn, rows: list[dict]) -> list[dict]:
        """The questions as their instructor sees them: answer, explanation, chip, reports with
        their comments, attempts and wrong attempts (two queries for the whole list)."""
        ids = [r["id"] for r in rows]
        stats = {x["q"]: x for x in conn.execute(
            "SELECT question_id::text AS q, count(*) AS n, count(*) FILTER (WHERE NOT correct) AS wrong "
            "FROM quiz_attempts WHERE question_id = ANY(%s::uuid[]) GROUP BY question_id", (ids,)).fetchall()}
        comments: dict[str, list] = {}
        for c in conn.execute("SELECT question_id::text AS q, comment FROM quiz_reports "
                              "WHERE question_id = ANY(%s::uuid[]) ORDER BY created_at", (ids,)).fetchall():
            comments.setdefault(c["q"], []).append(c["comment"])
        out = []
        for r in rows:
            mine, st = comments.get(r["id"], []), stats.get(r["id"], {"n": 0, "wrong": 0})
            out.append({**public_json(r), "answer_index": r["answer_index"], "explanation": r["explanation"],
                        "method": r["method"],
                        "citation": citation_json(r["cite_lecture_id"], r["cite_lecture_number"], r["cite_t_s"]),
                        "reports": len(mine), "report_comments": [c for c in mine if c],
                        "attempts": st["n"], "wrong": st["wrong"]})
        return out

    def grade(rows: list[dict]) -> dict:
        """Grades ``{"answers": [{"question_id", "choice"}]}`` against ``rows`` (the questions the
        request may answer), records every attempt, returns the score and per-question results."""
        answers = h.body().answers
        by_id = {r["id"]: r for r in rows}
        seen = set()
        for a in answers:
            if a.question_id not in by_id:
                raise ApiError(404, "not_found", "Unknown question in 'answers' (not of this lecture or course).")
            if a.question_id in seen:
                raise ApiError(400, "invalid_answers", "A question is answered twice.")
            seen.add(a.question_id)
        h.limited([(f"quiz-answer:{h.person()}", limits.HOUR_S, settings.quiz_answer_limit)], "practice answers")
        results = []
        with pool.connection() as conn:
            for a in answers:
                r = by_id[a.question_id]
                got = store.record_attempt(conn, r["id"], a.choice)
                results.append({"question_id": r["id"], "choice": a.choice, "correct": got["correct"],
                                "answer_index": got["answer_index"], "answer": r["options"][got["answer_index"]],
                                "explanation": got["explanation"],
                                "citation": citation_json(r["cite_lecture_id"], r["cite_lecture_number"],
                                                          r["cite_t_s"])})
        score = sum(1 for x in results if x["correct"])
        return {"score": score, "total": len(results), "results": results}

    def scoped(kind: str, oid: str) -> tuple[dict, list[dict]]:
        """A lecture's or a course's (``kind``) questions, if the request may see it (404 otherwise):
        (``{"lecture_id": id}`` or ``{"course_id": id}``, its questions in lecture and time order)."""
        row = h.lecture_row(oid) if kind == "lecture" else h.course_row(oid)
        with pool.connection() as conn:
            rows = store.list_questions(conn, **{f"{kind}_id": str(row["id"])})
        return {f"{kind}_id": str(row["id"])}, rows

    def listing(kind: str, oid: str):
        """``GET /api/{lectures|courses}/{id}/quiz``: the practice questions without answers (anyone
        who may see the course)."""
        key, rows = scoped(kind, oid)
        return {**key, "questions": [public_json(x) for x in rows]}

    def answering(kind: str, oid: str):
        """``POST /api/{lectures|courses}/{id}/quiz/answers``: ``{"answers": [{"question_id", "choice"}]}``
        → ``{"score", "total", "results": [...]}`` for questions of that lecture or course."""
        return grade(scoped(kind, oid)[1])

    for kind in ("lecture", "course"):
        app.add_url_rule(f"/api/{kind}s/<oid>/quiz", f"{kind}_quiz", lambda oid, kind=kind: listing(kind, oid))
        app.add_url_rule(f"/api/{kind}s/<oid>/quiz/answers", f"answer_{kind}_quiz",
                         accepts(schemas.QuizAnswers)(lambda oid, kind=kind: answering(kind, oid)), methods=["POST"])

    @app.post("/api/lectures/<lecture_id>/quiz/generate")
    def generate_quiz(lecture_id: str):
        """Writes (replaces) the lecture's set: owner or admin; 409 before the lecture is ready;
        429 ``regenerate_too_soon`` (``Retry-After``, ``wait_s``) within 5 minutes of the last."""
        r = h.lecture_row(lecture_id, manage=True)
        if r["status"] != "ready":
            raise ApiError(409, "not_ready", "The lecture is not processed yet; generate questions once it is ready.")
        try:
            gen = h.ask.GeneratePractice(ask_pb2.GeneratePracticeRequest(lecture_id=str(r["id"])), timeout=120,
                                         metadata=telemetry.grpc_metadata())
        except grpc.RpcError as e:
            raise h.grpc_error(e, invalid="invalid_quiz", exhausted="regenerate_too_soon",
                               precondition="no_questions") from None
        with pool.connection() as conn:
            by_id = {x["id"]: x for x in store.list_questions(conn, lecture_id=str(r["id"]))}
            out = admin_json(conn, [by_id[i] for i in gen.question_ids if i in by_id])
        return jsonify({"lecture_id": str(r["id"]), "method": gen.method, "written": gen.written, "kept": gen.kept,
                        "seconds": round(gen.seconds, 2), "questions": out}), 201

    @app.get("/api/lectures/<lecture_id>/quiz/admin")
    def lecture_quiz_admin(lecture_id: str):
        """The set with answers, explanations, chips, report counts and comments, attempts and how
        often each was answered wrongly (owner or admin)."""
        r = h.lecture_row(lecture_id, manage=True)
        with pool.connection() as conn:
            rows = store.list_questions(conn, lecture_id=str(r["id"]))
            last = conn.execute("SELECT max(created_at) AS t FROM quiz_generations WHERE lecture_id=%s",
                                (r["id"],)).fetchone()["t"]
            out = admin_json(conn, rows)
        return {"lecture_id": str(r["id"]), "generated_at": last.isoformat() if last else None,
                "regenerate_every_s": store.REGENERATE_EVERY_S, "questions": out}

    @app.patch("/api/quiz/questions/<question_id>")
    @accepts(schemas.QuizEdit)
    def edit_quiz_question(question_id: str):
        """Edits ``question`` (stem), ``options``, ``answer_index``, ``explanation``, ``cite_lecture_id``,
        ``cite_t_s`` (the body: ``schemas.QuizEdit``); the whole question is validated (400
        ``invalid_quiz``). Owner or admin."""
        q = question_row(question_id, manage=True)
        data = h.body()
        changes = data.model_dump(exclude_none=True)
        if "question" in changes:
            changes["stem"] = changes.pop("question")
        try:
            with pool.connection() as conn:
                store.edit_question(conn, q["id"], **changes)
                [row] = [x for x in store.list_questions(conn, lecture_id=q["lecture_id"]) if x["id"] == q["id"]]
                return admin_json(conn, [row])[0]
        except store.QuizError as e:
            raise ApiError(400, "invalid_quiz", str(e)) from None

    @app.delete("/api/quiz/questions/<question_id>")
    def delete_quiz_question(question_id: str):
        """Deletes a question (owner or admin) → 204."""
        q = question_row(question_id, manage=True)
        with pool.connection() as conn:
            store.delete_question(conn, q["id"])
        return Response(status=204)

    @app.post("/api/quiz/questions/<question_id>/report")
    @accepts(schemas.QuizReport)
    def report_quiz_question(question_id: str):
        """``{"comment": str | null}`` → 204; anyone who may see the course, rate-limited."""
        q = question_row(question_id)
        comment = h.body().comment
        h.limited([(f"quiz-report:{h.person()}", limits.DAY_S, settings.quiz_report_limit)], "question reports today")
        with pool.connection() as conn:
            store.report_question(conn, q["id"], comment)
        return Response(status=204)

    # -- the documented contract (docs/API.md, "Exam prep and insights") ------------------------------
    @app.get("/api/lectures/<lecture_id>/practice")
    def lecture_practice(lecture_id: str):
        """API.md's listing: each question with its chip; the course's instructor and admins also
        get ``answer_index`` and ``explanation``."""
        r = h.lecture_row(lecture_id)
        manager = h.may_manage(h.course_row(str(r["course_id"])))
        with pool.connection() as conn:
            rows = store.list_questions(conn, lecture_id=str(r["id"]))
        out = []
        for x in rows:
            q = {**public_json(x), "citation": citation_json(x["cite_lecture_id"], x["cite_lecture_number"], x["cite_t_s"])}
            if manager:
                q.update(answer_index=x["answer_index"], explanation=x["explanation"])
            out.append(q)
        return {"questions": out}

    @app.post("/api/practice/<question_id>/answer")
    @accepts(schemas.PracticeAnswer)
    def practice_answer(question_id: str):
        """API.md's single answer: ``{"choice": int}`` → ``{"correct", "answer_index", "explanation",
        "citation"}`` (the attempt is recorded)."""
        q = question_row(question_id)
        choice = h.body().choice
        h.limited([(f"quiz-answer:{h.person()}", limits.HOUR_S, settings.quiz_answer_limit)], "practice answers")
        with pool.connection() as conn:
            got = store.record_attempt(conn, q["id"], choice)
            number = conn.execute("SELECT number FROM lectures WHERE id=%s", (got["cite_lecture_id"],)).fetchone()["number"]
        return {"correct": got["correct"], "answer_index": got["answer_index"], "explanation": got["explanation"],
                "citation": citation_json(got["cite_lecture_id"], number, got["cite_t_s"])}
