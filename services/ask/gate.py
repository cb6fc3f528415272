"""The relevance gate: is the evidence strong enough to answer from?

Two signals, neither of them a rank-fusion score (RRF scores rank, they don't measure relevance):

- ``window``: the best cosine (all-MiniLM-L6-v2) between the question and a window of 1–3
  consecutive sentences of the top 3 passages;
- ``coverage``: the IDF-weighted share of the question's BM25 tokens that occur anywhere in
  the course's segments (IDF over this course only). A question naming things the course
  never says ("Dijkstra", "sourdough") has low coverage even when its wording looks similar.

Decision: answer when ``window + coverage_weight · coverage ≥ threshold``. Weight 0.5 and
threshold 0.80 were chosen on the MIT 6.006 dev split; ``python -m evals.retrieval`` reports the
decisions at this threshold and the margins around it (the highest score of an uncovered
question, the lowest of a covered one) in ``evals/results/retrieval-latest.json``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .retrieve import Passage, window_score
from .search_index import EmbeddedSearchIndex


@dataclass(frozen=True)
class Evidence:
    window: float
    coverage: float
    score: float


def evidence(index: EmbeddedSearchIndex, course_id: str, passages: list[Passage], query: str,
             query_vec: np.ndarray, coverage_weight: float = 0.5) -> Evidence:
    """The gate's signals for ``query`` given its retrieved ``passages`` (see module doc)."""
    window = max((window_score(index, p.hit, query_vec) for p in passages[:3]), default=0.0)
    n, df = index.course_df(course_id)
    tokens = list(index.bm25.embed_query(query).indices)
    idf = {t: math.log((n + 1) / (df.get(t, 0) + 0.5)) for t in tokens}
    total = sum(idf.values())
    coverage = sum(v for t, v in idf.items() if t in df) / total if total > 0 else 0.0
    return Evidence(window, coverage, window + coverage_weight * coverage)


def covered(ev: Evidence, threshold: float) -> bool:
    """True when the evidence clears the gate."""
    return ev.score >= threshold
