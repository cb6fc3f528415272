"""Two post-fusion candidates tried on the lists ``evals.cv`` collected (``--cached`` input), kept
out of the product because they did not pay on held-out folds:

- a **lecture prior** (passage-level evidence combined with document-level evidence, as in
  Callan, "Passage-level evidence in document retrieval", SIGIR 1994): each candidate's fused
  score plus ``mu`` × its lecture's score (the sum of the lecture's three best fused candidates,
  relative to the best lecture's) × the best fused score;
- **neighbour context**: plus ``nu`` × the best fused score of a candidate adjacent to it in the
  same lecture (ends or starts within 2 s of it).

    .venv/bin/python -m evals.cv --cached      # (or without --cached: collects the lists first)
    .venv/bin/python -m evals.cv_lecture_prior

The default fusion weights (``RetrievalConfig``) are fixed; ``(mu, nu)`` is chosen on four folds by
MRR and scored on the fifth (5 folds × 6 repeats), as ``evals.cv`` does for the weights.
"""

from __future__ import annotations

import json

import numpy as np

from evals.cv import CACHE, LISTS, cross_validate, load, metrics, ranks
from services.ask.retrieve import RetrievalConfig

GRID = [(mu, nu) for mu in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5) for nu in (0.0, 0.1, 0.2, 0.3, 0.5)]


def adjusted(mu: float, nu: float):
    """The ``adjust`` hook of :func:`evals.cv.ranks` that adds the lecture prior (``mu``) and the
    neighbour context (``nu``) to a question's fused scores."""
    def adjust(q, fused: np.ndarray) -> np.ndarray:
        lecture = [sp[0] for sp in q.spans]
        final = fused.copy()
        if mu:
            best3 = {lec: np.sort(fused[[k for k, x in enumerate(lecture) if x == lec]])[::-1][:3].sum()
                     for lec in set(lecture)}
            top = max(best3.values()) or 1.0
            final += mu * np.asarray([best3[lec] / top for lec in lecture]) * fused.max()
        if nu:
            near = np.zeros_like(fused)
            for c, a in enumerate(q.spans):
                for d, b in enumerate(q.spans):
                    if c != d and a[0] == b[0] and (abs(a[2] - b[1]) < 2 or abs(b[2] - a[1]) < 2):
                        near[c] = max(near[c], fused[d])
            final += nu * near
        return final
    return adjust


def first_hit_ranks(rows, mu: float, nu: float) -> np.ndarray:
    """Rank (1–6) of each question's first hit under the default weights plus the two terms; 0 = miss."""
    weights = RetrievalConfig().weights
    grid = np.asarray([[weights.get(n, 0.0) for n in LISTS]], dtype="float64")
    return ranks(rows, LISTS, "weighted", grid, adjust=adjusted(mu, nu))[:, 0]


def main() -> None:
    rows = [q for name in ("dev", "fresh") for q in load(CACHE / f"cv-lists-{name}.json") if q.covered]
    rm = np.stack([first_hit_ranks(rows, mu, nu) for mu, nu in GRID], axis=1)
    cv = cross_validate(rm, folds=5, repeats=6)
    chosen = {str(GRID[c]): cv["chosen"].count(c) for c in set(cv["chosen"])}
    print(json.dumps({"questions": len(rows), "without": metrics(rm[:, 0]),
                      "in_sample": {str(g): metrics(rm[:, j]) for j, g in enumerate(GRID)},
                      "cv_mean": cv["mean"], "cv_sd": cv["sd"], "chosen": chosen}, indent=1))


if __name__ == "__main__":
    main()
