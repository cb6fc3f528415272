"""Notes pinned to moments on the real stack (issue 33, item 3): a signed-in student adds notes at
moments of a lecture (browser session with its CSRF token), lists them in time order, edits,
deletes and exports them as Markdown with links that open the page at each moment. Notes are
private: another student, the course's instructor and an admin get a 404 for someone else's note
on every route and never see it listed or exported; a visitor gets a 401 everywhere. A note keeps
to its lecture through a renumber and goes with its lecture, course or account. Limits: empty, too
long, a moment outside the lecture (400 naming the field), the per-account cap (409) and the
hourly write limit (429), on a second gateway with low limits."""

from __future__ import annotations

import re

import pytest
import requests

from services.gateway.notes import Note, NoteList
from web_helpers import Gateway, mint, sign_in, upload_captions

pytestmark = pytest.mark.slow


def _lecture(stack, course: str, headers: dict, number: int = 1, title: str = "Heaps") -> str:
    r = upload_captions(stack.base, course, headers=headers, number=number, title=title)
    assert r.status_code == 202, r.text
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=120)["status"] == "ready"
    return lecture


def _course(stack, headers: dict, title: str) -> str:
    r = requests.post(f"{stack.base}/api/courses", json={"title": title},
                      headers=headers, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()["id"]


@pytest.fixture(scope="module")
def world(stack, smtp_sink):
    """A public course of an instructor with two captions lectures, and the people of the matrix."""
    owner = mint(stack, "instructor", "notes-owner@example.edu")
    course = _course(stack, owner, "Notes course")
    l1 = _lecture(stack, course, owner, 1, "Heaps")
    l2 = _lecture(stack, course, owner, 2, "Heaps again")
    return {"course": course, "l1": l1, "l2": l2, "owner": owner,
            "student": sign_in(stack.base, smtp_sink, "notes-student@example.edu"),
            "other": mint(stack, "student", "notes-other@example.edu"),
            "admin_session": sign_in(stack.base, smtp_sink, "admin@example.edu"), "admin": stack.admin}


def _call(who, method: str, url: str, **kw) -> requests.Response:
    """``who`` is a signed-in requests.Session, a headers dict (bearer token) or None (a visitor)."""
    if isinstance(who, requests.Session):
        return who.request(method, url, timeout=30, **kw)
    return requests.request(method, url, headers=who or {}, timeout=30, **kw)


def _code(r: requests.Response) -> tuple[int, str | None]:
    return r.status_code, (r.json()["error"]["code"] if r.status_code >= 400 else None)


def _add(stack, who, lecture: str, text: str, t_s: float) -> dict:
    r = _call(who, "POST", f"{stack.base}/api/lectures/{lecture}/notes", json={"text": text, "t_s": t_s})
    assert r.status_code == 201, r.text
    return Note.model_validate(r.json()).model_dump(mode="json")


def test_a_student_adds_lists_edits_deletes_and_exports_notes(stack, world):
    base, me, course, l1, l2 = stack.base, world["student"], world["course"], world["l1"], world["l2"]
    # a cookie write without the session's CSRF token is refused
    r = requests.post(f"{base}/api/lectures/{l1}/notes", json={"text": "x", "t_s": 1},
                      cookies=me.cookies, timeout=10)
    assert _code(r) == (403, "csrf_failed")
    late = _add(stack, me, l1, "The root holds the largest key.", 6.5)
    early = _add(stack, me, l1, "Heap property:\n\nparent >= children", 1)
    middle = _add(stack, me, l1, "  Ask about   heapify  ", 3.25)
    assert early["text"] == "Heap property:\n\nparent >= children" and middle["text"] == "Ask about   heapify"
    assert early["label"] == "L1 · 0:01" and early["lecture_number"] == 1 and early["course_id"] == course
    assert late["link"] == f"/courses/{course}?lecture={l1}&t=6.5"
    listed = NoteList.model_validate(_call(me, "GET", f"{base}/api/lectures/{l1}/notes").json()).model_dump(mode="json")
    assert [n["id"] for n in listed["notes"]] == [early["id"], middle["id"], late["id"]]  # time order
    # edit the text, then the moment (which reorders)
    r = _call(me, "PATCH", f"{base}/api/notes/{middle['id']}", json={"text": "Heapify is O(n)."})
    assert r.status_code == 200 and r.json()["text"] == "Heapify is O(n)." and r.json()["t_s"] == 3.25
    r = _call(me, "PATCH", f"{base}/api/notes/{middle['id']}", json={"t_s": 8})
    assert r.status_code == 200 and r.json()["label"] == "L1 · 0:08" and r.json()["text"] == "Heapify is O(n)."
    assert [n["t_s"] for n in _call(me, "GET", f"{base}/api/lectures/{l1}/notes").json()["notes"]] == [1, 6.5, 8]
    other_lecture = _add(stack, me, l2, "Second lecture's note", 2)
    # the lecture's export: Markdown, each moment a link that opens the page there
    r = _call(me, "GET", f"{base}/api/lectures/{l1}/notes.md")
    assert r.status_code == 200 and r.headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert r.headers["Content-Disposition"] == 'attachment; filename="notes-L1-Heaps.md"'
    md = r.text
    assert md.startswith("# Notes: L1 · Heaps\n") and "Second lecture's note" not in md
    links = re.findall(r"^- \[(\d+:\d\d)\]\((\S+)\) (.*)$", md, re.M)
    assert [(t, text) for t, _, text in links] == [("0:01", "Heap property:"), ("0:06", "The root holds the largest key."),
                                                   ("0:08", "Heapify is O(n).")]
    assert links[1][1].endswith(f"/courses/{course}?lecture={l1}&t=6.5")
    assert "\n  parent >= children\n" in md  # a note's further lines stay in its list item
    # the course's export: a section per lecture by number
    r = _call(me, "GET", f"{base}/api/courses/{course}/notes.md")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/markdown")
    assert r.text.index("## L1 · Heaps") < r.text.index("## L2 · Heaps again") < r.text.index("Second lecture's note")
    assert f"?lecture={l2}&t=2)" in r.text
    # delete: gone from the list and the export; deleting again is a 404
    assert _call(me, "DELETE", f"{base}/api/notes/{other_lecture['id']}").status_code == 204
    assert _call(me, "GET", f"{base}/api/lectures/{l2}/notes").json()["notes"] == []
    assert "Second lecture's note" not in _call(me, "GET", f"{base}/api/courses/{course}/notes.md").text
    assert _code(_call(me, "DELETE", f"{base}/api/notes/{other_lecture['id']}")) == (404, "not_found")


def test_notes_are_private_on_every_route(stack, world):
    base, course, l1 = stack.base, world["course"], world["l1"]
    mine = _add(stack, world["student"], l1, "A private thought about heaps", 2)
    note = f"{base}/api/notes/{mine['id']}"
    for who in ("other", "owner", "admin", "admin_session"):
        person = world[who]
        assert mine["id"] not in [n["id"] for n in _call(person, "GET", f"{base}/api/lectures/{l1}/notes").json()["notes"]]
        for method, body in (("PATCH", {"text": "changed"}), ("DELETE", None)):
            r = _call(person, method, note, json=body)
            assert _code(r) == (404, "not_found"), (who, method, r.text)
            assert r.json()["error"]["message"] == "Unknown note."  # as for a note that does not exist
        for path in (f"/api/lectures/{l1}/notes.md", f"/api/courses/{course}/notes.md"):
            r = _call(person, "GET", base + path)
            assert r.status_code == 200 and "private thought" not in r.text, (who, path)
    missing = "00000000-0000-4000-8000-000000000000"
    assert _code(_call(world["other"], "PATCH", f"{base}/api/notes/{missing}", json={"text": "x"})) == (404, "not_found")
    # a visitor: 401 on every route, before anything is looked up
    routes = [("GET", f"/api/lectures/{l1}/notes", None), ("POST", f"/api/lectures/{l1}/notes", {"text": "x", "t_s": 1}),
              ("PATCH", f"/api/notes/{mine['id']}", {"text": "x"}), ("DELETE", f"/api/notes/{mine['id']}", None),
              ("GET", f"/api/lectures/{l1}/notes.md", None), ("GET", f"/api/courses/{course}/notes.md", None)]
    for method, path, body in routes:
        assert _code(_call(None, method, base + path, json=body)) == (401, "unauthorized"), (method, path)
    # the note is untouched
    got = _call(world["student"], "GET", f"{base}/api/lectures/{l1}/notes").json()["notes"]
    assert [n["text"] for n in got if n["id"] == mine["id"]] == ["A private thought about heaps"]
    # a lecture of a private course is a 404 to a non-member on every notes route, as everywhere
    private = _course(stack, world["owner"], "Private notes course")
    lecture = _lecture(stack, private, world["owner"])
    assert requests.patch(f"{base}/api/courses/{private}", json={"visibility": "private"}, headers=world["owner"],
                          timeout=10).json()["visibility"] == "private"
    for method, path, body in routes[:2] + routes[4:5] + [("GET", f"/api/courses/{private}/notes.md", None)]:
        path = path.replace(l1, lecture)
        assert _code(_call(world["other"], method, base + path, json=body)) == (404, "not_found"), (method, path)


def test_bad_notes_are_refused_with_the_field_named(stack, world):
    base, me, l1 = stack.base, world["student"], world["l1"]
    duration = requests.get(f"{base}/api/lectures/{l1}", timeout=10).json()["duration_s"]
    assert duration and duration < 60
    for body, code, field in (({"text": "", "t_s": 1}, "invalid_text", "text"),
                              ({"text": " \n\u200b ", "t_s": 1}, "invalid_text", "text"),
                              ({"text": "x" * 4001, "t_s": 1}, "invalid_text", "text"),
                              ({"text": "x", "t_s": -1}, "invalid_t_s", "t_s"),
                              ({"text": "x", "t_s": duration + 1}, "invalid_t_s", "t_s"),
                              ({"text": "x", "t_s": "5"}, "invalid_t_s", "t_s"),
                              ({"text": "x"}, "invalid_t_s", "t_s"),
                              ({"text": "x", "t_s": 1, "lecture": 2}, "invalid_body", "lecture")):
        r = _call(me, "POST", f"{base}/api/lectures/{l1}/notes", json=body)
        assert _code(r) == (400, code), (body, r.text)
        assert r.json()["error"]["field"] == field and r.json()["error"]["message"]
    assert len(_add(stack, me, l1, "y" * 4000, duration)["text"]) == 4000  # the bounds themselves are taken
    zero = _add(stack, me, l1, "at the start", -0.0)  # JSON's -0.0 is the start, not a negative moment
    assert str(zero["t_s"]) == "0.0" and zero["link"].endswith("&t=0"), zero
    note = _add(stack, me, l1, "to edit", 1)
    r = _call(me, "PATCH", f"{base}/api/notes/{note['id']}", json={"t_s": duration + 5})
    assert _code(r) == (400, "invalid_t_s")
    assert _code(_call(me, "PATCH", f"{base}/api/notes/{note['id']}", json={"text": ""})) == (400, "invalid_text")
    assert _code(_call(me, "PATCH", f"{base}/api/notes/not-a-uuid", json={"text": "x"})) == (404, "not_found")


def test_the_account_cap_and_the_hourly_write_limit(stack, world):
    gw = Gateway(stack, {"LC_NOTES_PER_USER": "3", "LC_NOTE_LIMIT": "6", "LC_NOTES_EXPORT_LIMIT": "2",
                         "LC_SECRET_KEY": "notes-limits-0123456789"})
    try:
        who, l1 = mint(stack, "student", "notes-capped@example.edu"), world["l1"]
        ids = []
        for i in range(3):
            r = requests.post(f"{gw.base}/api/lectures/{l1}/notes", json={"text": f"n{i}", "t_s": i}, headers=who, timeout=10)
            assert r.status_code == 201, r.text
            ids.append(r.json()["id"])
        r = requests.post(f"{gw.base}/api/lectures/{l1}/notes", json={"text": "n3", "t_s": 3}, headers=who, timeout=10)
        assert _code(r) == (409, "too_many_notes")
        assert requests.patch(f"{gw.base}/api/notes/{ids[0]}", json={"text": "e"}, headers=who, timeout=10).status_code == 200
        assert requests.delete(f"{gw.base}/api/notes/{ids[1]}", headers=who, timeout=10).status_code == 204
        r = requests.post(f"{gw.base}/api/lectures/{l1}/notes", json={"text": "n4", "t_s": 4}, headers=who, timeout=10)
        assert _code(r) == (429, "rate_limited") and int(r.headers["Retry-After"]) > 0  # the 7th write this hour
        # reading is not limited, and the refused writes left the notes as they were
        got = requests.get(f"{gw.base}/api/lectures/{l1}/notes", headers=who, timeout=10).json()["notes"]
        assert [n["text"] for n in got] == ["e", "n2"]
        # exports count on their own (a hostile pass's eight at once slowed every request of the gateway)
        exports = [requests.get(f"{gw.base}/api/lectures/{l1}/notes.md", headers=who, timeout=10) for _ in range(3)]
        assert [r.status_code for r in exports[:2]] == [200, 200] and "n2" in exports[0].text
        assert _code(exports[2]) == (429, "rate_limited")
    finally:
        gw.close()


def test_notes_one_can_no_longer_reach_do_not_fill_the_account_cap(stack, world):
    """A member's notes on a private course stay when the member is removed (listed and deleted by no
    one: 404), and don't count toward ``LC_NOTES_PER_USER``: the 409's advice ("delete some first")
    could not be followed. They count again when the member is back. (Found by a hostile-input probe.)"""
    owner = world["owner"]
    course = _course(stack, owner, "Notes cap, private")
    lecture = _lecture(stack, course, owner)
    assert requests.patch(f"{stack.base}/api/courses/{course}", json={"visibility": "private"}, headers=owner,
                          timeout=10).status_code == 200
    email = "notes-removed@example.edu"
    members = f"{stack.base}/api/courses/{course}/members"
    assert requests.post(members, json={"email": email}, headers=owner, timeout=10).status_code == 204
    me = mint(stack, "student", email)
    gw = Gateway(stack, {"LC_NOTES_PER_USER": "2", "LC_SECRET_KEY": "notes-cap-private-0123456789"})
    try:
        def add(lid: str, text: str) -> requests.Response:
            return requests.post(f"{gw.base}/api/lectures/{lid}/notes", json={"text": text, "t_s": 1}, headers=me,
                                 timeout=10)

        hidden = [add(lecture, f"hidden {i}") for i in range(2)]
        assert [r.status_code for r in hidden] == [201, 201], [r.text for r in hidden]
        assert _code(add(world["l1"], "one too many")) == (409, "too_many_notes")
        assert requests.delete(f"{members}/{email}", headers=owner, timeout=10).status_code == 204
        assert requests.get(f"{gw.base}/api/lectures/{lecture}/notes", headers=me, timeout=10).status_code == 404
        visible = add(world["l1"], "on a course I see")
        assert visible.status_code == 201, visible.text
        # back in the course: its two notes are there again and count again
        assert requests.post(members, json={"email": email}, headers=owner, timeout=10).status_code == 204
        got = requests.get(f"{gw.base}/api/lectures/{lecture}/notes", headers=me, timeout=10).json()["notes"]
        assert sorted(n["text"] for n in got) == ["hidden 0", "hidden 1"]
        assert _code(add(world["l1"], "over again")) == (409, "too_many_notes")
    finally:
        gw.close()


def test_a_note_survives_a_renumber_and_goes_with_its_lecture_course_or_account(stack, world, smtp_sink):
    base, owner = stack.base, world["owner"]
    course = _course(stack, owner, "Notes lifecycle")
    first, second = _lecture(stack, course, owner, 1), _lecture(stack, course, owner, 2, "Sorting")
    me = mint(stack, "student", "notes-life@example.edu")
    kept = _add(stack, me, first, "survives the renumber", 4)
    _add(stack, me, second, "goes with its lecture", 2)
    r = requests.patch(f"{base}/api/lectures/{first}", json={"number": 7}, headers=owner, timeout=10)
    assert r.status_code == 200 and r.json()["number"] == 7
    got = requests.get(f"{base}/api/lectures/{first}/notes", headers=me, timeout=10).json()["notes"]
    assert [(n["id"], n["label"], n["lecture_number"]) for n in got] == [(kept["id"], "L7 · 0:04", 7)]
    assert "## L7 · Heaps" in requests.get(f"{base}/api/courses/{course}/notes.md", headers=me, timeout=10).text

    def count(sql: str, *args) -> int:
        with stack.db() as c:
            return c.execute(sql, args).fetchone()[0]
    assert requests.delete(f"{base}/api/lectures/{second}", headers=owner, timeout=30).status_code == 204
    assert count("SELECT count(*) FROM notes WHERE lecture_id=%s", second) == 0
    assert count("SELECT count(*) FROM notes WHERE email=%s", "notes-life@example.edu") == 1
    assert requests.delete(f"{base}/api/courses/{course}", headers=owner, timeout=30).status_code == 204
    assert count("SELECT count(*) FROM notes WHERE email=%s", "notes-life@example.edu") == 0
    # an account's notes go with it (its users row)
    session = sign_in(base, smtp_sink, "notes-leaving@example.edu")
    _add(stack, session, world["l1"], "mine alone", 1)
    assert count("SELECT count(*) FROM notes WHERE email=%s", "notes-leaving@example.edu") == 1
    with stack.db() as c:
        c.execute("DELETE FROM users WHERE email=%s", ("notes-leaving@example.edu",))
    assert count("SELECT count(*) FROM notes WHERE email=%s", "notes-leaving@example.edu") == 0


def test_a_note_on_a_course_one_can_no_longer_see_is_unknown(stack, world):
    """A course made private after a student's note: the note is a 404 "Unknown note." on every
    route, telling nothing of the lecture (its number, its length), until the course opens again."""
    base = stack.base
    course = _course(stack, world["owner"], "Notes course closing")
    lecture = _lecture(stack, course, world["owner"])
    mine = _add(stack, world["other"], lecture, "Before it closed", 1)
    assert requests.patch(f"{base}/api/courses/{course}", json={"visibility": "private"}, headers=world["owner"],
                          timeout=10).json()["visibility"] == "private"
    for method, body in [("PATCH", {"text": "still here"}), ("PATCH", {"t_s": 999}), ("DELETE", None)]:
        r = _call(world["other"], method, f"{base}/api/notes/{mine['id']}", json=body)
        assert _code(r) == (404, "not_found") and "Unknown note" in r.text and "lecture" not in r.text, (method, r.text)
    assert requests.patch(f"{base}/api/courses/{course}", json={"visibility": "public"}, headers=world["owner"],
                          timeout=10).json()["visibility"] == "public"
    r = _call(world["other"], "PATCH", f"{base}/api/notes/{mine['id']}", json={"text": "open again"})
    assert r.status_code == 200 and r.json()["text"] == "open again", r.text
