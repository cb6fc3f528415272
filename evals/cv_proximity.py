"""Term proximity as a retrieval signal (issue #13, item 3), tried in ``evals.cv`` before it goes
into the product:

    .venv/bin/python -m evals.cv --proximity --lists dense,bm25,dense_sent,chargram,bigram
    .venv/bin/python -m evals.cv --proximity --cached --lists dense,bm25,dense_sent,chargram,window

BM25 scores each word alone, so a passage that says "linear" in one place and "probing" in another
ranks like one that says "linear probing". The sequential dependence model (Metzler & Croft, "A
Markov Random Field Model for Term Dependencies", SIGIR 2005) adds the question's adjacent word
pairs as ordered phrases and as unordered co-occurrences within a window of 8 words; it is the
most reproduced gain over bag-of-words ranking. Two lists here, each over every passage of the
course with BM25 (Robertson & Zaragoza 2009; k1 1.2, b 0.75; IDF and mean length from the course):

- ``bigram``: ordered adjacent pairs of the text's BM25 tokens (the product's English stemming and
  stop words, so "insert into a max heap" gives insert·max, max·heap);
- ``window``: unordered pairs of tokens at most 8 tokens apart (SDM's #uw8).

The question's features are the pairs of its own adjacent tokens, each once.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from evals.cv_bm25 import bm25_list, course_bags
from lecturecopilot.points import bm25

WINDOW = 8  # Metzler & Croft 2005, unordered window


@lru_cache(maxsize=65536)
def _token(word: str) -> int | None:
    ids = list(bm25().embed_query(word).indices)
    return ids[0] if ids else None


def tokens(text: str) -> list[int]:
    """``text``'s BM25 token ids in order (stemmed; stop words dropped)."""
    out = []
    for w in re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower()):
        t = _token(w)
        if t is not None:
            out.append(t)
    return out


def _bags(text: str) -> dict[str, Counter]:
    return features(tokens(text))


def features(toks: list[int]) -> dict[str, Counter]:
    """``{"bigram": Counter of ordered adjacent pairs, "window": Counter of unordered pairs ≤ 8 apart}``."""
    big = Counter(zip(toks, toks[1:]))
    win: Counter = Counter()
    for i, a in enumerate(toks):
        for b in toks[i + 1:i + WINDOW]:
            if a != b:
                win[(min(a, b), max(a, b))] += 1
    return {"bigram": big, "window": win}


def proximity_lists(index, course_id, query, qvec, lists, depth: int = 30) -> dict:
    """``{"bigram": [...], "window": [...]}`` for ``query`` in the course (``evals.cv``'s
    ``extra_lists`` hook; ``qvec`` and ``lists`` unused). The query's features are its adjacent
    token pairs (ordered for ``bigram``, sorted for ``window``)."""
    st = course_bags(index, course_id, _bags)
    t = tokens(query)
    pairs = list(dict.fromkeys(zip(t, t[1:])))
    return {"bigram": bm25_list(st, "bigram", pairs, depth),
            "window": bm25_list(st, "window", list(dict.fromkeys((min(a, b), max(a, b)) for a, b in pairs if a != b)),
                            depth)}
