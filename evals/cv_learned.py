"""A learned fusion of the product's lists (learning to rank) against the product's grid-chosen
weighted fusion, on the same folds.

    .venv/bin/python -m evals.cv_learned            # on the lists evals.cv collected last (dev + fresh)

The product sums min-max normalised scores with one weight per list, chosen from a grid
(``evals.cv``). A learned ranker can use more of each list's evidence at once: here every list
gives two features per candidate, its min-max score and its rank's reciprocal 10 / (10 + rank)
(0 where the list does not hold the candidate), over the five lists ``evals.cv`` collects
(dense, BM25, sentence windows, character n-grams, chapters): ten weights. They are fitted on the
k−1 training folds by RankNet's pairwise logistic loss (Burges et al. 2005: every hit against
every non-hit of the same question, log(1 + exp(−(s_hit − s_other)))) or by ListNet's top-one
softmax cross-entropy (Cao et al. 2007), with an L2 penalty λ, by
projected gradient descent with the weights kept ≥ 0 (so a candidate no list holds stays out, as
in the product), started from the product's default weights. The held-out fold is then ranked as
``evals.cv.ranks`` ranks it (overlap rule, top 6). Each λ is reported; the grid baseline is
``evals.cv``'s (weights chosen per fold by MRR), paired split by split.
"""

from __future__ import annotations

import numpy as np

from evals.cv import CACHE, LISTS, cross_validate, feature_matrix, load, metrics, publish, ranks, splits, weight_grid

NAMES = (*LISTS, "chapter")
LAMBDAS = (0.001, 0.01, 0.1)


def features(q, names=NAMES) -> np.ndarray:
    """(candidates × 2·lists): each list's min-max score, then each list's 10 / (10 + rank)."""
    mm = feature_matrix(q, names, "weighted")
    rr = np.zeros_like(mm)
    for j, name in enumerate(names):
        for rank, (c, _) in enumerate(q.lists.get(name, []), start=1):
            rr[c, j] = 10.0 / (10.0 + rank)
    return np.hstack([mm, rr])


def fit_listwise(rows, lam: float, start: np.ndarray, steps: int = 300, lr: float = 0.5) -> np.ndarray:
    """Non-negative weights minimising the mean softmax cross-entropy of the hits among each
    question's candidates (ListNet's top-one probability, Cao et al. 2007: −log Σ_hit e^s / Σ e^s)
    over ``rows`` plus λ‖w‖² — a loss on the top of the list, where the pairwise one weighs every pair."""
    qs = []
    for q in rows:
        x = features(q)
        gold = np.asarray(q.gold, dtype=bool)
        held = x.sum(axis=1) > 0
        if gold.any() and (held & ~gold).any():
            qs.append((x[held], gold[held]))
    w = start.copy()
    for _ in range(steps):
        grad = 2 * lam * w
        for x, gold in qs:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            pg = p * gold
            pg /= pg.sum()
            grad += (p @ x - pg @ x) / len(qs)
        w = np.clip(w - lr * grad, 0.0, None)
    return w


def fit(rows, lam: float, start: np.ndarray, steps: int = 300, lr: float = 0.5) -> np.ndarray:
    """Non-negative weights minimising the mean pairwise logistic loss over ``rows`` plus λ‖w‖²."""
    pairs = []
    for q in rows:
        x = features(q)
        gold = np.asarray(q.gold, dtype=bool)
        held = x.sum(axis=1) > 0
        if not gold.any() or not (held & ~gold).any():
            continue
        pairs.append((x[gold & held], x[~gold & held]))
    w = start.copy()
    for _ in range(steps):
        grad = 2 * lam * w
        for pos, neg in pairs:
            diff = pos[:, None, :] - neg[None, :, :]  # hits × others × features
            margin = diff @ w
            g = -1.0 / (1.0 + np.exp(margin))  # d loss / d margin
            grad += (g[..., None] * diff).mean(axis=(0, 1)) / len(pairs)
        w = np.clip(w - lr * grad, 0.0, None)
    return w


def main() -> None:
    rows = []
    for name in ("dev", "fresh"):
        rows += load(CACHE / f"cv-lists-{name}.json")
    covered = [q for q in rows if q.covered]
    grid = weight_grid(LISTS)
    base_rm = ranks(covered, LISTS, "weighted", grid)
    base = cross_validate(base_rm, folds=5, repeats=6)
    base_mrr = np.asarray([metrics(base_rm[test, best])["mrr"]
                           for (_, test), best in zip(splits(len(covered), 5, 6, 1), base["chosen"])])
    out: dict = {"n_covered": len(covered), "lists": NAMES, "folds": 5, "repeats": 6,
                 "grid_weighted": {"cv_mean": base["mean"], "cv_sd": base["sd"]}}
    start = np.asarray([1.0, 1.5, 2.0, 2.0, 0.0] + [0.0] * len(NAMES))  # the product's default weights
    for (loss, fitter), lam in ((f, lam) for f in (("pairwise", fit), ("listwise", fit_listwise)) for lam in LAMBDAS):
        held, weights = [], []
        for train, test in splits(len(covered), 5, 6, 1):
            w = fitter([covered[i] for i in train], lam, start)
            weights.append(w)
            rm = ranks([covered[i] for i in test], NAMES, "weighted", w[None, :], features=lambda q, names: features(q))
            held.append(metrics(rm[:, 0]))
        mrr = np.asarray([h["mrr"] for h in held])
        d = mrr - base_mrr
        out[f"{loss}_l2_{lam:g}"] = {
            "cv_mean": {k: float(np.mean([h[k] for h in held])) for k in held[0]},
            "cv_sd": {k: float(np.std([h[k] for h in held])) for k in held[0]},
            "mean_weights": dict(zip([f"{n}_minmax" for n in NAMES] + [f"{n}_rank" for n in NAMES],
                                     np.mean(weights, axis=0).round(3).tolist())),
            "mrr_minus_grid": {"mean": float(d.mean()), "sd": float(d.std()),
                               "splits_better": int((d > 0).sum()), "splits_worse": int((d < 0).sum())}}
    out["command"] = "python -m evals.cv_learned"
    publish(out, "cv-learned-latest.json")


if __name__ == "__main__":
    main()
