"""Character n-grams: a lexical signal that survives misspelling and mishearing.

Word-level BM25 gives nothing for "max heat" against a question about the "max heap", nor for a
student's "raddix" against the lecture's "radix"; their character 3- and 4-grams mostly agree
("#he", "hea", "max"...). Each word is marked at both ends ("#heap#") so prefixes and suffixes count
(the n-gram representation of McNamee & Mayfield, "Character N-Gram Tokenization for European
Language Text Retrieval", Information Retrieval 7, 2004). Scored with BM25 (Robertson & Zaragoza,
"The Probabilistic Relevance Framework: BM25 and Beyond", 2009; k1 = 1.2, b = 0.75) whose IDF and
average length come from the active course's segments only.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

NS = (3, 4)
K1, B = 1.2, 0.75


@lru_cache(maxsize=4096)  # the same passages come up query after query: ~4k of them in memory at most
def grams(text: str) -> Counter:
    """Character 3- and 4-grams of each lower-case word of ``text``, word ends marked with "#"
    (cached: treat the result as read-only)."""
    out: Counter = Counter()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        w = f"#{w}#"
        for n in NS:
            for i in range(len(w) - n + 1):
                out[w[i:i + n]] += 1
    return out


class CourseGrams:
    """A course's n-gram statistics: ``n`` segments, document frequency per gram, mean length (grams)."""

    def __init__(self, texts: list[str]):
        self.n = len(texts)
        self.df: Counter = Counter()
        total = 0
        for t in texts:
            g = grams(t)
            self.df.update(g.keys())
            total += sum(g.values())
        self.avg_len = total / self.n if self.n else 1.0

    def idf(self, gram: str) -> float:
        """BM25's IDF, ln((N − n + 0.5)/(n + 0.5) + 1) (non-negative; the form Lucene and Qdrant use)."""
        n = self.df.get(gram, 0)
        return math.log((self.n - n + 0.5) / (n + 0.5) + 1.0)

    def score(self, query: Counter, text: str) -> float:
        """BM25 of ``text`` for the query's grams (each distinct gram once)."""
        doc = grams(text)
        dl = sum(doc.values()) or 1
        s = 0.0
        for g in query:
            tf = doc.get(g, 0)
            if tf:
                s += self.idf(g) * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / self.avg_len))
        return s
