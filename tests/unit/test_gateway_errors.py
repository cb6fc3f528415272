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


BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"


def test_a_browser_asking_for_an_unknown_page_gets_the_page_not_json():
    """An unknown path asked for by a browser (Accept prefers text/html) is the web client's page with
    status 404 (it shows "Page not found" and a link home); API paths, API clients (Accept JSON or
    ``*/*``) and other methods keep the JSON error."""
    from flask import Response

    app = Flask("errors-page-test")
    errors.register(app, page=lambda: Response("<!doctype html><p>the shell</p>", mimetype="text/html"))
    c = app.test_client()
    r = c.get("/nonexistent", headers={"Accept": BROWSER})
    assert r.status_code == 404 and r.headers["Content-Type"].startswith("text/html") and b"the shell" in r.data
    assert c.get("/courses/xyz/bogus/more", headers={"Accept": BROWSER}).status_code == 404
    for path, accept in (("/api/nowhere", BROWSER), ("/nonexistent", "application/json"), ("/nonexistent", "*/*"),
                         ("/nonexistent", None)):
        r = c.get(path, headers={"Accept": accept} if accept else {})
        assert r.status_code == 404 and r.headers["Content-Type"] == "application/json", (path, accept)
        assert r.get_json() == {"error": {"code": "not_found", "message": r.get_json()["error"]["message"]}}
    r = c.post("/nonexistent", headers={"Accept": BROWSER})
    assert r.status_code == 404 and r.get_json()["error"]["code"] == "not_found"


def test_a_body_is_validated_before_the_view_runs(client):
    r = client.post("/api/ask", json={"question": 5})
    assert r.status_code == 400 and client.ran == []
    err = r.get_json()["error"]
    assert err["code"] == "invalid_question" and err["field"] == "question" and "'question'" in err["message"]
    r = client.post("/api/ask", data="[1]", content_type="application/json")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "invalid_json"
    r = client.post("/api/ask", data='{"question": "why?", "x": 1e400}', content_type="application/json")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "invalid_json"
    r = client.post("/api/ask", data='{"question": "why?"}', content_type="application/x-www-form-urlencoded")
    assert r.status_code == 400 and r.get_json()["error"] == {
        "code": "invalid_json", "message": "Send the body as JSON, with the header Content-Type: application/json."}
    r = client.post("/api/ask", json={"question": "x" * 300})
    assert r.status_code == 413 and r.get_json()["error"]["code"] == "request_entity_too_large"
    assert client.ran == []
    r = client.post("/api/ask", json={"question": "  why   merge sort? "})
    assert r.status_code == 200 and r.get_json() == {"question": "why merge sort?"} and len(client.ran) == 1


def test_an_unreachable_answering_service_says_when_to_retry():
    import grpc

    class Unavailable(grpc.RpcError):
        def code(self):
            return grpc.StatusCode.UNAVAILABLE

        def details(self):
            return "connection refused"

    e = errors.grpc_error(Unavailable())
    assert (e.status, e.code, e.headers) == (503, "ask_unavailable", {"Retry-After": "5"})


def test_a_call_to_ask_that_runs_out_of_time_says_it_took_too_long():
    """A real gRPC call past its deadline (issue 31: it used to be 503 "not reachable"): 504 ``ask_timeout``."""
    import threading
    from concurrent import futures

    import grpc

    release = threading.Event()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("Slow", {
        "Call": grpc.unary_unary_rpc_method_handler(lambda req, ctx: release.wait(10) and b"",
                                                   request_deserializer=bytes, response_serializer=bytes)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            with pytest.raises(grpc.RpcError) as got:
                channel.unary_unary("/Slow/Call", request_serializer=bytes, response_deserializer=bytes)(b"", timeout=0.3)
    finally:
        release.set()
        server.stop(0)
    e = errors.grpc_error(got.value)
    assert got.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert (e.status, e.code, e.message) == (504, "ask_timeout", "The answering service took too long; try again.")


def test_a_token_is_minted_only_for_an_address_sign_in_accepts():
    """``mint-token --email stu@probe.test`` used to make a token whose person no member route
    could name (email-validator refuses special-use domains): refused before anything is stored."""
    from services.gateway.auth import mint_token

    for bad in ("stu@probe.test", "not-an-address", "a@[127.0.0.1]"):
        with pytest.raises(ValueError, match="not an email address"):
            mint_token(None, "student", bad)  # refused before the store is touched
    with pytest.raises(ValueError, match="role"):
        mint_token(None, "owner", "a@example.edu")
