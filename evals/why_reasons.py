"""Experiment: a why-question's run that holds a sentence giving a reason scores ``CAUSE_BONUS`` more
(``services.ask.writers.extractive.reason_bonus``), the bonus chosen leave-one-group-out.

    .venv/bin/python -m evals.why_reasons        # -> evals/results/why-reasons-latest.json

The stack of ``evals.answer_rules`` (MIT 6.006 dev and the fields benchmark's dev lectures, both as captions); every
why-question not following another is answered in this process at each bonus of :data:`BONUSES`. Per question: any
citation inside the gold span / part, the first inside it. Groups: MIT 6.006 and each field; per group the bonus is
chosen on the others (first citation inside, then any, ties to the smaller bonus) and scored on the group.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from evals import fields as F
from evals.answer_rules import _ask, _questions, _row
from evals.asr_terms import RESULTS
from evals.retrieval import load_dev_set, upload_course

BONUSES = (0.0, 0.02, 0.04, 0.06, 0.1, 0.15)


def run() -> dict:
    from lecturecopilot import db
    from lecturecopilot_ops.stack import ephemeral
    from services.ask.search_index import EmbeddedSearchIndex
    from services.ask.server import AskServicer
    from services.ask.writers import extractive

    rows = []
    with tempfile.TemporaryDirectory() as tmp, ephemeral(Path(tmp) / "data") as eph:
        by_lecture, titles, mit_q = load_dev_set()
        cid, ids = upload_course(eph, "MIT 6.006 dev (why)", by_lecture, titles)
        course, fq = F.load("dev")
        fields = {lec["number"]: lec.get("field", "?") for lec in course["lectures"]}
        fcid, fids, flecs = F.process(eph, course, True, Path(tmp))
        spans = {r["number"]: r["spans"] for r in flecs}
        pool = db.make_pool(eph.settings, max_size=4)
        svc = AskServicer(eph.settings, pool, EmbeddedSearchIndex(Path(tmp) / "why", pool))
        for corpus, field, question, covered, inside in _questions(ids, mit_q, fids, spans, fq, fields):
            if not covered or not extractive._WHY_QUESTION.match(question):
                continue
            row = {"group": "mit6006" if corpus.startswith("mit") else field, "question": question}
            for b in BONUSES:
                extractive.CAUSE_BONUS = b
                r = _row(_ask(svc, cid if corpus.startswith("mit") else fcid, question), True, inside)
                row[str(b)] = {"any": bool(r.get("any")), "first": bool(r.get("first"))}
            rows.append(row)
        pool.close()
    return {"command": "python -m evals.why_reasons", "bonuses": BONUSES, "rows": rows, **evaluate(rows)}


def evaluate(rows: list[dict]) -> dict:
    def rate(rs, b, k):
        return statistics.mean([r[str(b)][k] for r in rs]) if rs else 0.0

    pooled = {str(b): {k: round(rate(rows, b, k), 3) for k in ("first", "any")} for b in BONUSES}
    groups = defaultdict(list)
    for r in rows:
        groups[r["group"]].append(r)
    folds = {}
    for g, held in groups.items():
        rest = [r for r in rows if r["group"] != g]
        b = max(BONUSES, key=lambda b: (rate(rest, b, "first"), rate(rest, b, "any"), -b))
        folds[g] = {"bonus": b, "questions": len(held), "first": rate(held, b, "first"), "first_0": rate(held, 0.0, "first"),
                    "any": rate(held, b, "any"), "any_0": rate(held, 0.0, "any")}
    n = len(rows)
    return {"pooled": pooled, "folds": folds,
            "held_out_first": round(sum(v["first"] * v["questions"] for v in folds.values()) / n, 3),
            "held_out_first_0": round(sum(v["first_0"] * v["questions"] for v in folds.values()) / n, 3),
            "held_out_any": round(sum(v["any"] * v["questions"] for v in folds.values()) / n, 3),
            "held_out_any_0": round(sum(v["any_0"] * v["questions"] for v in folds.values()) / n, 3)}


def main() -> None:
    res = run()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "why-reasons-latest.json").write_text(json.dumps(res, indent=2))
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=2))


if __name__ == "__main__":
    sys.exit(main())
