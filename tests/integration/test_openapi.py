"""``GET /api/openapi.json`` on the real stack: the document the gateway serves is valid OpenAPI
3.1, names every route under /api/ of the running app and its health probes (the routes come from its own url_map, read
in a process of its own as in test_json_bodies), and real answers fit the models it documents:
each answer below is validated against the schema the document names for its path, method and
status (the models refuse unknown fields, so an undocumented field fails)."""

from __future__ import annotations

import pytest
import requests
from openapi_spec_validator import validate

from services.gateway import responses, study_responses
from services.gateway.openapi import documented as is_documented, path_of

from web_helpers import mint

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def doc(stack) -> dict:
    r = requests.get(f"{stack.base}/api/openapi.json", timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json"), r.text[:200]
    return r.json()


def test_the_served_document_is_valid_and_names_every_api_route(stack, doc):
    from .test_json_bodies import routes

    validate(doc)
    served = {(path_of(r["rule"]), m.lower()) for r in routes(stack) if is_documented(r["rule"])
              for m in r["methods"]}
    assert {("/healthz", "get"), ("/readyz", "get")} <= served
    documented = {(p, m) for p, ops in doc["paths"].items() for m in ops}
    assert served == documented, {"undocumented": served - documented, "not served": documented - served}


def _fits(doc: dict, path: str, method: str, r: requests.Response) -> dict:
    """``r``'s JSON validated against the model the document names for it; returns the JSON."""
    answers = doc["paths"][path][method]["responses"]
    assert str(r.status_code) in answers or r.status_code >= 400, (path, method, r.status_code, r.text[:300])
    spec = answers.get(str(r.status_code), answers["default"])
    ref = spec["content"]["application/json"]["schema"]["$ref"]
    name = ref.rsplit("/", 1)[-1].removesuffix("-Output")
    model = getattr(responses, name, None) or getattr(study_responses, name)
    model.model_validate(r.json())
    return r.json()


def test_real_answers_fit_the_documented_models(stack, doc):
    from .test_quiz_api import sorting_vtt

    base, admin = stack.base, stack.admin
    owner = mint(stack, "instructor", "openapi-owner@example.edu")

    def call(method: str, path: str, who=owner, **kw) -> dict:
        url = base + path.format(**ids)
        return _fits(doc, path, method, requests.request(method, url, headers=who, timeout=120, **kw))

    ids: dict = {}
    ids["course_id"] = call("post", "/api/courses", json={"title": "OpenAPI answers"})["id"]
    call("get", "/api/courses")
    call("patch", "/api/courses/{course_id}", json={"visibility": "public"})
    call("get", "/api/courses/{course_id}/members")
    ids["lecture_id"] = call("post", "/api/courses/{course_id}/lectures", data={"title": "Sorting", "number": "1"},
                             files={"captions": ("s.vtt", sorting_vtt().encode(), "text/vtt")})["lecture_id"]
    assert stack.wait_ready(ids["lecture_id"], timeout_s=180)["status"] == "ready"
    assert call("get", "/api/courses/{course_id}")["lectures"]
    assert call("get", "/api/lectures/{lecture_id}")["status"] == "ready"
    call("patch", "/api/lectures/{lecture_id}", json={"title": "Sorting algorithms"})
    assert call("get", "/api/lectures/{lecture_id}/transcript")["segments"]
    assert call("post", "/api/courses/{course_id}/search", json={"query": "merge sort"})["results"]
    answer = call("post", "/api/courses/{course_id}/ask", json={"question": "What does merge sort do?"})
    assert answer["sentences"] and not answer["declined"], answer
    ids["upload_id"] = call("post", "/api/courses/{course_id}/uploads",
                            json={"filename": "v.mp4", "size": 1000})["upload_id"]
    assert call("get", "/api/uploads/{upload_id}")["state"] == "receiving"
    generated = call("post", "/api/lectures/{lecture_id}/quiz/generate")
    ids["question_id"] = generated["questions"][0]["id"]
    call("get", "/api/lectures/{lecture_id}/quiz")
    call("get", "/api/courses/{course_id}/quiz")
    call("get", "/api/lectures/{lecture_id}/quiz/admin")
    call("get", "/api/lectures/{lecture_id}/practice")
    call("post", "/api/lectures/{lecture_id}/quiz/answers", json={"answers": [
        {"question_id": ids["question_id"], "choice": 0}]})
    call("post", "/api/practice/{question_id}/answer", json={"choice": 1})
    assert call("get", "/api/lectures/{lecture_id}/checkpoints")["enabled"] is False
    assert call("patch", "/api/courses/{course_id}", json={"checkpoints": True})["checkpoints"] is True
    checkpoints = call("get", "/api/lectures/{lecture_id}/checkpoints")["checkpoints"]
    student = mint(stack, "student", "openapi-student@example.edu")
    # a student's checkpoint answer (the course's instructor and admins are graded, not counted)
    r = requests.post(f"{base}/api/practice/{checkpoints[0]['question']['id']}/answer", headers=student, timeout=30,
                      json={"choice": 0, "checkpoint": True})
    _fits(doc, "/api/practice/{question_id}/answer", "post", r)
    call("patch", "/api/quiz/questions/{question_id}", json={"explanation": "Because the halves are merged."})
    call("post", "/api/courses/{course_id}/ask", who=student, json={"question": "How are the halves merged?"})
    ins = call("get", "/api/courses/{course_id}/insights")
    assert ins["questions"] >= 1 and ins["checkpoints"][0]["answered"] == 1  # a student's: staff are not counted
    call("get", "/api/me", who=student)
    call("get", "/api/me", who={})
    call("get", "/healthz", who={})
    call("get", "/readyz", who={})
    ids["request_id"] = call("post", "/api/role-requests", who=student, json={"reason": "I teach"})["id"]
    call("get", "/api/role-requests", who=admin)
    ids["decision"] = "deny"
    assert call("post", "/api/role-requests/{request_id}/{decision}", who=admin)["status"] == "denied"
    # errors fit the error model, also a body refused before the view runs
    err = call("post", "/api/courses/{course_id}/ask", json={"question": 5})
    assert err["error"]["code"] == "invalid_question" and err["error"]["field"] == "question"
    assert call("get", "/api/lectures/{lecture_id}/quiz/admin", who=student)["error"]["code"] == "forbidden"
