"""BM25 over any bag of features of a course's passages, for the candidate lists that ``evals.cv``
tries before one goes into the product (``cv_phonetic``: Metaphone keys; ``cv_proximity``: word
pairs). BM25 as in Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond"
(2009), k1 1.2 and b 0.75 (their usual values), IDF and mean length from the course's passages."""

from __future__ import annotations

import math
from collections import Counter


from evals.cv import course_passages, top_hits

K1, B = 1.2, 0.75
_state: dict = {}


def course_bags(index, course_id, bags) -> dict:
    """Every passage of the course as ``bags(text)`` (``{list name: Counter of features}``), with
    each list's document frequencies and mean length: ``{"segs", "docs", "n", name: (df, mean
    length)}``, built once per course and ``bags``."""
    st = _state.get((course_id, bags))
    if st is None:
        segs = course_passages(index, course_id)
        docs = [bags(h.text) for h in segs]
        st = {"segs": segs, "docs": docs, "n": len(docs)}
        for name in (docs[0].keys() if docs else ()):
            df: Counter = Counter()
            for d in docs:
                df.update(d[name].keys())
            st[name] = (df, sum(sum(d[name].values()) for d in docs) / max(1, len(docs)))
        _state[(course_id, bags)] = st
    return st


def bm25_list(st: dict, name: str, query, depth: int) -> list[Hit]:
    """The course's passages ranked by BM25 of ``query``'s features (an iterable, each once) over
    list ``name`` of :func:`course_bags`'s state, best first, at most ``depth``; passages scoring 0
    are left out."""
    if name not in st:  # a course without passages
        return []
    df, avg = st[name]
    scores = []
    for d in st["docs"]:
        doc = d[name]
        dl = sum(doc.values()) or 1
        s = 0.0
        for g in query:
            tf = doc.get(g, 0)
            if tf:
                idf = math.log((st["n"] - df[g] + 0.5) / (df[g] + 0.5) + 1.0)
                s += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avg))
        scores.append(s)
    return top_hits(st["segs"], scores, depth, positive=True)
