"""Grounding of a cloud writer's sentences (issue 31): how often the check that releases a sentence
accepts one its cited passage does not support (false accept) and refuses one it does (false reject).

    .venv/bin/python -m evals.grounding              # -> evals/results/grounding-latest.json
    .venv/bin/python -m evals.grounding --semantic   # also a MiniLM cosine beside the word share

Three sets, each sentence checked against the passage it cites as ``services.ask.writers.fallback`` checks it
(citations taken out, markup stripped, the passage prefixed with its lecture's number and title):

- **labelled** (``tests/data/grounding.jsonl``, written by hand on real MIT 6.006 passages of
  ``data/mit6006/segments.jsonl``, and one heap passage): quotes and paraphrases (must be accepted),
  sentences with markup around a supported claim (accepted once stripped); injected instructions,
  addresses, invented numbers, off-topic claims sharing a word or two with the passage, and
  distortions (the passage's words saying something else: no word check can see these; counted so
  that the limit shows) must be refused. Split: ``dev`` = lectures 3 and 4 and the heap passage,
  ``test`` = lecture 5; ``test`` = lecture 5, reported, never tuned on.
- **fake writer**: every passage of the three lectures answered by ``tests/fakes/llm_server.py``
  (the fake the integration tests use) in its modes: ``ok`` and ``markup`` (accept), ``ungrounded``,
  ``invented_number`` and ``evil`` (reject).
- **real sentences**: every transcript sentence of 6 or more claim words, cited to its own passage
  (accept: a quote) and to the passage at the same position of another lecture (reject: a real
  sentence citing a passage that does not say it; another lecture may say something alike, so a few
  of these "false accepts" may be sound). Split as above, by the sentence's lecture.

The word-share threshold is chosen on the dev parts of the labelled and real sets together: the
fewest false accepts + false rejects (the four rates summed), the highest such threshold (a refused
sentence is asked again or answered by the extractive writer; a wrongly accepted one is shown). The
test parts are reported, never tuned on.

Rules: ``before``, the check on main before this change (kept below as :func:`before`: one shared
content word and no new digit); ``after``, :func:`services.ask.grounding.ungrounded`. With
``--semantic``, a third: the word share or the best cosine with a sentence of the passage (MiniLM,
in process) clearing a threshold chosen on dev the same way.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import Counter
from pathlib import Path

from services.ask import citations, grounding
from services.ask.domain import PromptPassage
from services.ask.refine import content_words
from services.ask.writers.cloud import user_prompt

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "tests" / "data" / "grounding.jsonl"
SEGMENTS = ROOT / "data" / "mit6006" / "segments.jsonl"
RESULTS = ROOT / "evals" / "results"
TEST_LECTURES = {5}
GRID = [round(0.05 * i, 2) for i in range(0, 20)]


def before(sentence: str, cited_texts: list[str]) -> str | None:
    """The check before issue 31 (``refine.ungrounded`` at 086441d): refused only when the sentence
    shares no content word with the passages, or has a word with a digit they lack."""
    words = content_words(sentence)
    source: set[str] = set()
    for text in cited_texts:
        source |= content_words(text)
    if words and not words & source:
        return "shares no word"
    invented = sorted(w for w in words - source if any(c.isdigit() for c in w))
    return f"has {', '.join(invented)}" if invented else None


def _segments() -> tuple[dict[str, dict], list[dict]]:
    segs = [json.loads(x) for x in SEGMENTS.read_text().splitlines() if x.strip()]
    return {f"L{s['lecture_no']}#{s['segment_index']}": s for s in segs}, segs


def _passage(seg: dict) -> dict:
    """What a row cites: the segment's text, and what compose adds for the check (its lecture's title
    before the text, its lecture's number)."""
    return {"passage": seg["text"], "cited": f"{seg['lecture_title']}: {seg['text']}", "lectures": (seg["lecture_no"],)}


def labelled() -> list[dict]:
    """The hand-labelled rows with the text each cites, the split and ``accept`` (the label)."""
    by_key, _ = _segments()
    rows = []
    for r in (json.loads(x) for x in LABELLED.read_text().splitlines() if x.strip()):
        seg = by_key.get(r.get("segment", ""))
        cites = _passage(seg) if seg else {"passage": r["passage"], "cited": r["passage"], "lectures": ()}
        rows.append({**r, **cites, "accept": r["label"] == "accept", "set": "labelled",
                     "split": "test" if seg and seg["lecture_no"] in TEST_LECTURES else "dev"})
    return rows


def fake_writer() -> list[dict]:
    """The fake writer's sentences (``tests/fakes/llm_server.answer_for``) for every passage, labelled by mode."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from fakes.llm_server import answer_for

    _, segs = _segments()
    rows = []
    for seg in segs:
        prompt = user_prompt("What does the lecture say here?", [PromptPassage(
            1, seg["lecture_no"], seg["lecture_title"], seg["start_s"], seg["end_s"], seg["text"])])
        for mode, accept in (("ok", True), ("markup", True), ("ungrounded", False), ("invented_number", False),
                             ("evil", False)):
            for sentence in citations.split_sentences(answer_for(prompt, mode, 0)):
                text = citations.extract(sentence)[0]  # invented_number: only the sentence with the figure
                rows.append({"sentence": text, **_passage(seg), "accept": accept if mode != "invented_number" else "4471" not in text,
                             "kind": mode, "set": "fake_writer", "split": "all"})
    return rows


def real_sentences(min_words: int = 6) -> list[dict]:
    """Transcript sentences cited to their own passage (accept) and to another lecture's (reject)."""
    _, segs = _segments()
    by_lecture: dict[int, list[dict]] = {}
    for s in segs:
        by_lecture.setdefault(s["lecture_no"], []).append(s)
    lectures = sorted(by_lecture)
    rows = []
    for seg in segs:
        other_lecture = by_lecture[lectures[(lectures.index(seg["lecture_no"]) + 1) % len(lectures)]]
        other = other_lecture[min(seg["segment_index"], len(other_lecture) - 1)]
        for sentence in re.split(r"(?<=[.?!])\s+", seg["text"]):
            if len(grounding.claim_stems(sentence)) < min_words:
                continue
            split = "test" if seg["lecture_no"] in TEST_LECTURES else "dev"
            rows.append({"sentence": sentence, **_passage(seg), "accept": True, "kind": "own_passage",
                         "set": "real_sentences", "split": split})
            rows.append({"sentence": sentence, **_passage(other), "accept": False, "kind": "other_lecture",
                         "set": "real_sentences", "split": split})
    return rows


def _rates(rows: list[dict], accepted: list[bool]) -> dict:
    pos = [a for r, a in zip(rows, accepted) if r["accept"]]
    neg = [a for r, a in zip(rows, accepted) if not r["accept"]]
    return {"n": len(rows), "should_accept": len(pos), "should_reject": len(neg),
            "false_reject": round(pos.count(False) / len(pos), 3) if pos else None,
            "false_accept": round(neg.count(True) / len(neg), 3) if neg else None}


def _by_kind(rows: list[dict], accepted: list[bool]) -> dict:
    """Per kind: how many, and the share accepted (should be 1 for accept kinds, 0 for reject kinds)."""
    out = {}
    for kind in sorted({r["kind"] for r in rows}):
        got = [a for r, a in zip(rows, accepted) if r["kind"] == kind]
        out[kind] = {"n": len(got), "accepted": round(sum(got) / len(got), 3),
                     "should": "accept" if next(r for r in rows if r["kind"] == kind)["accept"] else "reject"}
    return out


def _choose(sets: list[list[dict]], accepted_at) -> tuple[float, list[dict]]:
    """The threshold (of :data:`GRID`) with the fewest false accepts + false rejects (their rates
    summed over ``sets``), the highest of those (a sentence refused is asked again or answered by the
    extractive writer; one accepted wrongly is shown); and the sweep."""
    sweep = []
    for t in GRID:
        per = [_rates(rows, [accepted_at(row, t) for row in rows]) for rows in sets]
        cost = sum((r["false_accept"] or 0) + (r["false_reject"] or 0) for r in per)
        sweep.append({"threshold": t, "false_accept": [r["false_accept"] for r in per],
                      "false_reject": [r["false_reject"] for r in per], "cost": round(cost, 3)})
    best = min(s["cost"] for s in sweep)
    return max(s["threshold"] for s in sweep if s["cost"] == best), sweep


def evaluate(semantic: bool = False) -> dict:
    lab, fake, real = labelled(), fake_writer(), real_sentences()
    sets = {"labelled": lab, "fake_writer": fake, "real_sentences": real}
    for name, rows in (("labelled", lab), ("real_sentences", real)):
        for split in ("dev", "test"):
            sets[f"{name}_{split}"] = [r for r in rows if r["split"] == split]
    dev = [sets["labelled_dev"], sets["real_sentences_dev"]]

    def after(row: dict, t: float = grounding.THRESHOLD) -> bool:
        return _why(row, t) is None

    def old(row: dict) -> bool:  # main's check, on the text and passage as main gave them (markup and all)
        return before(row["sentence"], [row["passage"]]) is None

    chosen, sweep = _choose(dev, after)
    rules = {"before": old, "after": after}
    if semantic:
        rules["after_or_cosine"] = _semantic_rule(sets, after)
    out: dict = {"threshold_in_product": grounding.THRESHOLD, "threshold_chosen_on_dev": chosen,
                 "sweep_dev": sweep, "rules": {}}
    for name, rule in rules.items():
        verdicts = {k: [rule(r) for r in rows] for k, rows in sets.items()}
        out["rules"][name] = {k: {**_rates(sets[k], v), "by_kind": _by_kind(sets[k], v)} for k, v in verdicts.items()}
    out["rejected_by"] = dict(Counter(_reason(r) for r in lab + fake if not r["accept"]))
    took = []
    for r in lab * 3:  # each passage read afresh, as for an answer's first sentence citing it
        grounding._source.cache_clear()
        t0 = time.perf_counter()
        after(r)
        took.append(time.perf_counter() - t0)
    out["check_us_per_sentence"] = {"median": round(statistics.median(took) * 1e6), "max": round(max(took) * 1e6)}
    out["labelled_misses_after"] = [{"sentence": r["sentence"], "kind": r["kind"], "label": r["label"],
                                     "why": _reason(r)} for r in lab if after(r) != r["accept"]]
    return out


def _why(row: dict, threshold: float = grounding.THRESHOLD) -> str | None:
    """The product's check of a row's sentence (markup stripped first, as compose does)."""
    return grounding.ungrounded(grounding.plain_text(row["sentence"]), [row["cited"]], row["lectures"], threshold)


_CHECKS = (("shares no word", "no word shared"), ("address", "address"), ("request to act", "request or announcement"),
           ("says what the passage", "word share"), ("which the passage it cites does not", "number"))


def _reason(row: dict) -> str:
    """Which check refused the row's sentence ("accepted" when none did)."""
    why = _why(row)
    return "accepted" if why is None else next(name for part, name in _CHECKS if part in why)


def _semantic_rule(sets: dict, after):
    """``after`` with the word share replaced by: share ≥ THRESHOLD or best cosine (MiniLM) with a
    sentence of the passage ≥ c, c chosen on dev like the threshold."""
    import numpy as np

    from lecturecopilot.models import embed
    from lecturecopilot.settings import Settings

    model = Settings().embed_model
    rows = [r for rows in sets.values() for r in rows]
    cache: dict[str, np.ndarray] = {}
    texts = sorted({r["sentence"] for r in rows} | {s for r in rows for s in re.split(r"(?<=[.?!])\s+", r["cited"])})
    for i in range(0, len(texts), 256):
        for t, v in zip(texts[i:i + 256], embed(model, texts[i:i + 256])):
            cache[t] = v

    def cos(row: dict) -> float:
        passage = np.stack([cache[s] for s in re.split(r"(?<=[.?!])\s+", row["cited"])])
        return float((passage @ cache[row["sentence"]]).max())

    def rule_at(row: dict, c: float) -> bool:
        if after(row):
            return True
        why = _why(row)
        return why.startswith("a sentence says what") and cos(row) >= c  # only the share may be overruled

    c, _ = _choose([sets["labelled_dev"], sets["real_sentences_dev"]], rule_at)
    return lambda row: rule_at(row, c)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--semantic", action="store_true", help="also the word share or a MiniLM cosine")
    args = ap.parse_args()
    out = evaluate(args.semantic)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "grounding-latest.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"threshold in the product {out['threshold_in_product']}, chosen on dev {out['threshold_chosen_on_dev']}")
    print(f"{'rule':16} {'set':16} {'n':>5} {'false accept':>13} {'false reject':>13}")
    for name, per_set in out["rules"].items():
        for k, r in per_set.items():
            print(f"{name:16} {k:16} {r['n']:5d} {r['false_accept']!s:>13} {r['false_reject']!s:>13}")
    print("refused because:", out["rejected_by"])
    print(f"check of a sentence (its passage read afresh): median {out['check_us_per_sentence']['median']} µs, "
          f"max {out['check_us_per_sentence']['max']} µs")
    for m in out["labelled_misses_after"]:
        print(f"  missed ({m['kind']}, should {m['label']}): {m['sentence'][:100]}  -> {m['why']}")


if __name__ == "__main__":
    main()
