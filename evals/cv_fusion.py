"""How each list's scores are put on one scale before they are summed: min-max (the product's
``services.ask.retrieve.weighted``) against three other normalisations of score fusion, each with
its weights chosen per fold like the product's (``evals.cv``'s grid, splits and MRR criterion).

    .venv/bin/python -m evals.cv_fusion            # on the lists evals.cv collected last (dev + fresh)

Normalisations of a list's scores ``s`` (its depth-30 candidates; a candidate the list does not
hold contributes 0, the list's worst):

- ``minmax``: (s − min) / (max − min) — the product's (Fox & Shaw 1994's CombSUM over min-max,
  as in the Cite-or-Decline paper).
- ``zscore``: (s − min) / σ — Montague & Aslam 2001's z-score normalisation, shifted so the
  list's worst is 0 as with min-max: a list whose top stands far above the rest weighs more.
- ``max``: s / max (scores clipped at 0) — keeps the distance from zero, so a list whose best is
  barely better than its worst still contributes in proportion.
- ``mnz``: min-max, times the number of lists that hold the candidate (CombMNZ, Fox & Shaw 1994).

The same 30 splits score every normalisation, so the per-split difference against min-max is
paired; it is reported as mean ± sd, with how many splits each one wins.
"""

from __future__ import annotations

import numpy as np

from evals.cv import CACHE, LISTS, cross_validate, load, metrics, publish, ranks, splits, weight_grid

NORMALISATIONS = ("minmax", "zscore", "max", "mnz")


def normalised(q, names: tuple[str, ...], how: str) -> np.ndarray:
    """(candidates × lists) contributions of question ``q``'s lists under normalisation ``how``."""
    m = np.zeros((len(q.gold), len(names)), dtype="float64")
    held = np.zeros(len(q.gold), dtype="float64")
    for j, name in enumerate(names):
        hits = q.lists.get(name, [])
        if not hits:
            continue
        s = np.asarray([x for _, x in hits], dtype="float64")
        idx = np.asarray([c for c, _ in hits])
        lo, hi, sd = s.min(), s.max(), s.std()
        if how in ("minmax", "mnz"):
            v = (s - lo) / (hi - lo) if hi > lo else np.ones_like(s)
        elif how == "zscore":
            v = (s - lo) / sd if sd > 0 else np.ones_like(s)
        elif how == "max":
            v = np.clip(s, 0, None) / hi if hi > 0 else np.ones_like(s)
        else:
            raise ValueError(how)
        m[idx, j] = v
        held[idx] += 1
    if how == "mnz":
        m *= held[:, None]
    return m


def main() -> None:
    rows = []
    for name in ("dev", "fresh"):
        rows += load(CACHE / f"cv-lists-{name}.json")
    covered = [q for q in rows if q.covered]
    grid = weight_grid(LISTS)
    out: dict = {"n_covered": len(covered), "lists": LISTS, "folds": 5, "repeats": 6}
    rr: dict[str, np.ndarray] = {}
    for how in NORMALISATIONS:
        rm = ranks(covered, LISTS, "weighted", grid, features=lambda q, names, how=how: normalised(q, names, how))
        res = cross_validate(rm, folds=5, repeats=6)
        common = max(set(res["chosen"]), key=res["chosen"].count)
        rr[how] = np.asarray([metrics(rm[test, best])["mrr"]
                              for (_, test), best in zip(splits(len(covered), 5, 6, 1), res["chosen"])])
        out[how] = {"cv_mean": res["mean"], "cv_sd": res["sd"],
                    "most_chosen": {"weights": dict(zip(LISTS, grid[common].tolist())),
                                    "times": res["chosen"].count(common), **metrics(rm[:, common])}}
    for how in NORMALISATIONS[1:]:
        d = rr[how] - rr["minmax"]
        out[how]["mrr_minus_minmax"] = {"mean": float(d.mean()), "sd": float(d.std()),
                                        "splits_better": int((d > 0).sum()), "splits_worse": int((d < 0).sum())}
    out["command"] = "python -m evals.cv_fusion"
    publish(out, "cv-fusion-latest.json")


if __name__ == "__main__":
    main()
