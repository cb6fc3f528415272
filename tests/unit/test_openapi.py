"""The OpenAPI document (services/gateway/openapi.py) is a valid OpenAPI 3.1 document and names
exactly the gateway's routes under /api/ and its health probes: a route added without being
documented, or a documented path that no route serves, fails here. It states the bounds the server
enforces (issue 31, item 5): lengths, ranges, integers, the event streams' events. The app is the gateway's routes without its dependencies
(the document reads only the url_map and what the views declare)."""

from __future__ import annotations

import json

import pytest
from flask import Flask
from openapi_spec_validator import validate

from services.gateway import openapi, responses, routes, schemas


@pytest.fixture(scope="module")
def app() -> Flask:
    app = Flask("gateway-openapi-test")
    routes.register(app)
    return app


@pytest.fixture(scope="module")
def doc(app) -> dict:
    return json.loads(json.dumps(openapi.document(app)))  # what the route serves: plain JSON


def test_the_document_is_valid_openapi_3_1(doc):
    assert doc["openapi"].startswith("3.1")
    validate(doc)  # raises OpenAPIValidationError


def test_every_api_route_is_documented_and_every_documented_path_exists(app, doc):
    served = {(openapi.path_of(r.rule), m.lower()) for r in app.url_map.iter_rules() if openapi.documented(r.rule)
              for m in r.methods - {"HEAD", "OPTIONS"}}
    documented = {(p, m) for p, ops in doc["paths"].items() for m in ops}
    assert served == documented, {"undocumented": served - documented, "not served": documented - served}
    assert len(served) >= 40 and ("/api/courses/{course_id}/ask", "post") in served
    assert all(not p.startswith("/api/") or "<" not in p for p in doc["paths"])


def test_every_operation_declares_its_answer_and_its_body(app, doc):
    """Each operation has a success answer (2xx) and the error answer; a route with a JSON body
    names its model, whose schema is the model's own."""
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            assert any(s.startswith("2") for s in op["responses"]), (method, path)
            assert op["responses"]["default"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/Error"}
            if method in ("post", "patch", "put") and "requestBody" not in op:
                assert op["operationId"] in {"accounts_logout", "accounts_decide_role_request",
                                             "lectures_retry_lecture", "practice_generate_quiz"}, op["operationId"]
    ask = doc["paths"]["/api/courses/{course_id}/ask"]["post"]
    ref = ask["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    schema = doc["components"]["schemas"][ref]
    assert schema["required"] == ["question"] and schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(schemas.AskQuestion.model_fields)
    assert set(ask["responses"]["200"]["content"]) == {"application/json", "text/event-stream"}
    answer = ask["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert set(doc["components"]["schemas"][answer]["properties"]) == set(responses.AskAnswer.model_fields)
    upload = doc["paths"]["/api/courses/{course_id}/lectures"]["post"]["requestBody"]["content"]
    assert "multipart/form-data" in upload


def _prop(doc: dict, model: str, field: str) -> dict:
    """The schema of ``model``'s ``field``, its non-null branch where it may be null."""
    prop = doc["components"]["schemas"][model]["properties"][field]
    return next((b for b in prop.get("anyOf", []) if b.get("type") != "null"), prop)


def _body_model(doc: dict, path: str, method: str) -> str:
    return doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]


def test_the_bounds_the_server_enforces_are_in_the_document(doc):
    """The probe's findings: an empty title, question, query or filename and a choice of 2.0 were
    schema-valid but refused 400; each bound is now the document's, and each holds in the model."""
    for path, method, field, most in (("/api/courses", "post", "title", 200),
                                      ("/api/courses/{course_id}/ask", "post", "question", 2000),
                                      ("/api/courses/{course_id}/search", "post", "query", 2000),
                                      ("/api/courses/{course_id}/uploads", "post", "filename", 255),
                                      ("/api/contact", "post", "message", 5000)):
        prop = _prop(doc, _body_model(doc, path, method), field)
        assert (prop["type"], prop["minLength"], prop["maxLength"]) == ("string", 1, most), (path, field, prop)
        model = getattr(schemas, _body_model(doc, path, method))
        e = _refusal(model, field, "")
        assert e.field == field, (path, e.message)
    for model, field, lo, hi in (("PracticeAnswer", "choice", 0, 3), ("QuizAnswer", "choice", 0, 3),
                                 ("SearchQuery", "k", 1, 50), ("LectureUpdate", "number", 0, schemas.MAX_NUMBER),
                                 ("QuizEdit", "answer_index", 0, 3)):
        prop = _prop(doc, model, field)
        assert (prop["type"], prop["minimum"], prop["maximum"]) == ("integer", lo, hi), (model, field, prop)
    assert _prop(doc, "CourseCreate", "visibility")["enum"] == ["public", "private"]
    assert _prop(doc, "Feedback", "rating")["enum"] == ["up", "down"]
    assert _prop(doc, "UploadStart", "size")["type"] == "integer"
    assert _prop(doc, "AskQuestion", "conversation_id")["format"] == "uuid"
    period = doc["paths"]["/api/courses/{course_id}/insights"]["get"]["parameters"]
    assert {p["name"]: p["schema"].get("format") for p in period if p["in"] == "query"} == {
        "from": "date", "to": "date", "since": "date", "until": "date"}


def _refusal(model, field: str, value) -> schemas.BodyError:
    """The refusal of ``model`` with its other required fields filled and ``field`` set to ``value``."""
    filled = {"title": "t", "question": "q", "query": "q", "filename": "a.mp4", "size": 1, "message": "m"}
    data = {k: v for k, v in filled.items() if k in model.model_fields}
    with pytest.raises(schemas.BodyError) as e:
        schemas.parse(model, {**data, field: value})
    return e.value


def test_an_integral_number_is_the_integer_json_schema_says_it_is():
    """``2.0`` is an ``integer`` in JSON Schema, so the server takes it as 2; 2.5, true and "2" are refused."""
    assert schemas.parse(schemas.PracticeAnswer, {"choice": 2.0}).choice == 2
    assert schemas.parse(schemas.QuizAnswers, {"answers": [{"question_id": "a", "choice": 3.0}]}).answers[0].choice == 3
    for bad in (2.5, True, "2", 4.0, -1.0):
        with pytest.raises(schemas.BodyError):
            schemas.parse(schemas.PracticeAnswer, {"choice": bad})


def test_the_event_streams_are_described_event_by_event(doc):
    """The answer stream and the lecture's progress are text/event-stream whose schema describes one
    event (OpenAPI before 3.2): its name is one of the route's and its data the JSON of that event's model."""
    for path, method, names in (("/api/courses/{course_id}/ask", "post", ["delta", "sentence", "done", "error"]),
                                ("/api/lectures/{lecture_id}/events", "get", ["status", "deleted"])):
        schema = doc["paths"][path][method]["responses"]["200"]["content"]["text/event-stream"]["schema"]
        assert schema["type"] == "object" and schema["required"] == ["event", "data"], path
        assert schema["properties"]["event"]["enum"] == names
        branches = {b["properties"]["event"]["const"]: b["properties"]["data"] for b in schema["oneOf"]}
        assert list(branches) == names and all(d["contentMediaType"] == "application/json" for d in branches.values())
        for data in branches.values():
            assert data["contentSchema"]["$ref"].rsplit("/", 1)[-1] in doc["components"]["schemas"]
    done = doc["paths"]["/api/courses/{course_id}/ask"]["post"]["responses"]["200"]["content"]["text/event-stream"]
    assert done["schema"]["oneOf"][2]["properties"]["data"]["contentSchema"] == {"$ref": "#/components/schemas/AskAnswer"}


def test_the_health_probes_are_documented(doc):
    for path in ("/healthz", "/readyz"):
        ok = doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": "#/components/schemas/Ok"}
    assert "503" in doc["paths"]["/readyz"]["get"]["responses"]
