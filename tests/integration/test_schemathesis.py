"""The served OpenAPI document against the real gateway, by schemathesis (issue 31, item 5): for
every documented operation, requests generated from the document (its examples, its boundaries
and a few fuzzed bodies and parameters) are sent to a running gateway, and none may be answered
with a 5xx, with a status the operation does not document, or with a body or content type that
does not fit the schema the document names for that status (for a stream, each event).

The gateway is a second process on the session's stack with a secret of its own (what the
requests count, questions and messages, is nobody else's budget) and no operator address, so
the contact form is off there: ``contact_off`` must be a 4xx, not the 503 it was. It runs once as
an anonymous visitor and once as the operator (an admin token), who gets past every access check.
The examples are bounded (:data:`MAX_EXAMPLES` fuzzed cases per operation) to keep the run short.
Generated ids name nothing, so the two event streams are also called on a real lecture: each event
must be one the document names, its data JSON of that event's schema (schemathesis checks
``contentSchema``).
"""

from __future__ import annotations

import pytest
import requests
import schemathesis

from web_helpers import Gateway, upload_captions

pytestmark = pytest.mark.slow

MAX_EXAMPLES = 4  # fuzzed cases per operation and caller, beside the examples and boundary cases
CHECKS = ("not_a_server_error", "status_code_conformance", "content_type_conformance", "response_schema_conformance")


@pytest.fixture(scope="module")
def fuzzed(stack):
    """A second gateway on the stack: its own secret, no operator address (the contact form off)."""
    gw = Gateway(stack, {"LC_SECRET_KEY": "schemathesis-secret-0123456789", "LC_OPERATOR_EMAIL": ""})
    yield gw
    gw.close()


@pytest.fixture(scope="module")
def api_schema(fuzzed):
    """The document ``fuzzed`` serves, loaded by schemathesis with :data:`CHECKS` only, bounded."""
    config = schemathesis.Config.from_dict({
        "generation": {"max-examples": MAX_EXAMPLES, "database": "none", "deterministic": True},
        "phases": {"stateful": {"enabled": False}},
        "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
        "request-timeout": 60,
    })
    return schemathesis.openapi.from_url(f"{fuzzed.base}/api/openapi.json", config=config, timeout=30)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
def test_a_visitor_gets_no_5xx_and_only_documented_answers(case):
    case.call_and_validate()


@schema.parametrize()
def test_the_operator_gets_no_5xx_and_only_documented_answers(case, stack):
    case.call_and_validate(headers=stack.admin)


def test_the_contact_form_off_is_a_4xx_naming_itself(fuzzed):
    """No operator address (``LC_OPERATOR_EMAIL``) is a setting: 404 ``contact_off`` (it was 503)."""
    r = requests.post(f"{fuzzed.base}/api/contact", json={"email": "a@example.edu", "message": "hello"}, timeout=30)
    assert r.status_code == 404 and r.json()["error"]["code"] == "contact_off", r.text
    assert "LC_OPERATOR_EMAIL" in r.json()["error"]["message"]


def test_the_event_streams_fit_the_document(stack, api_schema):
    """A ready lecture's progress stream and a streamed answer, validated event by event."""
    course = stack.create_course("Schemathesis streams")
    r = upload_captions(stack.base, course, headers=stack.admin)
    assert r.status_code == 202, r.text
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=180)["status"] == "ready"
    progress = api_schema["/api/lectures/{lecture_id}/events"]["GET"].Case(path_parameters={"lecture_id": lecture})
    r = progress.call_and_validate(headers=stack.admin)
    assert r.headers["content-type"][0].startswith("text/event-stream") and b"event: status" in r.content, r.content[:300]
    ask = api_schema["/api/courses/{course_id}/ask"]["POST"].Case(
        path_parameters={"course_id": course}, body={"question": "What is a heap?"}, media_type="application/json")
    r = ask.call_and_validate(headers={**stack.admin, "Accept": "text/event-stream"})
    assert r.headers["content-type"][0].startswith("text/event-stream") and b"event: done" in r.content, r.content[:300]
