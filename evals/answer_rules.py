"""What each rule of the extractive answer path pays, corpus by corpus and field by field (issue 30, item 5).

    .venv/bin/python -m evals.answer_rules        # -> evals/results/answer-rules-latest.json, answer-rules.md

One throw-away stack holds two courses, both uploaded as captions through the public API: MIT 6.006 dev
(``data/mit6006``, gold spans) and the fields benchmark's dev lectures (``evals/fields``, one part per
question, ten fields). Every question that does not follow another is then answered in this process
through :func:`services.ask.answer.answer_question`, once with the product as it is and once with each rule
turned off (:data:`RULES`), so each rule's worth is the difference on the same processed courses. Figures:
right call (covered answered, uncovered declined), and over answered covered questions: any citation inside
the gold span / part, the first citation inside it, the share of citations inside it, words per answer. A
rule pays when turning it off loses on a corpus it was not written for (the fields lectures are not the
algorithms course most rules were read from); per-field figures give the spread. The gate's row only shows
that its coverage term carries the decision at the fitted threshold; its signals are compared, refitted per
held-out field, by ``python -m evals.gate_fields``.
"""

from __future__ import annotations

import contextlib
import json
import re
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from evals import fields as F
from evals.asr_terms import RESULTS
from evals.retrieval import load_dev_set, upload_course


@contextlib.contextmanager
def _patched(module, name: str, value):
    """``module.name`` set to ``value`` inside the block (an AttributeError if the rule was renamed)."""
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def _rules():
    """Rule name → a function of the servicer giving a context manager that turns the rule off."""
    import dataclasses

    from services.ask import answer, gate
    from services.ask.writers import extractive

    original = extractive.extractive_answer
    return {
        "as is": lambda svc: contextlib.nullcontext(),
        "no answer_run (question skip, chatter trim, growth to 15 words)": lambda svc: _patched(
            extractive, "answer_run", lambda sents, i, j: (i, j)),
        "no continuation (a run may open on 'Which is …')": lambda svc: _patched(extractive, "continues", lambda text: False),
        "no definition opening (a 'What is X?' run opens where the best window is)": lambda svc: _patched(
            extractive, "_on_definition", lambda index, passages, query, run: run),
        "no _more (the best run only)": lambda svc: _patched(extractive, "_more", lambda *a, **k: []),
        "no chatter judge": lambda svc: _patched(extractive, "is_chatter", lambda text: False),
        "no rank penalty": lambda svc: _patched(extractive, "extractive_answer", lambda *a, **k: original(
            *a, **{**k, "rank_penalty": 0.0})),
        "no spelling correction": lambda svc: _patched(answer, "corrected", lambda index, course_id, q: q),
        "no unsaid-subject veto in the gate": lambda svc: _patched(gate, "UNSAID_ZIPF", 0.0),
        "no coverage in the gate (weight 0, threshold not refitted)": lambda svc: _patched(
            svc, "config", dataclasses.replace(svc.config, gate_coverage_weight=0.0)),
    }


def _ask(svc, course_id: str, question: str):
    from services.ask import answer

    events = list(answer.answer_question(answer.AnswerRequest(course_id, None, question), svc.ports, svc.config))
    return [e.sentence for e in events if hasattr(e, "sentence")]


def _row(sents, covered: bool, inside) -> dict:
    cites = [c for s in sents for c in s.cites]
    declined = not cites
    row = {"covered": covered, "right": (not declined) if covered else declined}
    if covered and not declined:
        hits = [inside(c) for c in cites]
        row.update({"any": any(hits), "first": hits[0], "share": sum(hits) / len(hits),
                    "words": sum(len(re.findall(r"[A-Za-z0-9]+", s.text)) for s in sents)})
    return row


def _summary(rows: list[dict]) -> dict:
    ans = [r for r in rows if "any" in r]
    out = {"questions": len(rows), "right_call": statistics.mean([r["right"] for r in rows] or [0.0])}
    for k in ("any", "first", "share", "words"):
        out[k] = statistics.mean([float(r[k]) for r in ans] or [0.0])
    return out


def _questions(ids: dict, by_lecture_gold, fids: dict, spans: dict, fq: list[dict], fields: dict) -> list[tuple]:
    """(corpus, field, question, covered, inside(citation) -> bool) for every question not following another."""
    num = {v: k for k, v in ids.items()}
    fnum = {v: k for k, v in fids.items()}
    out = []
    for q in by_lecture_gold:
        out.append(("mit6006 dev", "algorithms", q["question"], q["covered"],
                    (lambda q: lambda c: num.get(c.lecture_id) == q["lecture_no"]
                     and q["gold_start_s"] <= c.t_s <= q["gold_end_s"])(q)))
    for q in fq:
        if q.get("after"):
            continue
        if q["covered"]:
            a0, b0 = spans[q["lecture"]][q["part"]]
            inside = (lambda a0, b0, n: lambda c: fnum.get(c.lecture_id) == n and a0 - 1 <= c.t_s <= b0 + 1)(
                a0, b0, q["lecture"])
        else:
            inside = None
        out.append(("fields dev", fields.get(q["lecture"], "uncovered"), q["question"], q["covered"], inside))
    return out


def run() -> dict:
    from lecturecopilot import db
    from lecturecopilot_ops.stack import ephemeral
    from services.ask.search_index import EmbeddedSearchIndex
    from services.ask.server import AskServicer

    with tempfile.TemporaryDirectory() as tmp, ephemeral(Path(tmp) / "data") as eph:
        by_lecture, titles, mit_q = load_dev_set()
        cid, ids = upload_course(eph, "MIT 6.006 dev (rules)", by_lecture, titles)
        course, fq = F.load("dev")
        fields = {lec["number"]: lec.get("field", "?") for lec in course["lectures"]}
        fcid, fids, flecs = F.process(eph, course, True, Path(tmp))
        spans = {r["number"]: r["spans"] for r in flecs}
        pool = db.make_pool(eph.settings, max_size=4)
        svc = AskServicer(eph.settings, pool, EmbeddedSearchIndex(Path(tmp) / "rules", pool))
        qs = _questions(ids, mit_q, fids, spans, fq, fields)
        results = {}
        for name, off in _rules().items():
            rows = defaultdict(list)
            with off(svc):
                for corpus, field, question, covered, inside in qs:
                    row = _row(_ask(svc, cid if corpus.startswith("mit") else fcid, question), covered, inside)
                    rows[corpus].append(row)
                    if covered and corpus == "fields dev":
                        rows["field: " + field].append(row)
            results[name] = {k: _summary(v) for k, v in rows.items()}
            print(name, {k: round(v["right_call"], 3) for k, v in results[name].items() if ":" not in k}, flush=True)
        pool.close()
    return {"command": "python -m evals.answer_rules", "machine": "2 cores, no GPU", "results": results}


def markdown(res: dict) -> str:
    """Per rule and corpus: the figures with the rule off, as differences from "as is"."""
    base = res["results"]["as is"]
    lines = [f"Command `{res['command']}`; {res['machine']}. Each row: the rule turned off, minus the product as "
             "is (positive: the product does better without the rule).", "",
             "| rule off | corpus | right call | any inside | first inside | share inside | words |",
             "|---|---|---|---|---|---|---|"]
    for name, by in res["results"].items():
        for corpus in ("mit6006 dev", "fields dev"):
            r, b = by[corpus], base[corpus]
            if name == "as is":
                cells = [f"{r[k]:.3f}" for k in ("right_call", "any", "first", "share")] + [f"{r['words']:.1f}"]
            else:
                cells = [f"{r[k] - b[k]:+.3f}" for k in ("right_call", "any", "first", "share")] + \
                        [f"{r['words'] - b['words']:+.1f}"]
            lines.append(f"| {name} | {corpus} | " + " | ".join(cells) + " |")
    lines += ["", "Per field (fields dev, covered questions): any citation inside the part with the rule off minus "
              "as is; mean ± spread over the ten fields.", "", "| rule off | any inside, per field | first inside, per field |",
              "|---|---|---|"]
    for name, by in res["results"].items():
        if name == "as is":
            continue
        fk = [k for k in by if k.startswith("field: ")]
        d_any = [by[k]["any"] - base[k]["any"] for k in fk]
        d_first = [by[k]["first"] - base[k]["first"] for k in fk]
        lines.append(f"| {name} | {statistics.mean(d_any):+.3f} ± {statistics.pstdev(d_any):.3f} | "
                     f"{statistics.mean(d_first):+.3f} ± {statistics.pstdev(d_first):.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    res = run()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "answer-rules-latest.json").write_text(json.dumps(res, indent=2))
    (RESULTS / "answer-rules.md").write_text(markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    sys.exit(main())
