"""Ingest answers every error in JSON, an unexpected one too: the gateway relays its body to the
client as ``application/json``, and Flask's own 500 page is HTML."""

from types import SimpleNamespace

from flask import Flask

from lecturecopilot.settings import Settings
from services.ingest import web


def test_an_unexpected_error_is_a_json_500_and_is_logged(caplog):
    app = Flask("ingest-test")
    web.install(app, SimpleNamespace(settings=Settings()))

    @app.get("/boom")
    def boom():
        raise RuntimeError("a bug")

    r = app.test_client().get("/boom")
    assert r.status_code == 500 and r.is_json, r.data[:200]
    assert r.get_json()["error"]["code"] == "internal" and "a bug" not in r.get_data(as_text=True)
    assert any("unhandled error in GET /boom" in rec.getMessage() for rec in caplog.records)
