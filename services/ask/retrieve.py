"""Hybrid retrieval inside one course: dense + BM25 lists fused by reciprocal rank fusion.

RRF: score(d) = Σ_lists 1 / (k + rank_list(d)), k = 60 (Cormack, Clarke & Büttcher,
"Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning Methods",
SIGIR 2009). Each fused passage keeps its dense cosine for the relevance gate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .search_index import EmbeddedSearchIndex, Hit

RRF_K = 60


@dataclass
class Passage:
    """A retrieved segment (at most 90 s): fused ``score``, and ``cosine`` with the query."""

    hit: Hit
    score: float
    cosine: float
    bm25: float


def rrf(lists: list[list[Hit]], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion of ranked lists of hits; returns point id → fused score."""
    fused: dict[str, float] = {}
    for hits in lists:
        for rank, h in enumerate(hits, start=1):
            fused[h.point_id] = fused.get(h.point_id, 0.0) + 1.0 / (k + rank)
    return fused


def retrieve(index: EmbeddedSearchIndex, course_id: str, lecture_id: str | None, query_vec: np.ndarray,
             query: str, k: int = 6, depth: int = 30) -> list[Passage]:
    """The ``k`` best passages of the course (or lecture), best first. Syncs the index first."""
    index.sync_course(course_id)
    dense, sparse = index.search(course_id, lecture_id, query_vec, query, depth)
    fused = rrf([dense, sparse])
    by_id = {h.point_id: h for h in dense + sparse}
    cos = {h.point_id: h.score for h in dense}
    bm = {h.point_id: h.score for h in sparse}
    order = sorted(fused, key=lambda pid: -fused[pid])[:k]
    out = []
    for pid in order:
        hit = by_id[pid]
        c = cos.get(pid)
        if c is None:  # not in the dense top-depth: compute from the stored sentences' mean
            sents = index.sentences.get((hit.lecture_id, hit.segment_idx))
            c = float((sents[1] @ query_vec).max()) if sents else 0.0
        out.append(Passage(hit=hit, score=fused[pid], cosine=float(c), bm25=bm.get(pid, 0.0)))
    return out
