"""Writes docs/asyncapi.json, the pipeline's AsyncAPI document, from the stages the worker services
run (``make asyncapi``). ``--check`` writes nothing and exits 1 when the committed file differs.

Usage: python scripts/gen_asyncapi.py [--check] [--out PATH]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from docgen import run  # noqa: E402

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
    """``[--check] [--out PATH]`` (:func:`docgen.run`)."""
    return run(render, OUT, __doc__.splitlines()[0], argv, remedy="make asyncapi")


if __name__ == "__main__":
    sys.exit(main())
