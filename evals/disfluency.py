"""Disfluency removal on real lecture speech: what changes, and a check that nothing else does.

    .venv/bin/python -m evals.disfluency          # prints the report (Markdown; seconds, nothing kept)

Every sentence of the MIT 6.006 transcripts (``data/mit6006/segments.jsonl``, automatic speech
recognition of three real lectures) goes through ``services.ask.disfluency.clean`` as an answer's
opening sentence would. Reported: how many sentences change, how many words go, that every
cleaned sentence's words are a subsequence of the spoken ones (nothing substituted or invented; must
be all of them), and a before/after table of a fixed sample.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from services.ask.disfluency import clean, only_deletes, words

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "mit6006" / "segments.jsonl"


def sentences() -> list[str]:
    segs = [json.loads(x) for x in DATA.read_text().splitlines() if x.strip()]
    return [s for seg in segs for s in re.split(r"(?<=[.?!])\s+", seg["text"].strip()) if s]


def run(sample: int = 24, seed: int = 6) -> dict:
    pairs = [(s, clean(s, opening=True)) for s in sentences()]
    changed = [(a, b) for a, b in pairs if words(a) != words(b)]
    removed = sum(len(words(a)) - len(words(b)) for a, b in pairs)
    total = sum(len(words(a)) for a, _ in pairs)
    violations = [(a, b) for a, b in pairs if not only_deletes(a, b)]
    rnd = random.Random(seed)
    shown = rnd.sample([p for p in changed if len(p[0]) < 260], min(sample, len(changed)))
    return {"sentences": len(pairs), "changed": len(changed), "words": total, "words_removed": removed,
            "only_deletions": len(pairs) - len(violations), "violations": violations[:5], "examples": shown}


def markdown(r: dict) -> str:
    lines = ["Command `python -m evals.disfluency`: every sentence of the MIT 6.006 transcripts (lectures 3-5) "
             "cleaned as an answer's first sentence.", "",
             f"- sentences: {r['sentences']}, changed: {r['changed']} ({r['changed'] / r['sentences']:.1%})",
             f"- words: {r['words']}, removed: {r['words_removed']} ({r['words_removed'] / r['words']:.1%})",
             f"- cleaned sentences whose words are a subsequence of the spoken ones: {r['only_deletions']} of "
             f"{r['sentences']}", "", "| spoken | in an answer |", "|---|---|"]
    for a, b in r["examples"]:
        lines.append(f"| {a.replace('|', '/')} | {b.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    print(markdown(run()))


if __name__ == "__main__":
    main()
