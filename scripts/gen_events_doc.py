"""Writes docs/events-reference.md, the pipeline's events, from docs/asyncapi.json (the AsyncAPI 3.0
document scripts/gen_asyncapi.py generates from the workers' subscribers). ``--check`` writes nothing
and exits 1 when the committed page differs (tests/unit/test_docs_pages.py).

Usage: python scripts/gen_events_doc.py [--check] [--out PATH]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docgen import HEADER, ROOT, cell, run  # noqa: E402

OUT = ROOT / "docs" / "events-reference.md"
SOURCE = ROOT / "docs" / "asyncapi.json"


def _resolve(doc: dict, ref: str) -> dict:
    """The object a local ``$ref`` (``#/a/b/c``) points at; ``~1`` stands for ``/`` in a segment."""
    node = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _message(doc: dict, channel: dict) -> dict:
    ref = next(iter(channel["messages"].values()))["$ref"]
    return _resolve(doc, ref)


def render() -> str:
    """The page: one row per channel (subject, who sends or receives it, message), then each payload's fields."""
    doc = json.loads(SOURCE.read_text())
    lines = ["# Events reference", "",
             f"Generated from `docs/asyncapi.json` (AsyncAPI {doc['asyncapi']}, written by `make asyncapi` from the "
             "workers' own subscribers). How the pipeline uses them: [Events](events.md).", "",
             "| subject | operation | message | what |", "|---|---|---|---|"]
    for op_id, op in sorted(doc["operations"].items()):
        channel = _resolve(doc, op["channel"]["$ref"])
        msg = _message(doc, channel)
        who = "publish" if op["action"] == "send" else f"consumer `{op_id.split(':', 1)[1]}`"
        name = msg.get("name", "")
        link = f"[{name}](#{name.lower()})" if name in doc["components"]["schemas"] else f"`{name}`"
        lines.append(f"| `{channel['address']}` | {who} | {link} | {cell(channel.get('description', ''))} |")
    lines += ["", "## Messages", ""]
    for name, schema in sorted(doc["components"]["schemas"].items()):
        lines += [f"### {name}", "", cell(schema.get("description", "")), "",
                  "| field | number | type | meaning |", "|---|---|---|---|"]
        for field, s in sorted(schema.get("properties", {}).items(), key=lambda kv: kv[1].get("x-protobuf-field", 0)):
            kind = " ".join(filter(None, [s.get("type", ""), s.get("format", "")]))
            lines.append(f"| `{field}` | {s.get('x-protobuf-field', '')} | {kind} | {cell(s.get('description', ''))} |")
        lines.append("")
    return HEADER.format(script="scripts/gen_events_doc.py") + "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.exit(run(render, OUT, __doc__.splitlines()[0]))
