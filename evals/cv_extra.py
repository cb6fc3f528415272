"""Candidate retrieval signals tried in ``evals.cv`` before any goes into the product (prototypes:
computed in the harness from the index's own segments; see ``python -m evals.cv --extra``)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from services.ask.chargrams import grams as _grams  # the product's n-grams (this prototype became it)
from services.ask.search_index import Hit

_state: dict = {}


def _course(index, course_id):
    st = _state.get(course_id)
    if st is None:
        segs = [h for (lid, _), h in index.segments.items() if index.course_of.get(lid) == course_id]
        docs = [_grams(h.text) for h in segs]
        df: Counter = Counter()
        for d in docs:
            df.update(d.keys())
        avg = sum(sum(d.values()) for d in docs) / max(1, len(docs))
        with index.pool.connection() as conn:
            rows = conn.execute("SELECT id::text AS id, embedding FROM segments WHERE course_id=%s", (course_id,)).fetchall()
        vec = {r["id"]: np.asarray(r["embedding"], dtype="float32") for r in rows}
        mat = np.stack([vec[h.point_id] for h in segs])
        st = _state[course_id] = {"segs": segs, "docs": docs, "df": df, "avg": avg, "n": len(docs), "mat": mat}
    return st


def chargram_bm25(index, course_id, query, k1=1.2, b=0.75, depth=30) -> list[Hit]:
    st = _course(index, course_id)
    q = _grams(query)
    scores = []
    for h, d in zip(st["segs"], st["docs"]):
        dl = sum(d.values())
        s = 0.0
        for g in q:
            tf = d.get(g, 0)
            if not tf:
                continue
            idf = math.log((st["n"] - st["df"][g] + 0.5) / (st["df"][g] + 0.5) + 1.0)
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / st["avg"]))
        scores.append(s)
    order = np.argsort(-np.asarray(scores))[:depth]
    return [_hit(st["segs"][i], float(scores[i])) for i in order if scores[i] > 0]


def dense_prf(index, course_id, qvec, dense_hits, beta=0.5, top=3, depth=30) -> list[Hit]:
    """Rocchio on embeddings: the query moved towards the mean of its top ``top`` dense hits."""
    st = _course(index, course_id)
    ids = {h.point_id: i for i, h in enumerate(st["segs"])}
    fb = [st["mat"][ids[h.point_id]] for h in dense_hits[:top] if h.point_id in ids]
    q = qvec + beta * (np.mean(fb, axis=0) if fb else 0.0)
    q = q / (np.linalg.norm(q) + 1e-9)
    sims = st["mat"] @ q
    order = np.argsort(-sims)[:depth]
    return [_hit(st["segs"][i], float(sims[i])) for i in order]


def _hit(h: Hit, score: float) -> Hit:
    return Hit(h.point_id, h.lecture_id, h.lecture_number, h.segment_idx, h.start_s, h.end_s, h.text, score)


def extra_lists(index, course_id, query, qvec, lists) -> dict:
    return {"chargram": chargram_bm25(index, course_id, query),
            "dense_prf": dense_prf(index, course_id, qvec, lists["dense"])}
