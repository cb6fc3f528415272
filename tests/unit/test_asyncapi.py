"""docs/asyncapi.json is the pipeline's event contract as FastStream generates it from the code
(lecturecopilot_ops/asyncapi.py); it must not drift from the workers' stages and the bus's subjects."""

from __future__ import annotations

import difflib
import importlib.util
import json
from pathlib import Path

from lecturecopilot import bus
from lecturecopilot_ops.asyncapi import document, proto_schema
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.worker import Stage

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_asyncapi", ROOT / "scripts" / "gen_asyncapi.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_document_is_what_the_code_generates():
    committed = (ROOT / "docs" / "asyncapi.json").read_text()
    fresh = _generator().render()
    diff = "".join(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True),
                                        "docs/asyncapi.json", "generated", n=1))
    assert fresh == committed, f"docs/asyncapi.json is out of date; run `make asyncapi`:\n{diff[:3000]}"


def test_every_subject_is_a_channel_with_its_protobuf_message():
    doc = json.loads((ROOT / "docs" / "asyncapi.json").read_text())
    assert doc["asyncapi"] == "3.0.0"
    addresses = {c["address"] for c in doc["channels"].values()}
    assert addresses == set(bus.STREAM_SUBJECTS) | {bus.PROGRESS}
    messages = doc["components"]["messages"]
    for channel in doc["channels"].values():
        message = bus.EVENTS[channel["address"]][0]
        for ref in channel["messages"].values():
            m = messages[ref["$ref"].rsplit("/", 1)[-1]]
            assert m["contentType"] == "application/x-protobuf"
            assert m["name"] == (message.DESCRIPTOR.name if message else "DeadLetter")
    uploaded = doc["components"]["schemas"]["LectureUploaded"]
    assert uploaded["properties"]["media_uri"]["x-protobuf-field"] == 3
    assert uploaded["properties"]["duration_s"]["type"] == "number"
    # each durable of the worker services is one receiving operation
    receives = sorted(k.split(":")[1] for k, op in doc["operations"].items() if op["action"] == "receive")
    assert receives == ["index", "notify-failed", "notify-ready", "slides", "transcribe", "webcopy"]


def test_the_document_follows_the_stages_it_is_given():
    extra = Stage("audit", bus.INDEXED, ev.LectureIndexed, "audit", lambda e, c: None, records_stage=False)
    doc = document({"audit": [extra]})
    assert "lecture.indexed:audit" in doc["channels"]
    assert "lecture.uploaded:transcribe" not in doc["channels"]


def test_proto_schema_lists_every_field_with_its_number_and_type():
    schema = proto_schema(ev.StageProgress.DESCRIPTOR, {("StageProgress", "progress"): "0..1 within the stage"})
    assert schema["properties"] == {
        "lecture_id": {"type": "string", "x-protobuf-field": 1},
        "stage": {"type": "string", "x-protobuf-field": 2},
        "progress": {"type": "number", "format": "double", "x-protobuf-field": 3,
                     "description": "0..1 within the stage"}}
