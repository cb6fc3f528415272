"""Notes pinned to moments: a signed-in person's private notes on a lecture, at a second of it
(``t_s``), listed in time order, edited, deleted, and exported as Markdown for a lecture or a whole
course (``notes.py``; SQL in ``notes_store.py``).

Notes are private to their author, whatever the role: every route needs a signed-in person (401
``unauthorized`` first, for a visitor), reads and writes only that person's notes, and answers 404
``not_found`` for a note that is another's, exactly as for one that does not exist, so nothing says
whether it does (an instructor of the course and an admin included). A lecture or course the caller
may not see is a 404 as everywhere (``access.lecture_row``). Writes (add, edit, delete) count
against ``LC_NOTE_LIMIT`` an hour per person and Markdown exports against ``LC_NOTES_EXPORT_LIMIT`` (429
``rate_limited`` beyond, admins not limited: a hostile pass's eight exports of 300 long notes at once held every
other request of the gateway half a second); an
account keeps at most ``LC_NOTES_PER_USER`` notes (409 ``too_many_notes``). Cookie writes need
``X-CSRF-Token`` as every other.
"""

from __future__ import annotations

import uuid

from flask import Blueprint, Response, jsonify

from .. import limits, notes, notes_store, schemas
from ..access import a_uuid, course_row, lecture_row, limited, person, require, unlimited, viewer
from ..caption_export import download_name
from ..context import ctx
from ..contract import accepts, returns
from ..errors import ApiError, not_found

bp = Blueprint("notes", __name__)
MARKDOWN = "text/markdown; charset=utf-8"


def _author() -> str:
    """The signed-in caller's address (lower-case), whose notes a request reaches; 401 for a visitor."""
    return require("student", "instructor", "admin").email.lower()


def _count_export() -> None:
    """Counts one Markdown export of the caller against ``LC_NOTES_EXPORT_LIMIT`` an hour (429 beyond; admins not counted)."""
    if not unlimited():
        limited([(f"notes-export:{person()}", limits.HOUR_S, ctx().settings.notes_export_limit)], "note exports this hour")


def _count_write() -> None:
    """Counts one note write of the caller against ``LC_NOTE_LIMIT`` an hour (429 beyond; admins not counted)."""
    if not unlimited():
        limited([(f"note:{person()}", limits.HOUR_S, ctx().settings.note_limit)], "note changes this hour")


def _within(t_s: float, duration_s: float | None) -> float:
    """``t_s`` when it lies inside the lecture (0 .. its duration, when known), -0.0 as 0.0 (IEEE 754:
    -0.0 + 0.0 is 0.0); 400 ``invalid_t_s`` otherwise."""
    if duration_s is not None and t_s > duration_s:
        raise ApiError(400, "invalid_t_s", f"'t_s' must be within the lecture (at most {duration_s:g} s).",
                       extra={"field": "t_s"})
    return t_s + 0.0


def _own_note(note_id: str, email: str) -> dict:
    """The caller's note, or 404 "Unknown note." (unknown, another's, or on a lecture the caller may no
    longer see, e.g. of a course made private: the same answer, and nothing of the lecture told)."""
    row = notes_store.note(ctx().pool, a_uuid(note_id, "note"), email)
    if row is None:
        raise not_found("note")
    try:
        lecture_row(str(row["lecture_id"]))
    except ApiError as e:
        if e.status != 404:
            raise
        raise not_found("note") from None
    return row


def _markdown(body: str, name: str) -> Response:
    return Response(body, content_type=MARKDOWN, headers={"Content-Disposition": f'attachment; filename="{name}"'})


@bp.get("/api/lectures/<lecture_id>/notes")
@returns(notes.NoteList)
def lecture_notes(lecture_id: str):
    """The caller's notes of the lecture in time order (signed in; only one's own)."""
    email = _author()
    lid = str(lecture_row(lecture_id)["id"])
    return {"lecture_id": lid, "notes": [notes.note_json(r) for r in notes_store.of_lecture(ctx().pool, email, lid)]}


@bp.post("/api/lectures/<lecture_id>/notes")
@accepts(schemas.NoteCreate)
@returns(notes.Note, 201)
def add_note(lecture_id: str, body: schemas.NoteCreate):
    """Adds a note at ``t_s`` seconds of the lecture (0 .. its duration: 400 ``invalid_t_s`` past
    it); 409 ``too_many_notes`` at ``LC_NOTES_PER_USER`` notes on the courses the caller can see."""
    _author()
    lecture = lecture_row(lecture_id)
    t_s = _within(body.t_s, lecture["duration_s"])
    _count_write()
    cap = ctx().settings.notes_per_user
    row = notes_store.add(ctx().pool, str(uuid.uuid4()), viewer(), str(lecture["id"]), t_s, body.text, cap)
    if row is None:
        raise ApiError(409, "too_many_notes", f"You keep {cap} notes on the courses you can see, the most an account "
                       "may; delete some first.")
    return jsonify(notes.note_json(row)), 201


@bp.patch("/api/notes/<note_id>")
@accepts(schemas.NoteUpdate)
@returns(notes.Note)
def edit_note(note_id: str, body: schemas.NoteUpdate):
    """Changes the text and/or moment of one's own note (404 for another's)."""
    email = _author()
    row = _own_note(note_id, email)
    t_s = row["t_s"] if body.t_s is None else _within(body.t_s, row["duration_s"])
    _count_write()
    done = notes_store.update(ctx().pool, str(row["id"]), email, body.text or row["text"], t_s)
    if done is None:
        raise not_found("note")
    return notes.note_json(done)


@bp.delete("/api/notes/<note_id>")
@returns(None, 204, media="")
def delete_note(note_id: str):
    """Deletes one's own note → 204 (404 for another's)."""
    email = _author()
    row = _own_note(note_id, email)
    _count_write()
    if not notes_store.delete(ctx().pool, str(row["id"]), email):
        raise not_found("note")
    return Response(status=204)


@bp.get("/api/lectures/<lecture_id>/notes.md")
@returns(None, 200, media="text/markdown", description="Markdown: each note a link to its moment on the page")
def lecture_notes_markdown(lecture_id: str) -> Response:
    """The caller's notes of the lecture as Markdown (an attachment): a list item per note whose
    time links to ``/courses/{course_id}?lecture={lecture_id}&t={seconds}``."""
    email = _author()
    lecture = lecture_row(lecture_id)
    _count_export()
    rows = notes_store.of_lecture(ctx().pool, email, str(lecture["id"]))
    title = f"Notes: L{lecture['number']} · {lecture['title']}"
    body = notes.markdown(title, rows, ctx().settings.public_url.rstrip("/"))
    return _markdown(body, "notes-" + download_name(lecture["number"], lecture["title"], "md"))


@bp.get("/api/courses/<course_id>/notes.md")
@returns(None, 200, media="text/markdown", description="Markdown: a section per lecture, each note a link to its moment")
def course_notes_markdown(course_id: str) -> Response:
    """The caller's notes of every lecture of the course as Markdown (an attachment), a section per
    lecture by number, each note's time a link to its moment on the page."""
    email = _author()
    course = course_row(course_id)
    _count_export()
    rows = notes_store.of_course(ctx().pool, email, str(course["id"]))
    body = notes.markdown(f"Notes: {course['title']}", rows, ctx().settings.public_url.rstrip("/"))
    return _markdown(body, "notes-" + download_name(None, course["title"], "md"))
