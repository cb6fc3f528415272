"""The gateway's error mapping (services/gateway/errors.py) and body validation before the view
(services/gateway/contract.py), on a Flask app of their own: every error is the documented JSON
``{"error": {"code", "message", ...}}`` with its status and headers, and a view declaring a body
runs only with a valid one."""

from __future__ import annotations

from types import SimpleNamespace

import psycopg
import pytest
from flask import Flask

from services.gateway import errors, schemas
from services.gateway.contract import accepts


@pytest.fixture()
def client():
    app = Flask("errors-test")
    app.extensions["gateway"] = SimpleNamespace(settings=SimpleNamespace(max_json_bytes=200))
    errors.register(app)
    ran = []

    @app.post("/api/ask")
    @accepts(schemas.AskQuestion)
    def ask(body: schemas.AskQuestion):
        ran.append(body)
        return {"question": body.question}

    @app.get("/api/limited")
    def limited():
        raise errors.ApiError(429, "rate_limited", "Too many.", headers={"Retry-After": "60"}, extra={"wait_s": 60})

    @app.get("/api/db")
    def db_down():
        raise psycopg.OperationalError("connection refused")

    @app.get("/api/bug")
    def bug():
        raise RuntimeError("a bug")

    c = app.test_client()
    c.ran = ran
    return c


def test_api_errors_keep_status_code_headers_and_extra_fields(client):
    r = client.get("/api/limited")
    assert r.status_code == 429 and r.headers["Retry-After"] == "60"
    assert r.get_json() == {"error": {"code": "rate_limited", "message": "Too many.", "wait_s": 60}}


def test_werkzeug_db_and_unexpected_errors_are_json(client):
    r = client.put("/api/limited")
    assert r.status_code == 405 and r.get_json()["error"]["code"] == "method_not_allowed"
    assert "GET" in r.headers["Allow"] and r.headers["Content-Type"] == "application/json"
    assert client.get("/api/nowhere").get_json()["error"]["code"] == "not_found"
    r = client.get("/api/db")
    assert r.status_code == 503 and r.headers["Retry-After"] == "5"
    assert r.get_json()["error"]["code"] == "database_unavailable"
    r = client.get("/api/bug")
    assert r.status_code == 500 and r.get_json() == {"error": {"code": "internal",
                                                               "message": "Something went wrong on our side."}}


def test_a_body_is_validated_before_the_view_runs(client):
    r = client.post("/api/ask", json={"question": 5})
    assert r.status_code == 400 and client.ran == []
    err = r.get_json()["error"]
    assert err["code"] == "invalid_question" and err["field"] == "question" and "'question'" in err["message"]
    r = client.post("/api/ask", data="[1]", content_type="application/json")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "invalid_json"
    r = client.post("/api/ask", data='{"question": "why?", "x": 1e400}', content_type="application/json")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "invalid_json"
    r = client.post("/api/ask", json={"question": "x" * 300})
    assert r.status_code == 413 and r.get_json()["error"]["code"] == "request_entity_too_large"
    assert client.ran == []
    r = client.post("/api/ask", json={"question": "  why   merge sort? "})
    assert r.status_code == 200 and r.get_json() == {"question": "why merge sort?"} and len(client.ran) == 1
