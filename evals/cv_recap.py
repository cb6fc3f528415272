"""Recaps: a passage that goes over an earlier lecture again, tried as a post-fusion penalty (after
``evals.cv``, on its collected lists):

    .venv/bin/python -m evals.cv_recap

Lecturers open a lecture by going over the last one ("last time we saw decision trees..."). A
question about that topic then finds both the passage that taught it and the recap, and the
recap, denser in the topic's words, often ranks first: of the 40 recall@1 misses over the 119
covered dev + fresh questions (the product's default weights), 11 ranked first a passage of a
*later* lecture than the gold one (``top1_misses_by_lecture``; lecture 5 opens by reviewing lecture 4). The
candidate signal needs no word list: a passage's ``recap`` score is its highest cosine
(all-MiniLM-L6-v2, passage text) with any passage of an *earlier* lecture of the course; the
fused score is lowered by ``weight × max(0, recap − threshold)`` (weight and threshold chosen per
fold, like the fusion weights; weight 0 is the product as it is).
"""

from __future__ import annotations

import json
import sys

import numpy as np

from evals import cv

WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0)
THRESHOLDS = (0.4, 0.5, 0.6, 0.7, 0.8)


def recap_scores() -> dict[tuple[int, float], float]:
    """(lecture number, start_s rounded to 0.1 s) → the passage's recap score, over the dev course
    loaded as ``evals.cv`` loads it (its passages are cut the same way every time)."""
    from lecturecopilot import models
    from lecturecopilot.settings import Settings

    with cv.dev_course_index() as (index, course, lecture_of):
        segs = cv.course_passages(index, course)
        vecs = np.asarray(models.embed(Settings().embed_model, [h.text for h in segs]))
        numbers = np.asarray([lecture_of[h.lecture_id] for h in segs])
        sims = vecs @ vecs.T
        out = {}
        for i, h in enumerate(segs):
            earlier = numbers < numbers[i]
            out[(int(numbers[i]), round(h.start_s, 1))] = float(sims[i, earlier].max()) if earlier.any() else 0.0
        return out


def top1_misses(rows: list, grid: np.ndarray) -> dict[str, int]:
    """The recall@1 misses of the fused ranking (``grid``'s one weighting) by where the first-ranked
    passage lies against the gold lecture: ``later``, ``earlier``, ``same`` lecture, or ``no_gold``
    among the candidates."""
    out = {"later": 0, "earlier": 0, "same": 0, "no_gold": 0}
    for q in rows:
        fused = (cv.feature_matrix(q, cv.LISTS, "weighted") @ grid.T)[:, 0]
        top = int(np.argmax(fused))
        gold = [sp[0] for sp, g in zip(q.spans, q.gold) if g]
        if q.gold[top]:
            continue
        if not gold:
            out["no_gold"] += 1
        else:
            out["later" if q.spans[top][0] > gold[0] else "earlier" if q.spans[top][0] < gold[0] else "same"] += 1
    return out


def main() -> None:
    rows = [q for name in ("dev", "fresh") for q in cv.load(cv.CACHE / f"cv-lists-{name}.json") if q.covered]
    recap = recap_scores()
    grid = np.asarray([[1.0, 1.5, 2.0, 2.0]])  # the product's default weights (RetrievalConfig)
    combos = [(w, t) for w in WEIGHTS for t in THRESHOLDS]
    cols = []
    for w, t in combos:
        def adjust(q, fused, w=w, t=t):
            r = np.asarray([recap.get((sp[0], round(sp[1], 1)), 0.0) for sp in q.spans])
            return fused - w * np.maximum(0.0, r - t)
        cols.append(cv.ranks(rows, cv.LISTS, "weighted", grid, adjust=adjust)[:, 0])
    rm = np.stack(cols, axis=1)
    res = cv.cross_validate(rm, 5, 6)
    common = max(set(res["chosen"]), key=res["chosen"].count)
    rr = np.where(rm > 0, 1.0 / np.maximum(rm, 1), 0.0).mean(axis=0)
    out = {"n": len(rows), "cv_mean": res["mean"], "cv_sd": res["sd"],
           "without": cv.metrics(rm[:, 0]),
           "in_sample_best": {"weight": combos[int(rr.argmax())][0], "threshold": combos[int(rr.argmax())][1],
                              **cv.metrics(rm[:, int(rr.argmax())])},
           "most_chosen": {"weight": combos[common][0], "threshold": combos[common][1],
                           "times": res["chosen"].count(common), "of": len(res["chosen"])},
           "splits_penalising": sum(combos[c][0] > 0 for c in res["chosen"]),
           "top1_misses_by_lecture": top1_misses(rows, grid),
           "recap_by_passage": {str(no): [[start, round(score, 3)] for (n, start), score in sorted(recap.items()) if n == no]
                                for no in sorted({n for n, _ in recap})},
           "command": "python -m evals.cv_recap " + " ".join(sys.argv[1:])}
    cv.publish(out, "cv-recap-latest.json")


if __name__ == "__main__":
    main()
