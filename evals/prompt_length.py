"""Experiment (did not pay, retired): the speech recognizer's vocabulary prompt cut at another length
than ``MAX_PROMPT_CHARS`` (480 characters).

    .venv/bin/python -m evals.prompt_length 240   # collect the fields dev lectures with the beam (~10 min)
    .venv/bin/python -m evals.prompt_length 720

``evals.slide_terms.collect(5)`` with ``Vocabulary.prompt``'s default cut replaced; prints the
transcription seconds, today's figures and those after the respelling at each cut-off (compare with
``python -m evals.slide_terms --beam 5``, collected the same way at 480).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    from services.transcribe import vocabulary

    cap = int(sys.argv[1])
    vocabulary.Vocabulary.prompt.__defaults__ = (cap,)
    from evals import slide_terms

    rows = slide_terms.collect(5)
    out = Path(__file__).resolve().parent / ".cache" / f"slide-terms-beam5-cap{cap}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows))
    result = slide_terms.compare(rows)
    print(json.dumps({k: result[k] for k in ("transcribe_seconds", "today", "by_cutoff")}, indent=1))
    print(json.dumps({k: v for k, v in result["held_out"].items() if k != "per_field"}, indent=1))


if __name__ == "__main__":
    main()
