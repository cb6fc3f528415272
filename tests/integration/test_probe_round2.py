"""Hostile input against this round's surface, on the real stack: captions export (private
courses, not-ready and deleted lectures, odd ids, Content-Disposition and cue injection through
titles and transcript text), the practice routes over ask's gRPC (wrong types, unknown fields,
huge numbers, other courses' question ids, ask down), the OpenAPI document (nothing private) and
ingest's internal ``/v1/uploads/{id}/course`` (not reachable through the gateway). Every answer
is checked for no 5xx and no leak."""

from __future__ import annotations

import json
import re
import time
import uuid

import pytest
import requests
import webvtt

from services.gateway.caption_export import Line, build_cues
from web_helpers import Gateway, mint

from .test_captions_export import ffmpeg_cues
from .test_quiz_api import sorting_vtt

pytestmark = pytest.mark.slow

ODD_IDS = ["not-a-uuid", "x" * 3000, "%E6%9D%B1%E4%BA%AC%F0%9F%98%80", "..%2F..%2Fetc%2Fpasswd", "%00",
           "%2e%2e", "00000000-0000-0000-0000-000000000000", "{" + str(uuid.uuid4()) + "}",
           "urn:uuid:" + str(uuid.uuid4()), "9" * 40, "-1", "' OR 1=1 --"]
DISPOSITION = re.compile(r'attachment; filename="(L\d+-)?[A-Za-z0-9._-]{1,90}\.(vtt|srt)"')


def _no_5xx(r: requests.Response, what) -> requests.Response:
    assert r.status_code < 500, (what, r.status_code, r.text[:500])
    if r.status_code >= 400 and r.headers.get("Content-Type", "").startswith("application/json"):
        assert set(r.json()) == {"error"}, r.text
    return r


def _wait_ready(stack, lecture_id: str, headers: dict, timeout_s: float = 180) -> str:
    """The lecture's status once ready or failed, read as ``headers`` (a private course's lecture)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        status = requests.get(f"{stack.base}/api/lectures/{lecture_id}", headers=headers, timeout=10).json()["status"]
        if status in ("ready", "failed"):
            return status
        time.sleep(0.3)
    raise TimeoutError(lecture_id)


def _captions_lecture(stack, headers, *, private: bool, title: str) -> dict:
    base = stack.base
    r = requests.post(f"{base}/api/courses", json={"title": title, "visibility": "private" if private else "public"},
                      headers=headers, timeout=10)
    assert r.status_code == 201, r.text
    course = r.json()["id"]
    r = requests.post(f"{base}/api/courses/{course}/lectures", headers=headers,
                      files={"captions": ("sorting.vtt", sorting_vtt().encode(), "text/vtt")},
                      data={"title": "Sorting", "number": "1"}, timeout=60)
    assert r.status_code == 202, r.text
    lecture = r.json()["lecture_id"]
    assert _wait_ready(stack, lecture, headers) == "ready"
    r = requests.post(f"{base}/api/lectures/{lecture}/quiz/generate", headers=headers, timeout=180)
    assert r.status_code == 201 and r.json()["questions"], r.text
    return {"course": course, "lecture": lecture, "questions": r.json()["questions"]}


@pytest.fixture(scope="module")
def world(stack):
    """Two instructors' courses: a public one of ``owner`` and a private one of ``rival``, each a
    ready captions lecture with a generated set; a student of neither."""
    people = {"owner": mint(stack, "instructor", "probe-owner@example.edu"),
              "rival": mint(stack, "instructor", "probe-rival@example.edu"),
              "student": mint(stack, "student", "probe-student@example.edu"), "anon": {}}
    return {"people": people, "public": _captions_lecture(stack, people["owner"], private=False, title="Probe public"),
            "private": _captions_lecture(stack, people["rival"], private=True, title="Probe private")}


# -- captions ------------------------------------------------------------------------------------
def test_captions_of_a_private_course_are_a_404_to_everyone_but_its_people(stack, world):
    lid, p = world["private"]["lecture"], world["people"]
    for who in ("anon", "student", "owner"):
        for ext in ("vtt", "srt"):
            r = _no_5xx(requests.get(f"{stack.base}/api/lectures/{lid}/captions.{ext}", headers=p[who], timeout=10), who)
            assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", (who, r.text)
            assert "Sorting" not in r.text and "WEBVTT" not in r.text
    for who in (p["rival"], stack.admin):
        assert requests.get(f"{stack.base}/api/lectures/{lid}/captions.vtt", headers=who, timeout=10).status_code == 200


def test_odd_lecture_ids_are_a_404_never_a_5xx(stack, world):
    for odd in ODD_IDS:
        for ext in ("vtt", "srt"):
            r = _no_5xx(requests.get(f"{stack.base}/api/lectures/{odd}/captions.{ext}", headers=world["people"]["owner"],
                                     timeout=10), odd)
            assert r.status_code in (404, 405), (odd, r.status_code, r.text)
            assert "Traceback" not in r.text and "psycopg" not in r.text
    # past the server's request-line limit (4094 bytes): 414 from gunicorn, before any view
    r = _no_5xx(requests.get(f"{stack.base}/api/lectures/{'x' * 5000}/captions.vtt", timeout=10), "long")
    assert r.status_code == 414


def test_a_deleted_lecture_has_no_captions(stack, world):
    owner = world["people"]["owner"]
    r = requests.post(f"{stack.base}/api/courses/{world['public']['course']}/lectures", headers=owner,
                      files={"captions": ("x.vtt", sorting_vtt().encode(), "text/vtt")},
                      data={"title": "Doomed", "number": "7"}, timeout=60)
    assert r.status_code == 202, r.text
    lid = r.json()["lecture_id"]
    # not ready yet (or ready already): never a 5xx
    _no_5xx(requests.get(f"{stack.base}/api/lectures/{lid}/captions.vtt", headers=owner, timeout=10), "fresh")
    assert stack.wait_ready(lid, timeout_s=180)["status"] == "ready"
    assert requests.delete(f"{stack.base}/api/lectures/{lid}", headers=owner, timeout=30).status_code == 204
    for ext in ("vtt", "srt"):
        r = _no_5xx(requests.get(f"{stack.base}/api/lectures/{lid}/captions.{ext}", headers=owner, timeout=10), ext)
        assert r.status_code == 404, r.text


HOSTILE_TITLES = ['a"; filename="evil.exe', 'x\r\nX-Injected: 1\r\n\r\n<html>', "Lécture 東京 😀 naïve",
                  "€" * 3000, "../../etc/passwd", "\u202etxt.exe", "", "   ", "%0d%0aSet-Cookie: a=b", "a\\\"b"]


def test_titles_never_escape_the_content_disposition_header(stack, world):
    lid, owner = world["public"]["lecture"], world["people"]["owner"]
    try:
        for title in HOSTILE_TITLES:
            with stack.db() as c:  # as an older row or another writer could hold it, past the API's cleaning
                c.execute("UPDATE lectures SET title=%s WHERE id=%s", (title, lid))
            for ext in ("vtt", "srt"):
                r = _no_5xx(requests.get(f"{stack.base}/api/lectures/{lid}/captions.{ext}", headers=owner, timeout=10),
                            title)
                assert r.status_code == 200, (title, r.text)
                cd = r.headers["Content-Disposition"]
                assert DISPOSITION.fullmatch(cd), (title, cd)
                assert "X-Injected" not in r.headers and "Set-Cookie" not in r.headers
                # a file holding "<script>" is never sniffed or framed as a page
                assert r.headers["X-Content-Type-Options"] == "nosniff" and "Content-Security-Policy" in r.headers
    finally:
        with stack.db() as c:
            c.execute("UPDATE lectures SET title='Sorting' WHERE id=%s", (lid,))


HOSTILE_TEXT = ["<script>alert(1)</script> & <b>bold</b>",
                "WEBVTT",
                "7 " + "y" * 41 + " 00:00:09,000 --> 00:00:10,000 injected",
                "12\n00:00:09.000 --> 00:00:10.000\ninjected cue",
                "NOTE this is not a note",
                "line one\r\n\r\n\r\nline two after blank lines",
                "-->",
                "00:00:01.000 --> 00:00:02.000",
                "&lt;already escaped&gt; &amp; &#x41;",
                "STYLE ::cue { color: red }",
                "\u2028\u2029\x1b[31mred\x1b[0m\x07",
                "Ünïcödé 東京 😀 مرحبا \u202e reversed",
                "{\\an8}on top? a dict {c: 3} and printf(\"hi\\n\")"]


def test_transcript_text_never_makes_extra_cues(stack, world, tmp_path):
    lid, owner = world["public"]["lecture"], world["people"]["owner"]
    with stack.db() as c:
        saved = c.execute("SELECT idx, segment_idx, start_s, end_s, text, embedding, kind FROM sentences "
                          "WHERE lecture_id=%s ORDER BY idx", (lid,)).fetchall()
        c.execute("UPDATE sentences SET text=%s WHERE lecture_id=%s AND idx=%s", ("placeholder", lid, saved[0][0]))
        for k, text in enumerate(HOSTILE_TEXT):
            c.execute("UPDATE sentences SET text=%s WHERE lecture_id=%s AND idx=%s", (text, lid, saved[k][0]))
        # as a re-index would (the only way sentences change): the gateway builds a lecture's export once per index
        c.execute("UPDATE lectures SET indexed_at=clock_timestamp() WHERE id=%s", (lid,))
        rows = c.execute("SELECT start_s, end_s, text, kind FROM sentences WHERE lecture_id=%s ORDER BY idx",
                         (lid,)).fetchall()
        words = c.execute("SELECT start_s, end_s, word FROM transcript_words WHERE lecture_id=%s ORDER BY idx",
                          (lid,)).fetchall()
    try:
        from lecturecopilot.captions import Word
        want = build_cues([Line(*r) for r in rows], [Word(*w) for w in words])
        for ext, reader in (("vtt", webvtt.read), ("srt", webvtt.from_srt)):
            r = _no_5xx(requests.get(f"{stack.base}/api/lectures/{lid}/captions.{ext}", headers=owner, timeout=10), ext)
            assert r.status_code == 200, r.text
            path = tmp_path / f"c.{ext}"
            path.write_bytes(r.content)
            got = reader(str(path)).captions
            assert len(got) == len(want), (ext, r.text[:3000])
            assert [(c.start_time.in_milliseconds(), c.end_time.in_milliseconds()) for c in got] == [
                (round(c.start_s * 1000), round(c.end_s * 1000)) for c in want]
            assert [(a, b) for a, b, _ in ffmpeg_cues(path)] == [
                (round(c.start_s * 1000), round(c.end_s * 1000)) for c in want], ext
            shown = " ".join(t for _, _, t in ffmpeg_cues(path)).replace("\u2060", "")
            shown = shown.replace("\\{", "{").replace("\\}", "}")  # ffmpeg's ASS escapes of VTT braces
            assert "{c: 3}" in shown and 'printf("hi\\n")' in shown and "{\\an8}on top?" in shown, (ext, shown)
            if ext == "vtt":
                assert "<script>" not in r.text and "<b>" not in r.text
            assert "\r" not in r.text and "\x1b" not in r.text and "\x07" not in r.text
    finally:
        with stack.db() as c:
            for row in saved:
                c.execute("UPDATE sentences SET text=%s WHERE lecture_id=%s AND idx=%s", (row[4], lid, row[0]))


def test_an_uploaded_caption_that_spells_a_timing_line_stays_one_cue(stack, world, tmp_path):
    # a hostile instructor's captions: "--&gt;" reads back as "-->", so the transcript holds an SRT timing line
    owner = world["people"]["owner"]
    vtt = ("WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nHeaps keep the largest key on top.\n\n"
           "00:00:05.000 --> 00:00:08.000\n00:59:00,000 --&gt; 01:00:00,000\n\n"
           "00:00:09.000 --> 00:00:12.000\nA heap is stored in an array.\n")
    r = requests.post(f"{stack.base}/api/courses/{world['public']['course']}/lectures", headers=owner,
                      files={"captions": ("evil.vtt", vtt.encode(), "text/vtt")}, data={"title": "Evil", "number": "8"},
                      timeout=60)
    assert r.status_code == 202, r.text
    lid = r.json()["lecture_id"]
    assert _wait_ready(stack, lid, owner) == "ready"
    transcript = requests.get(f"{stack.base}/api/lectures/{lid}/transcript", headers=owner, timeout=10).json()
    assert any("-->" in s["text"] for s in transcript["segments"]), transcript
    for ext, reader in (("vtt", webvtt.read), ("srt", webvtt.from_srt)):
        r = requests.get(f"{stack.base}/api/lectures/{lid}/captions.{ext}", headers=owner, timeout=10)
        assert r.status_code == 200, r.text
        path = tmp_path / f"c.{ext}"
        path.write_bytes(r.content)
        want = [(c.start_time.in_milliseconds(), c.end_time.in_milliseconds()) for c in reader(str(path)).captions]
        assert [(a, b) for a, b, _ in ffmpeg_cues(path)] == want, (ext, r.text)
        assert all(b <= 13000 for _, b in want), want  # no cue moved to 59:00


# -- practice --------------------------------------------------------------------------------------
def test_practice_bodies_of_wrong_shape_are_400(stack, world):
    pub, p = world["public"], world["people"]
    qid = pub["questions"][0]["id"]
    urls = [f"/api/lectures/{pub['lecture']}/quiz/answers", f"/api/courses/{pub['course']}/quiz/answers"]
    bad_sets = [{"answers": [{"question_id": qid, "choice": "1"}]}, {"answers": [{"question_id": qid, "choice": 1.5}]},
                {"answers": [{"question_id": qid, "choice": True}]}, {"answers": [{"question_id": qid, "choice": 10 ** 30}]},
                {"answers": [{"question_id": qid, "choice": -1}]}, {"answers": [{"question_id": 5, "choice": 1}]},
                {"answers": [{"question_id": qid, "choice": 1, "extra": 1}]}, {"answers": [], "x": 1},
                {"answers": [{"question_id": "q" * 10 ** 4, "choice": 0}]}, {"answers": {"question_id": qid}},
                {"answers": [None]}, {"answers": [{"question_id": qid}]}, {"answers": [[qid, 1]]},
                {"answers": [{"question_id": qid, "choice": 1}] * 10 ** 4}]
    for url in urls:
        for body in bad_sets:
            r = _no_5xx(requests.post(stack.base + url, json=body, headers=p["student"], timeout=10), (url, body))
            assert r.status_code in (400, 413), (url, str(body)[:200], r.text)
    # 1.0 is the integer 1 as JSON Schema reads it (the OpenAPI document says integer): taken as 1
    r = requests.post(stack.base + urls[0], json={"answers": [{"question_id": qid, "choice": 1.0}]},
                      headers=p["student"], timeout=10)
    assert r.status_code == 200 and r.json()["total"] == 1, r.text
    # ids that are strings but no question (non-UUID, NUL, unicode, another course's): 404, nothing recorded
    for odd in ["not-a-uuid", "\u0000", "東京😀", str(uuid.uuid4()), world["private"]["questions"][0]["id"]]:
        for url in urls:
            r = _no_5xx(requests.post(stack.base + url, json={"answers": [{"question_id": odd, "choice": 0}]},
                                      headers=p["student"], timeout=10), (url, odd))
            assert r.status_code in (400, 404), (url, odd, r.text)
    for body in ({"choice": "0"}, {"choice": 4}, {"choice": 10 ** 30}, {"choice": 0, "x": 1}, {}, []):
        r = _no_5xx(requests.post(f"{stack.base}/api/practice/{qid}/answer", json=body, headers=p["student"],
                                  timeout=10), body)
        assert r.status_code == 400, (body, r.text)


def test_other_courses_question_ids_leak_nothing(stack, world):
    p, priv = world["people"], world["private"]
    qid = priv["questions"][0]["id"]
    for who in ("anon", "student", "owner"):
        h = p[who]
        calls = [("POST", f"/api/practice/{qid}/answer", {"choice": 0}),
                 ("POST", f"/api/quiz/questions/{qid}/report", {"comment": "x"}),
                 ("PATCH", f"/api/quiz/questions/{qid}", {"question": "Hijacked?"}),
                 ("DELETE", f"/api/quiz/questions/{qid}", None),
                 ("GET", f"/api/lectures/{priv['lecture']}/practice", None),
                 ("GET", f"/api/lectures/{priv['lecture']}/quiz", None),
                 ("GET", f"/api/courses/{priv['course']}/quiz", None),
                 ("GET", f"/api/lectures/{priv['lecture']}/quiz/admin", None),
                 ("POST", f"/api/lectures/{priv['lecture']}/quiz/generate", None)]
        for method, url, body in calls:
            r = _no_5xx(requests.request(method, stack.base + url, json=body, headers=h, timeout=30), (who, url))
            assert r.status_code in (401, 403, 404), (who, method, url, r.text)
            assert priv["questions"][0]["question"] not in r.text
    # the rival's questions are untouched
    r = requests.get(f"{stack.base}/api/lectures/{priv['lecture']}/quiz/admin", headers=p["rival"], timeout=10)
    assert r.status_code == 200 and [q["question"] for q in r.json()["questions"]] == [
        q["question"] for q in priv["questions"]]
    assert all(q["attempts"] == 0 and q["reports"] == 0 for q in r.json()["questions"])
    # the owner of the public course may not edit the private one's question through its own lecture either
    r = _no_5xx(requests.patch(f"{stack.base}/api/quiz/questions/{world['public']['questions'][0]['id']}",
                               json={"cite_lecture_id": priv["lecture"]}, headers=p["owner"], timeout=10), "cite")
    assert r.status_code == 400, r.text


def test_question_ids_in_the_path_are_never_a_5xx(stack, world):
    owner = world["people"]["owner"]
    for odd in ODD_IDS:
        for method, url, body in (("POST", f"/api/practice/{odd}/answer", {"choice": 0}),
                                  ("POST", f"/api/quiz/questions/{odd}/report", {}),
                                  ("PATCH", f"/api/quiz/questions/{odd}", {"question": "Q?"}),
                                  ("DELETE", f"/api/quiz/questions/{odd}", None),
                                  ("GET", f"/api/lectures/{odd}/practice", None),
                                  ("GET", f"/api/courses/{odd}/quiz", None)):
            r = _no_5xx(requests.request(method, stack.base + url, json=body, headers=owner, timeout=10), (odd, url))
            assert r.status_code in (400, 404, 405), (odd, method, url, r.text)


def test_ask_down_is_503_on_every_practice_route(stack, world):
    from lecturecopilot_ops.stack import _free_port

    pub, owner = world["public"], world["people"]["owner"]
    qid = pub["questions"][0]["id"]
    g = Gateway(stack, {"LC_ASK_TARGET_URI": f"ipv4:127.0.0.1:{_free_port()}"})
    try:
        for method, url, body in (("GET", f"/api/lectures/{pub['lecture']}/quiz", None),
                                  ("GET", f"/api/courses/{pub['course']}/quiz", None),
                                  ("GET", f"/api/lectures/{pub['lecture']}/practice", None),
                                  ("GET", f"/api/lectures/{pub['lecture']}/quiz/admin", None),
                                  ("POST", f"/api/lectures/{pub['lecture']}/quiz/answers",
                                   {"answers": [{"question_id": qid, "choice": 0}]}),
                                  ("POST", f"/api/practice/{qid}/answer", {"choice": 0}),
                                  ("POST", f"/api/quiz/questions/{qid}/report", {}),
                                  ("PATCH", f"/api/quiz/questions/{qid}", {"question": "Q?"}),
                                  ("DELETE", f"/api/quiz/questions/{qid}", None),
                                  ("POST", f"/api/lectures/{pub['lecture']}/quiz/generate", None)):
            r = requests.request(method, g.base + url, json=body, headers=owner, timeout=60)
            assert r.status_code == 503 and r.json()["error"]["code"] == "ask_unavailable", (method, url, r.text)
    finally:
        g.close()


# -- the OpenAPI document and ingest's internal route ------------------------------------------------
def test_openapi_leaks_nothing_private(stack, world):
    r = _no_5xx(requests.get(f"{stack.base}/api/openapi.json", timeout=10), "openapi")
    assert r.status_code == 200
    text = r.text
    doc = json.loads(text)
    assert all(p.startswith(("/api/", "/healthz", "/readyz", "/")) for p in doc["paths"])
    assert not any(p.startswith("/v1/") for p in doc["paths"])
    token = stack.admin["Authorization"].split()[1]
    secrets = [token, str(stack.settings.secret_key) if getattr(stack.settings, "secret_key", None) else None,
               stack.db_url, stack.nats_url, str(stack.settings.data_dir), world["private"]["course"],
               world["private"]["lecture"], world["private"]["questions"][0]["question"], "probe-rival@example.edu",
               "admin@example.edu", "operator@example.edu", "/home/", "/tmp/", "gsk_test", "gm_test"]
    for s in filter(None, secrets):
        assert s not in text, s
    assert str(stack.settings.ingest_port) not in json.dumps(doc.get("servers", []))


def test_ingests_upload_course_route_is_not_reachable_through_the_gateway(stack, world):
    owner = world["people"]["owner"]
    r = requests.post(f"{stack.base}/api/courses/{world['private']['course']}/uploads", headers=world["people"]["rival"],
                      json={"filename": "a.mp4", "size": 1000}, timeout=10)
    upload = r.json().get("upload_id") if r.status_code in (200, 201) else None
    paths = ["/v1/uploads/x/course", f"/v1/uploads/{upload or uuid.uuid4()}/course", "/api/../v1/uploads/x/course",
             "/%2e%2e/v1/uploads/x/course", f"/api/uploads/{upload or uuid.uuid4()}/course"]
    for path in paths:
        for who in (owner, {}):
            r = _no_5xx(requests.get(stack.base + path, headers=who, timeout=10), path)
            assert r.status_code in (401, 403, 404, 405), (path, r.status_code, r.text)
            assert world["private"]["course"] not in r.text
    # the rival's upload, asked for by another instructor through the public route: 404, no course id
    if upload:
        for odd in (upload, upload.upper(), "{" + upload + "}"):
            r = _no_5xx(requests.get(f"{stack.base}/api/uploads/{odd}", headers=owner, timeout=10), odd)
            assert r.status_code == 404 and world["private"]["course"] not in r.text, r.text
    for odd in ODD_IDS:
        r = _no_5xx(requests.get(f"{stack.base}/api/uploads/{odd}", headers=owner, timeout=10), odd)
        assert r.status_code in (400, 404, 405), (odd, r.text)
        r = _no_5xx(requests.put(f"{stack.base}/api/uploads/{odd}", data=b"x", headers=owner, timeout=10), odd)
        assert r.status_code in (400, 404, 405, 409, 411, 415), (odd, r.text)


def test_ingests_internal_route_answers_odd_ids_with_a_404(stack, world):
    ingest = f"http://{stack.settings.ingest_host}:{stack.settings.ingest_port}"
    assert stack.settings.ingest_host == "127.0.0.1"  # loopback only, as before (a NetworkPolicy in Kubernetes)
    for odd in ODD_IDS:
        r = _no_5xx(requests.get(f"{ingest}/v1/uploads/{odd}/course", timeout=10), odd)
        assert r.status_code in (404, 405), (odd, r.text)
    r = requests.post(f"{stack.base}/api/courses/{world['public']['course']}/uploads", headers=world["people"]["owner"],
                      json={"filename": "a.mp4", "size": 1000}, timeout=10)
    assert r.status_code == 201, r.text
    upload = r.json()["upload_id"]
    for form in (upload, upload.upper(), "{" + upload + "}"):
        r = requests.get(f"{ingest}/v1/uploads/{form}/course", timeout=10)
        assert r.status_code == 200 and r.json()["course_id"] == world["public"]["course"], r.text


def test_practice_edits_of_hostile_shape_are_400(stack, world):
    owner, qid = world["people"]["owner"], world["public"]["questions"][0]["id"]
    before = requests.get(f"{stack.base}/api/lectures/{world['public']['lecture']}/quiz/admin", headers=owner,
                          timeout=10).json()["questions"]
    for body in ({"cite_t_s": 1e308}, {"cite_t_s": -1}, {"cite_t_s": "1"}, {"answer_index": 2 ** 63},
                 {"answer_index": None, "x": 1}, {"options": ["a", "b", "c"]}, {"options": ["a", "a", "A", "b"]},
                 {"options": ["a", "b", "c", "d\u202e"]}, {"question": "\u0000"}, {"question": "q" * 2001},
                 {"explanation": ["x"]}, {"cite_lecture_id": "../../etc"}, {"cite_lecture_id": str(uuid.uuid4())},
                 {"cite_t_s": 10 ** 9}, [], "x", 5):
        r = _no_5xx(requests.patch(f"{stack.base}/api/quiz/questions/{qid}", json=body, headers=owner, timeout=10), body)
        assert r.status_code == 400, (body, r.text)
    after = requests.get(f"{stack.base}/api/lectures/{world['public']['lecture']}/quiz/admin", headers=owner,
                         timeout=10).json()["questions"]
    assert [(q["question"], q["options"], q["answer_index"]) for q in after] == [
        (q["question"], q["options"], q["answer_index"]) for q in before]
    # bytes that are not UTF-8, a body that is not JSON, a chunked body past the cap
    url = f"{stack.base}/api/practice/{qid}/answer"
    for data, ctype in ((b'{"choice": "\xff"}', "application/json"), (b"choice=1", "application/x-www-form-urlencoded"),
                        (b'{"choice": 1}', "text/plain"), (b"\xef\xbb\xbf{\"choice\": 1}", "application/json")):
        r = _no_5xx(requests.post(url, data=data, headers={**owner, "Content-Type": ctype}, timeout=10), data)
        assert r.status_code in (200, 400), (data, r.text)
    r = _no_5xx(requests.post(url, data=iter([b'{"choice": 1, "x": "' + b"a" * 70000 + b'"}']),
                              headers={**owner, "Content-Type": "application/json"}, timeout=10), "chunked")
    assert r.status_code == 413, r.text


def test_captions_of_a_deleted_course_and_head_requests(stack, world):
    owner = world["people"]["owner"]
    r = requests.post(f"{stack.base}/api/courses", json={"title": "Probe doomed course"}, headers=owner, timeout=10)
    course = r.json()["id"]
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=owner,
                      files={"captions": ("x.vtt", sorting_vtt().encode(), "text/vtt")}, data={"title": "Gone"}, timeout=60)
    lid = r.json()["lecture_id"]
    assert _wait_ready(stack, lid, owner) == "ready"
    r = requests.head(f"{stack.base}/api/lectures/{lid}/captions.vtt", headers=owner, timeout=10)
    assert r.status_code == 200 and DISPOSITION.fullmatch(r.headers["Content-Disposition"])
    assert requests.delete(f"{stack.base}/api/courses/{course}", headers=owner, timeout=60).status_code == 204
    for who in (owner, stack.admin, {}):
        for ext in ("vtt", "srt"):
            r = _no_5xx(requests.get(f"{stack.base}/api/lectures/{lid}/captions.{ext}", headers=who, timeout=10), ext)
            assert r.status_code == 404, r.text
        r = _no_5xx(requests.get(f"{stack.base}/api/lectures/{lid}/quiz", headers=who, timeout=10), "quiz")
        assert r.status_code == 404, r.text


def test_json_that_strains_the_parser_is_400(stack, world):
    student, qid = world["people"]["student"], world["public"]["questions"][0]["id"]
    url = f"{stack.base}/api/practice/{qid}/answer"
    bodies = [b'{"choice": 1' + b"0" * 5000 + b"}", b'{"choice": 1e400}', b'{"choice": NaN}', b'{"choice": -Infinity}',
              b"[" * 30000 + b"]" * 30000, b'{"a":' * 20000 + b"1" + b"}" * 20000, b'{"choice": 1, "choice": "x"}',
              b'{"choice": 0}{"choice": 1}', b"", b"null", b'"\\ud800"', b'{"choice": 0.5}']
    for data in bodies:
        r = _no_5xx(requests.post(url, data=data, headers={**student, "Content-Type": "application/json"}, timeout=30),
                    data[:40])
        assert r.status_code in (400, 413), (data[:40], r.text)
