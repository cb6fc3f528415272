"""A phonetic key as a retrieval signal (issue #13, item 2), tried in ``evals.cv`` before it goes
into the product:

    .venv/bin/python -m evals.cv --phonetic --lists dense,bm25,dense_sent,chargram,metaphone
    .venv/bin/python -m evals.cv --phonetic --cached --lists dense,bm25,dense_sent,chargram,metaphone_grams

Two lists, each over every passage of the course with BM25 (Robertson & Zaragoza 2009; k1 1.2,
b 0.75, IDF and mean length from the course's passages):

- ``metaphone``: the words' Metaphone keys (Philips 1990, via ``jellyfish``): "colision" and
  "collision" are both KLXN, whatever the spelling.
- ``metaphone_grams``: character 3- and 4-grams of those keys, word ends marked
  (:func:`services.ask.chargrams.grams` on the keys): a misheard word whose key differs in one
  sound, or a compound heard as two words ("hashnet" HXNT, "hash net" HX NT), still shares some.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

import jellyfish
import numpy as np

from services.ask.chargrams import grams
from services.ask.search_index import Hit

K1, B = 1.2, 0.75
_state: dict = {}


@lru_cache(maxsize=65536)
def _key(word: str) -> str:
    return jellyfish.metaphone(word) or word


def keys(text: str) -> list[str]:
    """The Metaphone key of each lower-case word of ``text`` (a word with no key stands for itself)."""
    return [_key(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def _bags(text: str) -> dict[str, Counter]:
    k = keys(text)
    return {"metaphone": Counter(k), "metaphone_grams": grams(" ".join(k))}


def _course(index, course_id):
    st = _state.get(course_id)
    if st is None:
        segs = [h for (lid, _), h in index.segments.items() if index.course_of.get(lid) == course_id]
        docs = [_bags(h.text) for h in segs]
        st = {"segs": segs, "docs": docs, "n": len(docs)}
        for name in ("metaphone", "metaphone_grams"):
            df: Counter = Counter()
            for d in docs:
                df.update(d[name].keys())
            st[name] = (df, sum(sum(d[name].values()) for d in docs) / max(1, len(docs)))
        _state[course_id] = st
    return st


def _bm25(st, name: str, query: Counter, depth: int) -> list[Hit]:
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
    order = np.argsort(-np.asarray(scores))[:depth]
    return [_hit(st["segs"][i], float(scores[i])) for i in order if scores[i] > 0]


def _hit(h: Hit, score: float) -> Hit:
    return Hit(h.point_id, h.lecture_id, h.lecture_number, h.segment_idx, h.start_s, h.end_s, h.text, score)


def phonetic_lists(index, course_id, query, qvec, lists, depth: int = 30) -> dict:
    """``{"metaphone": [...], "metaphone_grams": [...]}`` for ``query`` in the course (``evals.cv``'s
    ``extra_lists`` hook; ``qvec`` and ``lists`` unused)."""
    st = _course(index, course_id)
    q = _bags(query)
    return {name: _bm25(st, name, Counter(dict.fromkeys(q[name], 1)), depth)
            for name in ("metaphone", "metaphone_grams")}
