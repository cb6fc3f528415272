"""Every route that takes a body, fed wrong types, unknown fields, 400-digit numbers, 1e400, deeply
nested objects and arrays, arrays instead of objects: never a 5xx, always a JSON 4xx (hardening #12,
item 7). The routes come from the gateway's own ``url_map`` (a new route is covered without
touching this file) and each declares its body as a pydantic model (``services/gateway/schemas.py``).

The requests go to a second gateway on the real stack with a secret of its own, so what they count
(reports, answers) is nobody else's budget; as the operator (admin) and as an anonymous visitor."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from web_helpers import ROOT, Gateway, mint

pytestmark = pytest.mark.slow

# routes that read no JSON body: a body sent to them is ignored (they may still refuse for other reasons)
BODYLESS = {"accounts.logout", "accounts.decide_role_request", "lectures.retry_lecture", "practice.generate_quiz",
            "lectures.upload_lecture", "lectures.resumable_upload_chunk"}
ALLOWED = {400, 401, 403, 404, 405, 409, 413, 415, 422}  # what a refused body may be answered with
BIG = "9" * 400
NEST = 60  # parsed (below Python's recursion limit); 20000 levels are refused by the parser
NESTED_OBJECT = '{"a": ' * NEST + "1" + "}" * NEST
NESTED_ARRAY = "[" * NEST + "]" * NEST
VALUES = ["1", "-1", BIG, "-" + BIG, "1e400", "-1e400", "1.5", "true", "null", '""', '"x"', "[]", "{}",
          '[["x"]]', NESTED_OBJECT, NESTED_ARRAY, '"\\u0000"', '"\\ud800"', '"\\u202e"', '"' + "x" * 6000 + '"']
GENERIC = ["[]", '[{"title": "x"}]', '"text"', "42", "null", "true", '{"conn": 1}', '{"question_id": "x"}',
           '{"x": ' + BIG + "}", '{"x": 1e400}', '{"x": NaN}', NESTED_OBJECT, NESTED_ARRAY,
           "[" * 20000 + "]" * 20000, '{"a": ' * 20000 + "}" * 20000, "{", '{"x": "' + "y" * 70000 + '"}']


def routes(stack) -> list[dict]:
    """The gateway's rules with their methods, endpoint and declared body model, from its url_map
    (read in a process of its own: creating the app configures logging and telemetry)."""
    from lecturecopilot_ops.stack import service_env

    code = ("import json\nfrom services.gateway.app import create_app\napp = create_app()\n"
            "print(json.dumps([{'rule': r.rule, 'methods': sorted(r.methods - {'HEAD', 'OPTIONS'}), "
            "'endpoint': r.endpoint, 'model': getattr(getattr(app.view_functions[r.endpoint], 'body_model', None), "
            "'__name__', None)} for r in app.url_map.iter_rules()]))\n")
    env = service_env(stack.settings)
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(ROOT), capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def world(stack):
    """A second gateway and a real id for every path parameter: a public course with a ready lecture
    and its practice questions, an answer, a pending role request, a resumable upload."""
    from .test_quiz_api import sorting_vtt

    gw = Gateway(stack, {"LC_SECRET_KEY": "json-bodies-secret-0123456789"})
    course = stack.create_course("JSON bodies")
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=60,
                      files={"captions": ("sorting.vtt", sorting_vtt().encode(), "text/vtt")},
                      data={"title": "Sorting", "number": "1"})
    assert r.status_code == 202, r.text
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=180)["status"] == "ready"
    r = requests.post(f"{stack.base}/api/lectures/{lecture}/quiz/generate", headers=stack.admin, timeout=180)
    assert r.status_code == 201, r.text
    question = r.json()["questions"][0]["id"]
    answer = requests.post(f"{stack.base}/api/courses/{course}/ask", json={"question": "What does merge sort do?"},
                           headers=stack.admin, timeout=60).json()["answer_id"]
    student = mint(stack, "student", "bodies-student@example.edu")
    role_request = requests.post(f"{stack.base}/api/role-requests", json={"reason": "I teach"}, headers=student,
                                 timeout=10).json()["id"]
    upload = requests.post(f"{stack.base}/api/courses/{course}/uploads", headers=stack.admin, timeout=10,
                           json={"filename": "v.mp4", "size": 1000}).json()["upload_id"]
    note = requests.post(f"{stack.base}/api/lectures/{lecture}/notes", json={"text": "a note", "t_s": 1},
                         headers=stack.admin, timeout=10).json()["id"]
    ids = {"course_id": course, "lecture_id": lecture, "answer_id": answer, "question_id": question,
           "request_id": role_request, "upload_id": upload, "email": "member@example.edu", "decision": "deny",
           "note_id": note}
    yield {"gw": gw, "ids": ids}
    gw.close()


def _url(rule: str, ids: dict) -> str:
    def value(m: re.Match) -> str:
        name = m.group(1).split(":")[-1]
        if name == "oid":
            return ids["lecture_id" if rule.startswith("/api/lectures/") else "course_id"]
        return ids[name]
    return re.sub(r"<([^>]+)>", value, rule)


# a valid body per model, so that changing one field reaches that field's own check
BASE = {"CourseCreate": {"title": "Bodies"}, "MemberAdd": {"email": "m@example.edu"},
        "UploadStart": {"filename": "a.mp4", "size": 10}, "SearchQuery": {"query": "merge sort"},
        "AskQuestion": {"question": "What does merge sort do?"}, "Feedback": {"rating": "up"},
        "MagicLink": {"email": "bodies@example.edu"}, "Verify": {"token": "nope"},
        "Contact": {"email": "v@example.edu", "message": "Hello"}, "PracticeAnswer": {"choice": 0},
        "QuizAnswers": {"answers": [{"question_id": "{question_id}", "choice": 0}]},
        "NoteCreate": {"text": "a note", "t_s": 1}, "NoteUpdate": {"text": "an edited note"}}


def bodies(model_name: str | None, ids: dict) -> list[str]:
    """Raw bodies to send: the generic ones, then per field of the model each bad value in a valid body."""
    out = list(GENERIC)
    if model_name is None:
        return out
    from services.gateway import schemas

    model = getattr(schemas, model_name)
    base = json.dumps(BASE.get(model_name, {})).replace("{question_id}", ids["question_id"])
    for field in model.model_fields:
        for v in VALUES:
            inner = json.loads(base)
            inner.pop(field, None)
            rest = json.dumps(inner)[1:-1]
            out.append("{" + (rest + ", " if rest else "") + f'"{field}": {v}' + "}")
    for v in VALUES[:8]:  # inside the list of answers
        out.append('{"answers": [{"question_id": "%s", "choice": %s}]}' % (ids["question_id"], v))
        out.append('{"answers": [{"question_id": %s, "choice": 0}]}' % v)
    return out


def _send(base: str, method: str, url: str, raw: str, headers: dict) -> tuple[int, dict | None, str]:
    r = requests.request(method, base + url, data=raw.encode("utf-8", "surrogatepass"), timeout=60,
                         headers={**headers, "Content-Type": "application/json"})
    try:
        payload = r.json()
    except ValueError:
        payload = None
    return r.status_code, payload, r.headers.get("Content-Type", "")


def test_every_json_route_declares_its_body(stack):
    """A route that reads JSON declares a model; the ones that don't read any are listed above."""
    found = [r for r in routes(stack) if {"POST", "PATCH", "PUT"} & set(r["methods"])]
    assert len(found) >= 20, found
    undeclared = sorted(r["endpoint"] for r in found if r["model"] is None and r["endpoint"] not in BODYLESS)
    assert undeclared == [], f"routes reading a body without a model: {undeclared}"
    assert {r["model"] for r in found} >= {"QuizEdit", "AskQuestion", "SearchQuery", "Feedback", "QuizAnswers"}


def test_no_body_makes_a_5xx_on_any_route(stack, world):
    gw, ids = world["gw"], world["ids"]
    cases = []
    for r in routes(stack):
        for method in set(r["methods"]) & {"POST", "PATCH", "PUT"}:
            for raw in bodies(r["model"], ids):
                for who, headers in (("admin", stack.admin), ("anonymous", {})):
                    cases.append((r, method, _url(r["rule"], ids), raw, who, headers))
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda c: (c, _send(gw.base, c[1], c[2], c[3], c[5])), cases))
    failures = []
    for (r, method, url, raw, who, _), (status, payload, ctype) in results:
        shown = f"{who} {method} {r['rule']} {raw[:80]!r} → {status} {str(payload)[:160]}"
        if status >= 500:
            failures.append(shown)
        elif status >= 400:
            if not (ctype.startswith("application/json") and payload and payload["error"]["code"]
                    and payload["error"]["message"]):
                failures.append("not a JSON error: " + shown)
            elif r["model"] is not None and status not in ALLOWED:
                failures.append("unexpected status: " + shown)
        if r["model"] is not None and who == "admin" and raw in GENERIC:  # none of these fits any model
            refused = status in (400, 413) or (r["endpoint"] == "accounts.create_role_request" and status == 409)
            if not refused:
                failures.append("not refused: " + shown)
    assert not failures, f"{len(failures)} of {len(cases)}:\n" + "\n".join(failures[:40])


@pytest.mark.parametrize("change, field", [({"question_id": "x"}, "question_id"), ({"conn": 1}, "conn"),
                                           (None, "cite_t_s")])
def test_a_bad_field_in_a_question_edit_is_a_400_naming_it(stack, world, change, field):
    """The three 500s of the issue: unknown fields and a 400-digit number are a 400 naming the field."""
    url = f"{world['gw'].base}/api/quiz/questions/{world['ids']['question_id']}"
    raw = json.dumps(change) if change else '{"cite_t_s": ' + BIG + "}"
    r = requests.patch(url, data=raw, headers={**stack.admin, "Content-Type": "application/json"}, timeout=10)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["code"] == "invalid_quiz" and err["field"] == field and f"'{field}'" in err["message"], err
    assert "Input should" not in err["message"]  # our sentence, not the library's


def test_refusals_name_the_field_and_keep_the_codes_the_client_knows(stack, world):
    base, ids, admin = world["gw"].base, world["ids"], stack.admin
    cases = [
        ("POST", f"/api/courses/{ids['course_id']}/search", {"query": "heap", "k": 10**40}, "invalid_k", "k"),
        ("POST", f"/api/courses/{ids['course_id']}/search", {"query": "heap", "depth": 3}, "invalid_body", "depth"),
        ("POST", f"/api/courses/{ids['course_id']}/ask", {"question": ["why"]}, "invalid_question", "question"),
        ("POST", f"/api/courses/{ids['course_id']}/ask", {"question": "why", "conversation_id": 5},
         "invalid_conversation", "conversation_id"),
        ("PATCH", f"/api/lectures/{ids['lecture_id']}", {"number": 10000}, "invalid_number", "number"),
        ("PATCH", f"/api/lectures/{ids['lecture_id']}", {"number": "2"}, "invalid_number", "number"),
        ("PATCH", f"/api/courses/{ids['course_id']}", {"assessment_mode": 1}, "invalid_assessment_mode",
         "assessment_mode"),
        ("POST", f"/api/answers/{ids['answer_id']}/feedback", {"rating": "down", "comment": {"x": 1}},
         "invalid_comment", "comment"),
        ("POST", f"/api/lectures/{ids['lecture_id']}/quiz/answers",
         {"answers": [{"question_id": ids["question_id"], "choice": 7}]}, "invalid_choice", "answers[0].choice"),
        ("POST", f"/api/courses/{ids['course_id']}/uploads", {"filename": "a.mp4", "size": 1e300}, "invalid_size",
         "size"),
        ("POST", "/api/contact", {"message": "hi", "email": "a@example.edu", "phone": "1"}, "invalid_body", "phone"),
    ]
    for method, path, body, code, field in cases:
        r = requests.request(method, base + path, json=body, headers=admin, timeout=30)
        assert r.status_code == 400, (path, body, r.text)
        err = r.json()["error"]
        assert err["code"] == code and err["field"] == field and f"'{field}'" in err["message"], (body, err)
    # what the web client sends still works (nulls where it has nothing)
    r = requests.post(f"{base}/api/courses/{ids['course_id']}/ask", headers=admin, timeout=60,
                      json={"question": "What does merge sort do?", "lecture_id": None, "conversation_id": None})
    assert r.status_code == 200, r.text
    r = requests.post(f"{base}/api/answers/{ids['answer_id']}/feedback", json={"rating": "up", "comment": None},
                      headers=admin, timeout=10)
    assert r.status_code == 204, r.text
    r = requests.patch(f"{base}/api/courses/{ids['course_id']}", headers=admin, timeout=10,
                       json={"title": "JSON bodies", "visibility": "public", "assessment_mode": False})
    assert r.status_code == 200, r.text


def test_a_language_no_store_can_keep_is_a_400_on_both_upload_paths(stack, world):
    """Found by the table above: a NUL in ``language`` reached Postgres (jsonb/text) as a 500."""
    course = world["ids"]["course_id"]
    r = requests.post(f"{stack.base}/api/courses/{course}/uploads", headers=stack.admin, timeout=10,
                      json={"filename": "a.mp4", "size": 10, "language": "e\u0000n"})
    assert r.status_code == 400 and r.json()["error"]["field"] == "language", r.text
    vtt = b"WEBVTT\n\n00:01.000 --> 00:04.000\nA heap is a binary tree.\n"
    for language in ("e\u0000n", "x" * 5000, "en\nfr"):
        r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                          files={"captions": ("a.vtt", vtt, "text/vtt")}, data={"title": "Lang", "language": language})
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_language", r.text
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                      files={"captions": ("a.vtt", vtt, "text/vtt")}, data={"title": "Lang", "language": "en"})
    assert r.status_code == 202, r.text
