"""OpenTelemetry: one upload is one trace through every pipeline stage (across NATS), one
question is one trace from the gateway through gRPC to ask's retrieval and writer; metrics
arrive. The stack exports OTLP/HTTP to a local receiver (tests/fakes/otlp_collector.py)."""

from __future__ import annotations

import pytest
import requests

pytestmark = pytest.mark.slow

VTT = "WEBVTT\n\n00:00.000 --> 00:06.000\nA trie stores strings by their prefixes, one character per edge.\n"


def test_one_upload_is_one_trace_through_all_stages(stack):
    course = stack.create_course("Traced course")
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                      files={"captions": ("t.vtt", VTT.encode(), "text/vtt")}, data={"title": "Tries"})
    assert r.status_code == 202, r.text
    lecture_id = r.json()["lecture_id"]
    assert stack.wait_ready(lecture_id)["status"] == "ready"

    def lecture_trace(spans):
        stage = {s.name: s for s in spans if s.attributes.get("lc.lecture_id") == lecture_id}
        if not {"transcribe", "slides", "index", "notify-ready"} <= set(stage):
            return None
        return stage

    stages = stack.otlp.wait_for(lecture_trace)
    traces = {s.trace_id for s in stages.values()}
    assert len(traces) == 1, stages  # one trace from the upload to the notice
    trace_id = traces.pop()
    in_trace = [s for s in stack.otlp.spans if s.trace_id == trace_id]
    services = {s.service for s in in_trace}
    assert {"lecture-copilot-gateway", "lecture-copilot-ingest", "lecture-copilot-transcribe",
            "lecture-copilot-index"} <= services, services
    roots = [s for s in in_trace if not s.parent_id]
    assert len(roots) == 1 and roots[0].service == "lecture-copilot-gateway"  # starts at the upload request


def test_one_question_is_one_trace_gateway_to_writer(stack):
    course = stack.create_course("Traced ask")
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                      files={"captions": ("t.vtt", VTT.encode(), "text/vtt")}, data={"title": "Tries"})
    assert stack.wait_ready(r.json()["lecture_id"])["status"] == "ready"
    ans = requests.post(f"{stack.base}/api/courses/{course}/ask", json={"question": "How does a trie store strings?"},
                        timeout=60).json()
    assert not ans["declined"], ans

    def ask_trace(spans):
        writes = [s for s in spans if s.name == "write" and s.service == "lecture-copilot-ask"]
        for w in writes:
            same = [s for s in spans if s.trace_id == w.trace_id]
            names = {s.name for s in same}
            if "retrieve" in names and any(s.service == "lecture-copilot-gateway" for s in same):
                return same
        return None

    spans = stack.otlp.wait_for(ask_trace)
    by_service = {}
    for s in spans:
        by_service.setdefault(s.service, set()).add(s.name)
    assert any("ask" in n for n in by_service["lecture-copilot-gateway"]), by_service  # the HTTP route span
    assert any("AskService/Ask" in n for n in by_service["lecture-copilot-ask"]), by_service  # the gRPC server span
    assert {"retrieve", "write"} <= by_service["lecture-copilot-ask"]
    assert any(n.startswith(("SELECT", "INSERT")) or "postgres" in n.lower() for n in by_service["lecture-copilot-ask"]), \
        by_service  # Postgres work inside the same trace


def test_metrics_are_exported(stack):
    import time

    deadline = time.time() + 30
    want = {"lc.ask.duration", "lc.stage.duration", "lc.consumer.pending"}
    while time.time() < deadline and not want <= stack.otlp.metric_names:
        time.sleep(0.5)
    assert want <= stack.otlp.metric_names, stack.otlp.metric_names
