"""Checkpoints while watching (issue 33): ``GET /api/lectures/{id}/checkpoints`` gives the player a
lecture's checkpoints (each chapter's end with one practice question from the chapter, see
:mod:`services.gateway.checkpoints`) when the course has them on; a student answers one with
``POST /api/practice/{question_id}/answer`` and ``"checkpoint": true`` (graded and recorded by ask
like any practice answer, counted apart). The course's insights show per checkpoint how many
answered and how many got it wrong (:func:`course_stats`)."""

from __future__ import annotations

from flask import Blueprint

from lecturecopilot.ask.v1 import ask_pb2

from .. import store, study_responses as out
from ..access import course_row, lecture_row
from ..checkpoints import pick
from ..context import ctx
from ..contract import returns
from .practice import ask_call, lecture_checkpoints, public_json

bp = Blueprint("checkpoints", __name__)


@bp.get("/api/lectures/<lecture_id>/checkpoints")
@returns(out.CheckpointList)
def get_checkpoints(lecture_id: str):
    """The lecture's checkpoints in time order (anyone who may see the course): per chapter with a
    practice question citing inside it, the chapter's end ``at_s`` and the question without its
    answer. ``enabled`` false and no checkpoints while the course has them off."""
    r = lecture_row(lecture_id)
    lid = str(r["id"])
    enabled = bool(course_row(str(r["course_id"]))["checkpoints"])
    found = lecture_checkpoints(lid) if enabled else []
    return {"lecture_id": lid, "enabled": enabled, "checkpoints": [
        {"chapter_index": c.chapter_index, "chapter_title": c.chapter_title, "start_s": c.start_s, "at_s": c.at_s,
         "question": public_json(c.question)} for c in found]}


def course_stats(course: dict) -> list[dict]:
    """Per checkpoint of the course's lectures (by number, then time): the lecture, chapter, question,
    how many answers were given at it (``answered``) and how many were wrong (all time: ask's counts of
    the question's checkpoint attempts). Empty while the course has checkpoints off."""
    if not course["checkpoints"]:
        return []
    cid = str(course["id"])
    questions = ask_call("ListPractice", ask_pb2.ListPracticeRequest(course_id=cid, with_answers=True)).questions
    found = []
    for lec in store.lectures_of(ctx().pool, cid):
        lid = str(lec["id"])
        mine = [q for q in questions if q.lecture_id == lid]
        if not mine:
            continue
        for c in pick(store.chapters(ctx().pool, lid), mine, lid):
            found.append({"lecture_id": lid, "lecture_number": lec["number"], "lecture_title": lec["title"],
                          "chapter_index": c.chapter_index, "chapter_title": c.chapter_title, "at_s": c.at_s,
                          "question_id": c.question.id, "question": c.question.question,
                          "answered": c.question.checkpoint_attempts, "wrong": c.question.checkpoint_wrong})
    return found
