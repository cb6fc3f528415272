"""The answer's wire shape is defined once: ``proto/lecturecopilot/ask/v1/ask.proto`` (issue 32, item 6).

Two copies follow it by hand: ask's domain dataclasses (``services/ask/domain.py``, what the answer
path yields and ``server.py`` translates to proto) and the gateway's response models
(``services/gateway/responses.py``, pydantic, what ``routes/answers.py`` turns ask's messages into and
the OpenAPI document publishes). This test reads the generated descriptors (``ask_pb2.<Message>.DESCRIPTOR``)
and checks that, for each message of :data:`PAIRS`, each side carries every proto field once, no field
the proto lacks, and a compatible type: string/str, double or float/float, int32 or int64/int,
bool/bool, repeated/list, a message/the side's model of that message (:data:`PAIRS` again).

Where a side differs on purpose it is written down here, with why:

- :data:`RENAMED`: a field under another name or path (``Done.retrieve_ms`` is the gateway's
  ``timings.retrieve_ms``; the domain's sentence keeps its ``cites``).
- :data:`DERIVED`: a field a side computes instead of storing (the domain's ``Cite.label`` is a
  property: ``citation_label(lecture_number, t_s)``).
- :data:`NULLABLE`: a proto string whose "" the gateway sends as ``null`` (``str | None``).
"""

from __future__ import annotations

import dataclasses
import types
import typing

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from pydantic import BaseModel

from lecturecopilot.ask.v1 import ask_pb2
from services.ask import domain
from services.gateway import responses

#: proto message → (the domain's dataclass or None when the domain has none, the gateway's model)
PAIRS: dict[str, tuple[type | None, type]] = {
    "Citation": (domain.Cite, responses.Citation),
    "Sentence": (domain.AnswerSentence, responses.Sentence),
    "Source": (domain.Source, responses.Source),
    "Done": (domain.Done, responses.AskAnswer),
    "Passage": (None, responses.Hit),  # search results: ask builds the proto from its hits directly
}
#: (side, message, proto field) → the field's dotted path on that side
RENAMED: dict[tuple[str, str, str], str] = {
    # the answer path's own word (AnswerSentence.cites, used throughout services/ask); server.py maps it
    ("domain", "Sentence", "citations"): "cites",
    # the public answer groups its timings (responses.Timings; milliseconds)
    ("gateway", "Done", "retrieve_ms"): "timings.retrieve_ms",
    ("gateway", "Done", "first_sentence_ms"): "timings.first_sentence_ms",
    ("gateway", "Done", "total_ms"): "timings.total_ms",
}
#: (side, message, proto field) → why the side computes it: it must be a property there
DERIVED: dict[tuple[str, str, str], str] = {
    ("domain", "Citation", "label"): "citation_label(lecture_number, t_s): one label for every chip",
}
#: (side, message, proto field): a proto string whose "" the side carries as None
NULLABLE: frozenset[tuple[str, str, str]] = frozenset({
    ("gateway", "Done", "reason"),  # null when the answer was not declined nor cut short
    ("gateway", "Done", "rewritten_question"),  # null when the question was no follow-up
})
_SCALARS = {FieldDescriptor.TYPE_STRING: str, FieldDescriptor.TYPE_DOUBLE: float, FieldDescriptor.TYPE_FLOAT: float,
            FieldDescriptor.TYPE_INT32: int, FieldDescriptor.TYPE_INT64: int, FieldDescriptor.TYPE_UINT32: int,
            FieldDescriptor.TYPE_BOOL: bool}


def side_fields(cls: type) -> dict[str, object]:
    """``{name: annotation}`` of a dataclass's fields or a pydantic model's fields (annotations resolved)."""
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        return {name: f.annotation for name, f in cls.model_fields.items()}
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _leaf(cls: type, path: str) -> tuple[bool, object, set[str]]:
    """(found, annotation, the dotted paths used) of ``path`` on ``cls``, following nested models."""
    head, _, rest = path.partition(".")
    fields = side_fields(cls)
    if head not in fields:
        return False, None, set()
    if not rest:
        return True, fields[head], {head}
    found, annotation, used = _leaf(fields[head], rest)
    return found, annotation, {head} | {f"{head}.{u}" for u in used}


def _all_paths(cls: type, prefix: str = "") -> set[str]:
    """Every field path of ``cls``; a nested model's fields too (its own name counts as a container)."""
    paths = set()
    for name, annotation in side_fields(cls).items():
        paths.add(prefix + name)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in _models():
            paths |= _all_paths(annotation, f"{prefix}{name}.")
    return paths


def _models() -> set[type]:
    return {c for pair in PAIRS.values() for c in pair if c is not None}


def type_problem(field: FieldDescriptor, annotation: object, expected_message: type | None, nullable: bool) -> str:
    """"" when ``annotation`` fits the proto ``field``, else what is wrong."""
    if nullable:
        args = set(typing.get_args(annotation))
        if typing.get_origin(annotation) not in (typing.Union, types.UnionType) or type(None) not in args:
            return f"is {annotation}, expected Optional (\"\" on the wire is null)"
        annotation = next(a for a in args if a is not type(None))
    if field.is_repeated:
        if typing.get_origin(annotation) is not list:
            return f"is {annotation}, expected a list (repeated)"
        annotation = typing.get_args(annotation)[0]
    expected = expected_message if field.type == FieldDescriptor.TYPE_MESSAGE else _SCALARS.get(field.type)
    if annotation is not expected:
        return f"is {annotation}, expected {expected} (proto type {field.type})"
    return ""


def mismatches(message: Descriptor, side: str, cls: type, pairs: dict = PAIRS) -> list[str]:
    """What keeps ``cls`` (the ``side`` "domain" or "gateway" model of the proto ``message``) from
    carrying exactly the proto's fields with compatible types; [] when it does."""
    column = 0 if side == "domain" else 1
    name, out, used = message.name, [], set()
    for field in message.fields:
        key = (side, name, field.name)
        if key in DERIVED:
            if not isinstance(getattr(cls, field.name, None), property):
                out.append(f"{side} {cls.__name__}.{field.name}: listed as derived but is no property")
            continue
        path = RENAMED.get(key, field.name)
        found, annotation, paths = _leaf(cls, path)
        if not found:
            out.append(f"{side} {cls.__name__} has no field {path} for proto {name}.{field.name}")
            continue
        used |= paths
        nested = pairs.get(field.message_type.name, (None, None))[column] if field.message_type else None
        if problem := type_problem(field, annotation, nested, key in NULLABLE):
            out.append(f"{side} {cls.__name__}.{path} {problem}")
    out += [f"{side} {cls.__name__}.{p} is not in proto {name}" for p in sorted(_all_paths(cls) - used)]
    return out


def test_each_side_carries_the_protos_fields():
    found = []
    for message, (dom, gateway) in PAIRS.items():
        descriptor = getattr(ask_pb2, message).DESCRIPTOR
        assert len(descriptor.fields) >= 2
        if dom is not None:
            found += mismatches(descriptor, "domain", dom)
        found += mismatches(descriptor, "gateway", gateway)
    assert found == []


def test_every_exception_names_a_real_proto_field():
    for side, message, field in [*RENAMED, *DERIVED, *NULLABLE]:
        assert side in ("domain", "gateway") and message in PAIRS
        assert field in getattr(ask_pb2, message).DESCRIPTOR.fields_by_name, (message, field)


def _proto_with(message: str, extra: str) -> Descriptor:
    """A copy of ask.proto's ``message`` with one more string field ``extra`` (a pool of its own)."""
    file = descriptor_pb2.FileDescriptorProto()
    ask_pb2.DESCRIPTOR.CopyToProto(file)
    file.name, file.package = "wire_shape_probe.proto", "wire_shape_probe"
    body = next(m for m in file.message_type if m.name == message)
    body.field.add(name=extra, number=99, type=FieldDescriptor.TYPE_STRING, label=FieldDescriptor.LABEL_OPTIONAL)
    del file.service[:]
    for m in file.message_type:  # type names refer to the copy's package
        for f in m.field:
            if f.HasField("type_name"):
                f.type_name = f.type_name.replace(".lecturecopilot.ask.v1.", ".wire_shape_probe.")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return pool.FindMessageTypeByName(f"wire_shape_probe.{message}")


def test_a_field_added_to_one_side_only_fails():
    # the proto gains a field the gateway and the domain lack
    probe = _proto_with("Citation", "confidence")
    assert mismatches(probe, "gateway", responses.Citation) == [
        "gateway Citation has no field confidence for proto Citation.confidence"]
    assert mismatches(probe, "domain", domain.Cite) == [
        "domain Cite has no field confidence for proto Citation.confidence"]

    # the gateway's model gains a field the proto lacks; the domain loses one
    class Citation(responses.Citation):
        confidence: float

    @dataclasses.dataclass
    class Source:
        lecture_id: str
        lecture_number: int
        start_s: float

    assert mismatches(ask_pb2.Citation.DESCRIPTOR, "gateway", Citation) == [
        "gateway Citation.confidence is not in proto Citation"]
    assert mismatches(ask_pb2.Source.DESCRIPTOR, "domain", Source) == [
        "domain Source has no field end_s for proto Source.end_s"]


def test_a_wrong_type_fails():
    class Source(responses.Source):
        lecture_number: str  # type: ignore[assignment]

    class Sentence(responses.Sentence):
        citations: responses.Citation  # type: ignore[assignment]

    class Done(responses.AskAnswer):
        reason: str  # type: ignore[assignment]

    assert mismatches(ask_pb2.Source.DESCRIPTOR, "gateway", Source) == [
        f"gateway Source.lecture_number is {str}, expected {int} (proto type 5)"]
    assert mismatches(ask_pb2.Sentence.DESCRIPTOR, "gateway", Sentence) == [
        f"gateway Sentence.citations is {responses.Citation}, expected a list (repeated)"]
    assert mismatches(ask_pb2.Done.DESCRIPTOR, "gateway", Done) == [
        f"gateway Done.reason is {str}, expected Optional (\"\" on the wire is null)"]
