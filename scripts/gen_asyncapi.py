"""Writes docs/asyncapi.json, the pipeline's AsyncAPI document, from the stages the worker services
run (``make asyncapi``). ``--check`` writes nothing and exits 1 when the committed file differs.

Usage: python scripts/gen_asyncapi.py [--check] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OUT = ROOT / "docs" / "asyncapi.json"


def render() -> str:
    """The document as the committed file holds it (sorted keys, 2-space indent, final newline)."""
    from lecturecopilot_ops.asyncapi import document
    from lecturecopilot.settings import Settings
    from services.index.__main__ import stages as index_stages
    from services.transcribe.__main__ import stages as transcribe_stages

    defaults = Settings.model_construct()
    doc = document({"transcribe": transcribe_stages(defaults), "index": index_stages(defaults)})
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file differs; write nothing")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = args.out.is_file() and args.out.read_text() == text
        if not same:
            print(f"{args.out} is out of date: run `make asyncapi`", file=sys.stderr)
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
