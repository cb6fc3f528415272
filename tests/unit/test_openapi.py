"""The OpenAPI document (services/gateway/openapi.py) is a valid OpenAPI 3.1 document and names
exactly the gateway's routes under /api/: a route added without being documented, or a documented
path that no route serves, fails here. The app is the gateway's routes without its dependencies
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
    served = {(openapi.path_of(r.rule), m.lower()) for r in app.url_map.iter_rules() if r.rule.startswith("/api/")
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
