"""Which run of sentences an answer quotes, scored by late interaction as well as by cosine:

    .venv/bin/python -m evals.cv_windows_late            # collect (a throw-away stack), then CV
    .venv/bin/python -m evals.cv_windows_late --cached

``evals.cv_windows`` found that the run the extractive writer quotes (best cosine of a 2–3-sentence
run of the top 3 passages, minus 0.15 per passage rank) starts inside the gold span for about half
of the covered questions, while some run of those passages does for 0.84: the sentence scorer,
not retrieval, loses the rest. Late interaction (``evals.cv_late``: each question word piece
matched to its most similar token of the run, MiniLM's own token embeddings, IDF-weighted over the
course, normalised by the question's total IDF) is the strongest single passage scorer measured
here, so it is tried at the run level: the choice rule ``c · cos + m · late − penalty · rank``,
``c`` in {0, 1}, ``m`` and the penalty chosen per fold (5 folds × 6 repeats over the covered dev +
fresh questions with a gold span), scored by the share of questions whose chosen run holds a
sentence starting inside the gold span.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys

import numpy as np

from evals.cv import dev_course_index
from evals.cv_windows import WIDTHS, chosen_inside, cross_validate, window_rows
from evals.retrieval import RESULTS

PENALTIES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
LATE_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)


def collect(questions: list[dict]) -> list[dict]:
    """Per question: ``runs`` = [(rank, cos, late, inside)] over the product's top 3 passages."""
    from evals import cv_late
    from lecturecopilot import models
    from lecturecopilot.settings import Settings
    from services.ask import gate, retrieve, spelling

    out = []
    settings = Settings()
    with dev_course_index("MIT 6.006 (cv windows late)") as (index, course, lecture_of):
        vocab = index.course_vocabulary(course)
        cv_late.late_lists(index, course, "warm up", None, {})  # the course's word-piece statistics
        _, docs, df = cv_late._state[course]
        n = len(docs)
        for q in questions:
            sq = gate.request_topic(spelling.correct(q["question"], vocab, index.course_compounds(course)))
            v = models.embed(settings.embed_model, [sq])[0]
            pieces, qv = cv_late._tokens([sq])[0]
            idf = np.asarray([math.log((n + 1) / (df.get(p, 0) + 0.5)) for p in pieces], dtype="float32")
            runs = []
            for rank, p in enumerate(retrieve.retrieve(index, course, None, v, sq, k=6)[:3]):
                entry = index.sentences.get((p.hit.lecture_id, p.hit.segment_idx))
                if not entry or not len(pieces):
                    continue
                sents, vecs = entry
                toks = [t[1] for t in cv_late._tokens([s.text for s in sents])]
                same = lecture_of.get(p.hit.lecture_id) == q["lecture_no"]
                for w in WIDTHS:
                    for i in range(0, max(1, len(sents) - w + 1)):
                        j = min(len(sents), i + w)
                        s = vecs[i:j].sum(axis=0)
                        cos = float(s @ v / (np.linalg.norm(s) + 1e-9))
                        dv = np.vstack([t for t in toks[i:j] if len(t)] or [np.zeros((1, 384), dtype="float32")])
                        late = float(idf @ (qv @ dv.T).max(axis=1) / max(1e-9, float(idf.sum())))
                        inside = same and any(q["gold_start_s"] <= x.start_s <= q["gold_end_s"] for x in sents[i:j])
                        runs.append((rank, cos, late, bool(inside)))
            out.append({"question": q["question"], "runs": runs})
    return out


def late_rule(a: np.ndarray, rule: tuple) -> np.ndarray:
    """The runs' scores under ``rule = (penalty, c, m)``: c · cos + m · late − penalty · rank."""
    pen, c, mw = rule
    return c * a[:, 1] + mw * a[:, 2] - pen * a[:, 0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cached", action="store_true")
    args = parser.parse_args()
    rows = window_rows("cv-windows-late", collect, args.cached)
    grid = [g for g in itertools.product(PENALTIES, (0.0, 1.0), LATE_WEIGHTS) if g[1] or g[2]]
    m = chosen_inside(rows, grid, late_rule)
    cos_only = [i for i, g in enumerate(grid) if g[1] == 1.0 and g[2] == 0.0]
    out = {"questions": len(rows), "any_run_inside": float(np.mean([any(x[3] for x in r["runs"]) for r in rows])),
           "product_rule (0.15, cos)": float(m[:, grid.index((0.15, 1.0, 0.0))].mean()),
           "cv_with_late": cross_validate(m, grid), "cv_cos_only": cross_validate(m[:, cos_only], [grid[i] for i in cos_only]),
           "in_sample_best": {"rule": grid[int(m.mean(axis=0).argmax())], "inside": float(m.mean(axis=0).max())},
           "by_rule": {f"{p}/{c}/{mw}": float(m[:, i].mean()) for i, (p, c, mw) in enumerate(grid)},
           "command": "python -m evals.cv_windows_late " + " ".join(sys.argv[1:])}
    (RESULTS / "cv-windows-late-latest.json").write_text(json.dumps(out, indent=2))
    json.dump({k: v for k, v in out.items() if k != "by_rule"}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
