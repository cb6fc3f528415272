"""Writes docs/api.md, the HTTP API reference, from the OpenAPI 3.1 document the gateway serves at
``GET /api/openapi.json`` (built by ``services.gateway.openapi.document`` from the routes and their
pydantic models; this script only lays it out as Markdown). ``--check`` writes nothing and exits 1 when
the committed page differs (tests/unit/test_docs_pages.py).

Usage: python scripts/gen_api_doc.py [--check] [--out PATH]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from docgen import HEADER, ROOT, cell, run  # noqa: E402

OUT = ROOT / "docs" / "api.md"


def openapi_document() -> dict:
    """The gateway's OpenAPI document, built as ``GET /api/openapi.json`` builds it: the gateway's
    routes on a bare Flask app (the document reads only the url_map and what the views declare)."""
    from flask import Flask

    from services.gateway import openapi, routes

    app = Flask("gateway-openapi-doc")
    routes.register(app)
    return openapi.document(app)


def type_of(schema: dict) -> str:
    """A JSON schema in a few characters: ``string``, ``integer ≤ 9999``, ``[Citation]``, ``string | null``."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema:
        return " \\| ".join(type_of(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"array of {type_of(schema.get('items', {}))}"
    kind = schema.get("type", "any") if "enum" not in schema else " \\| ".join(f"`{v}`" for v in schema["enum"])
    bounds = [f"{op} {schema[key]}" for key, op in (("minimum", "≥"), ("maximum", "≤"), ("minLength", "length ≥"),
                                                    ("maxLength", "length ≤"), ("maxItems", "items ≤"))
              if key in schema]
    return ", ".join([str(kind), *bounds])


def operation(path: str, method: str, op: dict) -> list[str]:
    """One operation: heading, its docstring, parameters, body and answers."""
    out = [f"### {method.upper()} `{path}`", "", cell(op.get("description", op["summary"])), ""]
    for p in op.get("parameters", []):
        out.append(f"- {p['in']} parameter `{p['name']}`" + (f": {cell(p['description'])}" if "description" in p
                                                              else ""))
    for media, content in op.get("requestBody", {}).get("content", {}).items():
        out.append(f"- body `{media}`: {type_of(content['schema'])}")
    out += ["", "| status | answer | body |", "|---|---|---|"]
    for status, answer in op["responses"].items():
        bodies = [f"`{m}` {type_of(c['schema'])}" for m, c in answer.get("content", {}).items()]
        out.append(f"| {status} | {cell(answer['description'])} | {'; '.join(bodies)} |")
    return [*out, ""]


def schema_section(name: str, schema: dict) -> list[str]:
    """One component schema: its description and a table of its properties."""
    out = [f"### {name}", "", cell(schema.get("description", "")), ""]
    props = schema.get("properties", {})
    if props:
        required = set(schema.get("required", []))
        out += ["| field | type | required | meaning |", "|---|---|---|---|"]
        out += [f"| `{f}` | {type_of(s)} | {'yes' if f in required else ''} | {cell(s.get('description', ''))} |"
                for f, s in props.items()]
    elif schema.get("enum"):
        out.append(f"One of {', '.join(f'`{v}`' for v in schema['enum'])}.")
    return [*out, ""]


def render() -> str:
    """The whole page: operations grouped by their tag (the route's blueprint), then the schemas."""
    doc = openapi_document()
    lines = ["# HTTP API reference", "",
             f"Generated from the OpenAPI {doc['openapi']} document the gateway serves at `GET /api/openapi.json` "
             f"(`services/gateway/openapi.py`). {cell(doc['info']['description'])} The guide: "
             "[HTTP API](http-api.md).", ""]
    by_tag: dict[str, list[tuple[str, str, dict]]] = {}
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            by_tag.setdefault(op["tags"][0], []).append((path, method, op))
    for tag in sorted(by_tag):
        lines += [f"## {tag}", ""]
        for path, method, op in by_tag[tag]:
            lines += operation(path, method, op)
    lines += ["## Schemas", ""]
    for name, schema in sorted(doc["components"]["schemas"].items()):
        lines += schema_section(name, schema)
    return HEADER.format(script="scripts/gen_api_doc.py") + "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.exit(run(render, OUT, __doc__.splitlines()[0]))
