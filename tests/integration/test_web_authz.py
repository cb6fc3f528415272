"""Authorization on the server, across roles: who may upload, rename, delete, retry; private
courses are invisible (404) to non-members; deleting removes rows and media; the lecture's
event stream reports the stages until ready."""

from __future__ import annotations

import json
import uuid

import pytest
import requests

from web_helpers import mint, sign_in, upload_captions

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def people(stack, smtp_sink):
    owner = mint(stack, "instructor", "owner@example.edu")
    return {"owner": owner, "other": mint(stack, "instructor", "other@example.edu"),
            "student": mint(stack, "student", "stu@example.edu"), "admin": stack.admin,
            "student_session": sign_in(stack.base, smtp_sink, "web-student@example.edu")}


def _course(stack, headers, title, visibility="public") -> str:
    r = requests.post(f"{stack.base}/api/courses", json={"title": title, "visibility": visibility},
                      headers=headers, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _code(r):
    return r.status_code, r.json()["error"]["code"] if r.status_code >= 400 else None


def test_only_the_owner_or_an_admin_manages_a_course(stack, people):
    base = stack.base
    course = _course(stack, people["owner"], "Owned course")
    # uploads
    assert _code(upload_captions(base, course)) == (401, "unauthorized")
    assert _code(upload_captions(base, course, headers=people["student"])) == (403, "forbidden")
    assert _code(upload_captions(base, course, session=people["student_session"])) == (403, "forbidden")
    assert _code(upload_captions(base, course, headers=people["other"])) == (403, "forbidden")
    r = upload_captions(base, course, headers=people["owner"])
    assert r.status_code == 202, r.text
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=90)["status"] == "ready"
    # rename course and lecture
    for who in ("student", "other"):
        assert requests.patch(f"{base}/api/courses/{course}", json={"title": "x"}, headers=people[who],
                              timeout=10).status_code == 403
        assert requests.patch(f"{base}/api/lectures/{lecture}", json={"title": "x"}, headers=people[who],
                              timeout=10).status_code == 403
        assert requests.delete(f"{base}/api/lectures/{lecture}", headers=people[who], timeout=10).status_code == 403
        assert requests.delete(f"{base}/api/courses/{course}", headers=people[who], timeout=10).status_code == 403
        assert requests.post(f"{base}/api/lectures/{lecture}/retry", headers=people[who], timeout=10).status_code == 403
    assert requests.patch(f"{base}/api/courses/{course}", json={"title": "x"}, timeout=10).status_code == 401
    r = requests.patch(f"{base}/api/courses/{course}", json={"title": "Renamed course"}, headers=people["owner"], timeout=10)
    assert r.status_code == 200 and r.json()["title"] == "Renamed course"
    r = requests.patch(f"{base}/api/lectures/{lecture}", json={"title": "Heaps, renamed", "number": 7},
                       headers=people["admin"], timeout=10)
    assert r.status_code == 200 and r.json()["title"] == "Heaps, renamed" and r.json()["number"] == 7
    c = requests.get(f"{base}/api/courses/{course}", headers=people["owner"], timeout=10).json()
    assert c["title"] == "Renamed course" and c["can_manage"] is True
    assert [l["title"] for l in c["lectures"]] == ["Heaps, renamed"]
    assert requests.get(f"{base}/api/courses/{course}", headers=people["other"], timeout=10).json()["can_manage"] is False
    mine = requests.get(f"{base}/api/courses?mine=1", headers=people["other"], timeout=10).json()["courses"]
    assert course not in [x["id"] for x in mine]
    # a retry of a lecture that has not failed is refused
    assert _code(requests.post(f"{base}/api/lectures/{lecture}/retry", headers=people["owner"], timeout=10)) == (409, "not_failed")


def test_delete_removes_rows_media_and_search_results(stack, people):
    base = stack.base
    course = _course(stack, people["owner"], "To be deleted")
    ids = []
    for n in (1, 2):
        r = upload_captions(base, course, headers=people["owner"], number=n)
        assert r.status_code == 202
        ids.append(r.json()["lecture_id"])
    for lid in ids:
        assert stack.wait_ready(lid, timeout_s=90)["status"] == "ready"
    media = stack.settings.media_dir / "lectures"
    assert (media / ids[0]).exists()
    q = {"query": "what sits at the root of a max heap"}
    hits = requests.post(f"{base}/api/courses/{course}/search", json=q, timeout=30).json()["results"]
    assert {h["lecture_id"] for h in hits} == set(ids)
    assert requests.delete(f"{base}/api/lectures/{ids[0]}", headers=people["owner"], timeout=30).status_code == 204
    assert requests.get(f"{base}/api/lectures/{ids[0]}", timeout=10).status_code == 404
    assert not (media / ids[0]).exists()
    with stack.db() as c:
        assert c.execute("SELECT count(*) FROM sentences WHERE lecture_id=%s", (ids[0],)).fetchone()[0] == 0
        assert c.execute("SELECT count(*) FROM segments WHERE lecture_id=%s", (ids[0],)).fetchone()[0] == 0
    hits = requests.post(f"{base}/api/courses/{course}/search", json=q, timeout=30).json()["results"]
    assert hits and {h["lecture_id"] for h in hits} == {ids[1]}  # index points of the deleted lecture are gone
    assert requests.delete(f"{base}/api/courses/{course}", headers=people["owner"], timeout=30).status_code == 204
    assert requests.get(f"{base}/api/courses/{course}", timeout=10).status_code == 404
    assert requests.get(f"{base}/api/lectures/{ids[1]}", timeout=10).status_code == 404
    assert not (media / ids[1]).exists()
    with stack.db() as c:
        assert c.execute("SELECT count(*) FROM lectures WHERE course_id=%s", (course,)).fetchone()[0] == 0


def test_private_course_is_invisible_to_non_members(stack, people, smtp_sink):
    base = stack.base
    course = _course(stack, people["owner"], "Private seminar")
    r = upload_captions(base, course, headers=people["owner"])
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=90)["status"] == "ready"
    assert requests.patch(f"{base}/api/courses/{course}", json={"visibility": "private"}, headers=people["owner"],
                          timeout=10).json()["visibility"] == "private"
    ask = {"question": "What sits at the root of a max heap?"}
    reads = [("GET", f"/api/courses/{course}", None), ("GET", f"/api/lectures/{lecture}", None),
             ("GET", f"/api/lectures/{lecture}/transcript", None), ("GET", f"/api/lectures/{lecture}/video", None),
             ("GET", f"/api/lectures/{lecture}/events", None), ("GET", f"/api/lectures/{lecture}/captions.vtt", None),
             ("GET", f"/api/lectures/{lecture}/captions.srt", None),
             ("POST", f"/api/courses/{course}/search", {"query": "heap"}), ("POST", f"/api/courses/{course}/ask", ask),
             ("PATCH", f"/api/courses/{course}", {"title": "x"}), ("DELETE", f"/api/lectures/{lecture}", None)]
    for who in (None, "student", "other"):
        headers = people[who] if who else {}
        for method, path, body in reads:
            r = requests.request(method, base + path, json=body, headers=headers, timeout=30)
            assert r.status_code == 404, (who, method, path, r.status_code)
            assert r.json()["error"]["code"] == "not_found"
        listed = requests.get(f"{base}/api/courses", headers=headers, timeout=10).json()["courses"]
        assert course not in [c["id"] for c in listed]
    # the owner and an admin see it and can ask; a member added by the owner too
    for headers in (people["owner"], people["admin"]):
        assert requests.get(f"{base}/api/courses/{course}", headers=headers, timeout=10).status_code == 200
        r = requests.post(f"{base}/api/courses/{course}/ask", json=ask, headers=headers, timeout=30)
        assert r.status_code == 200 and r.json()["answer_id"]
    assert requests.post(f"{base}/api/courses/{course}/members", json={"email": "stu@example.edu"},
                         headers=people["owner"], timeout=10).status_code == 204
    assert requests.get(f"{base}/api/courses/{course}", headers=people["student"], timeout=10).status_code == 200
    assert requests.get(f"{base}/api/courses/{course}/members", headers=people["owner"], timeout=10).json() == {
        "members": ["stu@example.edu"]}
    assert requests.get(f"{base}/api/courses/{course}/members", headers=people["student"], timeout=10).status_code == 403
    assert requests.post(f"{base}/api/courses/{course}/members", json={"email": "x@example.edu"},
                         headers=people["student"], timeout=10).status_code == 403
    # feedback on an answer of a private course is as invisible as the course
    answer = requests.post(f"{base}/api/courses/{course}/ask", json=ask, headers=people["owner"], timeout=30).json()
    r = requests.post(f"{base}/api/answers/{answer['answer_id']}/feedback", json={"rating": "up"}, timeout=10)
    assert r.status_code == 404
    # a removed member no longer sees it
    assert requests.delete(f"{base}/api/courses/{course}/members/stu@example.edu", headers=people["owner"],
                           timeout=10).status_code == 204
    assert requests.get(f"{base}/api/courses/{course}", headers=people["student"], timeout=10).status_code == 404
    # made public, everyone sees it
    assert requests.patch(f"{base}/api/courses/{course}", json={"visibility": "public"}, headers=people["owner"],
                          timeout=10).status_code == 200
    assert requests.get(f"{base}/api/courses/{course}", timeout=10).status_code == 200
    assert requests.patch(f"{base}/api/courses/{course}", json={"visibility": "secret"}, headers=people["owner"],
                          timeout=10).status_code == 400


def _events(base: str, lecture_id: str, headers=None, timeout=120) -> list[dict]:
    out = []
    with requests.get(f"{base}/api/lectures/{lecture_id}/events", headers=headers or {}, stream=True,
                      timeout=timeout) as r:
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/event-stream")
        event = None
        for line in r.iter_lines(decode_unicode=True):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event == "status":
                out.append(json.loads(line[5:]))
    return out


def test_events_stream_stages_and_retry_of_a_failed_lecture(stack, people):
    base = stack.base
    course = _course(stack, people["owner"], "Events and retry")
    r = upload_captions(base, course, headers=people["owner"])
    lecture = r.json()["lecture_id"]
    seen = _events(base, lecture)
    assert seen[-1]["status"] == "ready" and seen[-1]["stage"] == "ready" and seen[-1]["progress"] == 1
    assert all(set(s) == {"status", "stage", "progress", "error"} for s in seen)
    # a finished lecture's stream says so once and ends
    assert _events(base, lecture, timeout=10) == [seen[-1]]
    # a failed lecture (here: marked failed by hand) is re-queued through lecture.uploaded and gets ready again
    with stack.db() as c:
        c.execute("UPDATE lectures SET status='failed', stage='failed', error='boom', progress=0 WHERE id=%s", (lecture,))
    assert _events(base, lecture, timeout=10)[-1]["status"] == "failed"
    r = requests.post(f"{base}/api/lectures/{lecture}/retry", headers=people["owner"], timeout=30)
    assert r.status_code == 202 and r.json() == {"lecture_id": lecture, "status": "queued"}
    seen = _events(base, lecture)
    assert seen[-1]["status"] == "ready" and seen[-1]["error"] is None
    with stack.db() as c:
        assert c.execute("SELECT generation FROM lectures WHERE id=%s", (lecture,)).fetchone()[0] == 1
        assert c.execute("SELECT count(*) FROM sentences WHERE lecture_id=%s", (lecture,)).fetchone()[0] == 2
    assert requests.post(f"{base}/api/lectures/{uuid.uuid4()}/retry", headers=people["owner"], timeout=10).status_code == 404
