"""Courses and their members: create (instructors, admins), list, read, rename / change
visibility, assessment mode or checkpoints, delete (through ingest: media, rows and search points), and the
members who may see a private course."""

from __future__ import annotations

import uuid

from flask import Blueprint, Response, jsonify, request

from .. import accounts, ingest_client, responses as out, schemas, store
from ..access import course_row, may_manage, require, viewer
from ..context import ctx
from ..contract import accepts, query, returns
from ..errors import ApiError

bp = Blueprint("courses", __name__)


def lecture_json(r: dict) -> dict:
    """A ``lectures`` row as listed (:class:`responses.LectureItem`)."""
    return {"id": str(r["id"]), "number": r["number"], "title": r["title"], "duration_s": r["duration_s"],
            "status": r["status"], "stage": r["stage"], "progress": r["progress"], "error": r["error"]}


@bp.post("/api/courses")
@accepts(schemas.CourseCreate)
@returns(out.CourseCreated, 201)
def create_course(body: schemas.CourseCreate):
    """Creates a course owned by the caller (instructor or admin)."""
    who = require("instructor", "admin")
    cid = str(uuid.uuid4())
    store.create_course(ctx().pool, cid, body.title, who.email, body.visibility)
    return jsonify({"id": cid, "title": body.title, "visibility": body.visibility}), 201


@bp.get("/api/courses")
@query(mine="1 or true: only the courses the caller may manage")
@returns(out.CourseList)
def list_courses():
    """The courses the caller may see, oldest first."""
    mine = request.args.get("mine") in ("1", "true")
    rows = store.visible_courses(ctx().pool, viewer())
    found = [{"id": str(r["id"]), "title": r["title"], "lecture_count": r["lecture_count"],
              "visibility": r["visibility"], "can_manage": may_manage(r)} for r in rows]
    return {"courses": [c for c in found if c["can_manage"]] if mine else found}


@bp.get("/api/courses/<course_id>")
@returns(out.CourseDetail)
def get_course(course_id: str):
    """A course with its lectures by number."""
    c = course_row(course_id)
    rows = store.lectures_of(ctx().pool, c["id"])
    return {"id": str(c["id"]), "title": c["title"], "visibility": c["visibility"], "can_manage": may_manage(c),
            "assessment_mode": c["assessment_mode"], "checkpoints": c["checkpoints"], "lectures": [lecture_json(r) for r in rows]}


@bp.patch("/api/courses/<course_id>")
@accepts(schemas.CourseUpdate)
@returns(out.CourseUpdated)
def update_course(course_id: str, body: schemas.CourseUpdate):
    """Changes the fields sent (owner or admin)."""
    c = course_row(course_id, manage=True)
    title = c["title"] if body.title is None else body.title
    visibility = body.visibility or c["visibility"]
    assessment = c["assessment_mode"] if body.assessment_mode is None else body.assessment_mode
    checkpoints = c["checkpoints"] if body.checkpoints is None else body.checkpoints
    store.update_course(ctx().pool, c["id"], title, visibility, assessment, checkpoints)
    return {"id": str(c["id"]), "title": title, "visibility": visibility, "assessment_mode": assessment,
            "checkpoints": checkpoints}


@bp.delete("/api/courses/<course_id>")
@returns(None, 204, media="")
def delete_course(course_id: str):
    """Deletes the course with its lectures, media and search points (owner or admin): ingest removes
    the lectures, media and uploads, then the course row goes (and by cascade its members, answers and
    notes); 502 ``delete_failed`` when ingest could not (the course stays, with what is left of it)."""
    cid = course_row(course_id, manage=True)["id"]
    done = ingest_client.delete(f"/v1/courses/{cid}", "course")
    store.delete_course(ctx().pool, cid)
    return done


@bp.post("/api/courses/<course_id>/members")
@accepts(schemas.MemberAdd)
@returns(None, 204, media="")
def add_member(course_id: str, body: schemas.MemberAdd):
    """Lets ``email`` see the (private) course (owner or admin)."""
    c = course_row(course_id, manage=True)
    email = accounts.normal_email(body.email)
    if email is None:
        raise ApiError(400, "invalid_email", "'email' must be an email address.")
    store.add_member(ctx().pool, c["id"], email)
    return Response(status=204)


@bp.get("/api/courses/<course_id>/members")
@returns(out.Members)
def list_members(course_id: str):
    """The course's members (owner or admin)."""
    c = course_row(course_id, manage=True)
    return {"members": store.members(ctx().pool, c["id"])}


@bp.delete("/api/courses/<course_id>/members/<email>")
@returns(None, 204, media="")
def remove_member(course_id: str, email: str):
    """Removes a member (owner or admin)."""
    c = course_row(course_id, manage=True)
    address = accounts.normal_email(email)
    if address is None:
        raise ApiError(400, "invalid_email", "The member must be an email address.")
    store.remove_member(ctx().pool, c["id"], address)
    return Response(status=204)
