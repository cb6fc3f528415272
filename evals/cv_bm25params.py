"""BM25's length normalisation and saturation, chosen by cross-validation (after nothing: it
collects its own lists):

    .venv/bin/python -m evals.cv_bm25params            # collect (a throw-away stack), then CV
    .venv/bin/python -m evals.cv_bm25params --cached

The product's BM25 is qdrant-edge's encoder with its defaults: k1 1.2, b 0.75 and an average
document length ``avg_len`` of 256 tokens. BM25 normalises a document's term frequencies by its
length against the collection's average (Robertson & Zaragoza 2009); a lecture passage holds about
a third of 256 tokens (stemmed, stop words out), so every passage looks short and a long passage
is hardly penalised for its length. Each configuration (``avg_len`` the product's 256 or the
course's own mean; k1; b) gives a ``bm25`` list scored as Qdrant scores it (document weights from
the encoder, the IDF modifier log((N − df + 0.5)/(df + 0.5) + 1) over the course); the
configuration and the fusion weights are then chosen together per fold (5 × 6, 119 covered
dev + fresh questions), against the product's lists.
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import sys

import numpy as np

from evals import cv

KS = (0.9, 1.2, 1.6)
BS = (0.5, 0.75, 0.9)
_state: dict = {}


def _course(index, course_id) -> dict:
    st = _state.get(course_id)
    if st is None:
        import qdrant_edge as q

        segs = cv.course_passages(index, course_id)
        base = index.bm25
        lengths = [sum(len(base.embed_query(w).indices) for w in re.findall(r"\S+", h.text)) for h in segs]
        avg = float(np.mean(lengths)) if lengths else 256.0
        configs = {}
        for a, k, b in itertools.product((256.0, avg), KS, BS):
            enc = q.Bm25(q.Bm25Config(language="english", k=k, b=b, avg_len=a))
            docs = []
            for h in segs:
                v = enc.embed_document(h.text)
                docs.append(dict(zip(v.indices, v.values)))
            configs[f"bm25_{'own' if a != 256.0 else '256'}_k{k}_b{b}"] = docs
        df: dict[int, int] = {}
        for d in next(iter(configs.values())):
            for t in d:
                df[t] = df.get(t, 0) + 1
        st = _state[course_id] = {"segs": segs, "configs": configs, "df": df, "avg": avg}
    return st


def bm25_lists(index, course_id, query, qvec, lists, depth: int = 30) -> dict:
    """One BM25 list per configuration (``evals.cv``'s ``extra_lists`` hook; ``qvec`` unused)."""
    st = _course(index, course_id)
    n, df, segs = len(st["segs"]), st["df"], st["segs"]
    toks = [t for t in set(index.bm25.embed_query(query).indices) if t in df]
    idf = {t: math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1.0) for t in toks}
    out = {}
    for name, docs in st["configs"].items():
        out[name] = cv.top_hits(segs, [sum(idf[t] * d.get(t, 0.0) for t in toks) for d in docs], depth, positive=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cached", action="store_true")
    args = parser.parse_args()
    rows = cv.lists_of(("dev", "fresh"), "-bm25params", bm25_lists, args.cached)
    covered = [q for q in rows if q.covered]
    configs = sorted(n for n in covered[0].lists if n.startswith(("bm25_256_", "bm25_own_")))
    # the product's own list against its replica: the replica must rank as the product does
    same = np.mean([[c for c, _ in q.lists["bm25"][:10]] == [c for c, _ in q.lists["bm25_256_k1.2_b0.75"][:10]]
                    for q in covered])
    blocks, labels = [], []
    for c in configs:
        names = ("dense", c, "dense_sent", "chargram")
        grid = cv.weight_grid(names)
        blocks.append(cv.ranks(covered, names, "weighted", grid))
        labels += [(c, tuple(g)) for g in grid.tolist()]
    rm = np.hstack(blocks)
    res = cv.cross_validate(rm, 5, 6)
    rr = np.where(rm > 0, 1.0 / np.maximum(rm, 1), 0.0).mean(axis=0)
    product = labels.index(("bm25_256_k1.2_b0.75", (1.0, 1.5, 2.0, 2.0)))
    chosen = [labels[c][0] for c in res["chosen"]]
    per_config = {c: float(max(rr[i] for i, l in enumerate(labels) if l[0] == c)) for c in configs}
    out = {"n": len(covered), "course_avg_len": next(iter(_state.values()))["avg"] if _state else None,
           "replica_top10_same_as_product": float(same),
           "cv_mean": res["mean"], "cv_sd": res["sd"], "product_fixed": cv.metrics(rm[:, product]),
           "configs_chosen": {c: chosen.count(c) for c in sorted(set(chosen))},
           "in_sample_best_mrr_per_config": per_config,
           "command": "python -m evals.cv_bm25params " + " ".join(sys.argv[1:])}
    cv.publish(out, "cv-bm25params-latest.json")


if __name__ == "__main__":
    main()
