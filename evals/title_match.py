"""Experiment: the slide title in the extractive writer's choice of run (``TITLE_WEIGHT``), weight chosen
leave-one-field-out.

    .venv/bin/python -m evals.title_match        # -> evals/results/title-match-latest.json

The fields benchmark's dev lectures are uploaded as narrated videos (slides read by the product, speech
recognised) into a throw-away stack; every covered question that does not follow another is answered in
this process (:func:`services.ask.answer.answer_question`) with ``TITLE_WEIGHT`` at each value of
:data:`WEIGHTS`. Figures per question: the first citation inside the question's part (± 1 s), any citation
inside it. For each field the weight is chosen on the other fields (first citation inside, ties to the
smaller weight) and scored on the held-out field; reported beside weight 0 (the product before).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from evals import fields as F
from evals.answer_rules import _ask
from evals.asr_terms import RESULTS

WEIGHTS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5)


def run() -> dict:
    from lecturecopilot import db
    from lecturecopilot_ops.stack import ephemeral
    from services.ask.search_index import EmbeddedSearchIndex
    from services.ask.server import AskServicer
    from services.ask.writers import extractive

    rows = []
    with tempfile.TemporaryDirectory() as tmp, ephemeral(Path(tmp) / "data") as eph:
        course, fq = F.load("dev")
        fields = {lec["number"]: lec.get("field", "?") for lec in course["lectures"]}
        cid, ids, flecs = F.process(eph, course, False, Path(tmp))
        spans = {r["number"]: r["spans"] for r in flecs}
        num = {v: k for k, v in ids.items()}
        rcid, rnum, rspans, rq = _robustness(eph)
        pool = db.make_pool(eph.settings, max_size=4)
        svc = AskServicer(eph.settings, pool, EmbeddedSearchIndex(Path(tmp) / "titles", pool))
        asked = [(cid, num, spans, fields[q["lecture"]], q) for q in fq if q["covered"] and not q.get("after")] + \
            [(rcid, rnum, rspans, "algorithms (robustness)", q) for q in rq if q["covered"] and not q.get("after")]
        for cid, num, spans, field, q in asked:
            a0, b0 = spans[q["lecture"]][q["part"]]
            row = {"field": field, "question": q["question"], "form": q.get("form", "?")}
            for w in WEIGHTS:
                extractive.TITLE_WEIGHT = w
                cites = [c for s in _ask(svc, cid, q["question"]) for c in s.cites]
                hits = [num.get(c.lecture_id) == q["lecture"] and a0 - 1 <= c.t_s <= b0 + 1 for c in cites]
                row[str(w)] = {"first": bool(hits and hits[0]), "any": any(hits), "answered": bool(cites)}
            rows.append(row)
        pool.close()
    return {"command": "python -m evals.title_match", "weights": WEIGHTS, "rows": rows, **evaluate(rows)}


def _robustness(eph):
    """The robustness benchmark's six algorithms lectures (espeak-ng voice, slides) in a course of their own:
    (course id, lecture number by id, part spans by number, questions)."""
    from evals.asr_terms import LECTURES, lecture_video
    from evals.robustness import load_questions, spans_of, upload

    course = json.loads(LECTURES.read_text())
    cid = eph.create_course("robustness [titles]")
    ids, spans = {}, {}
    for lec in course["lectures"]:
        video, starts = lecture_video(lec, "espeak")
        duration = json.loads(video.with_suffix(".json").read_text())["duration_s"]
        ids[lec["number"]] = upload(eph, cid, video, lec["title"], lec["number"])
        spans[lec["number"]] = spans_of(lec, starts, duration)
        if eph.wait_ready(ids[lec["number"]], timeout_s=900)["status"] != "ready":
            raise RuntimeError(f"lecture {lec['number']} failed")
    return cid, {v: k for k, v in ids.items()}, spans, load_questions()


def evaluate(rows: list[dict]) -> dict:
    """Pooled figures per weight, and leave-one-field-out: per field, the weight best on the others."""
    def rate(rs, w, k):
        return statistics.mean([r[str(w)][k] for r in rs]) if rs else 0.0

    pooled = {str(w): {k: round(rate(rows, w, k), 3) for k in ("first", "any")} for w in WEIGHTS}
    by_field = defaultdict(list)
    for r in rows:
        by_field[r["field"]].append(r)
    folds = {}
    for f, held in by_field.items():
        rest = [r for r in rows if r["field"] != f]
        w = max(WEIGHTS, key=lambda w: (rate(rest, w, "first"), -w))
        folds[f] = {"weight": w, "first": rate(held, w, "first"), "first_w0": rate(held, 0.0, "first"),
                    "any": rate(held, w, "any"), "any_w0": rate(held, 0.0, "any"), "questions": len(held)}
    d = [v["first"] - v["first_w0"] for v in folds.values()]
    return {"pooled": pooled, "folds": folds,
            "held_out_first": round(statistics.mean(v["first"] for v in folds.values()), 3),
            "held_out_first_w0": round(statistics.mean(v["first_w0"] for v in folds.values()), 3),
            "held_out_gain": f"{statistics.mean(d):+.3f} ± {statistics.pstdev(d):.3f}"}


def main() -> None:
    res = run()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "title-match-latest.json").write_text(json.dumps(res, indent=2))
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=2))


if __name__ == "__main__":
    sys.exit(main())
