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

import re
from collections import Counter
from functools import lru_cache

import jellyfish

from evals.cv_bm25 import bm25_list, course_bags
from services.ask.chargrams import grams


@lru_cache(maxsize=65536)
def _key(word: str) -> str:
    return jellyfish.metaphone(word) or word


def keys(text: str) -> list[str]:
    """The Metaphone key of each lower-case word of ``text`` (a word with no key stands for itself)."""
    return [_key(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def _bags(text: str) -> dict[str, Counter]:
    k = keys(text)
    return {"metaphone": Counter(k), "metaphone_grams": grams(" ".join(k))}


def phonetic_lists(index, course_id, query, qvec, lists, depth: int = 30) -> dict:
    """``{"metaphone": [...], "metaphone_grams": [...]}`` for ``query`` in the course (``evals.cv``'s
    ``extra_lists`` hook; ``qvec`` and ``lists`` unused)."""
    st = course_bags(index, course_id, _bags)
    q = _bags(query)
    return {name: bm25_list(st, name, Counter(dict.fromkeys(q[name], 1)), depth)
            for name in ("metaphone", "metaphone_grams")}
