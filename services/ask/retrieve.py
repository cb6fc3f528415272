"""Hybrid retrieval inside one course: several ranked lists of segments, fused.

Lists (see ``EmbeddedSearchIndex.search``): ``dense`` and ``bm25`` on segments, ``dense_sub``
and ``bm25_sub`` on ~20 s sub-chunks max-pooled to their segment; ``dense_sent``, ``chargram`` and
``chapter`` re-rank the union of all four lists' candidates by best sentence window, by BM25 over
character n-grams (:mod:`.chargrams`: robust to misspelled and misheard words) and by
chapter-summary prior (weight 0.4, as in the Cite-or-Decline paper), so the sub-chunk lists feed
candidates even when they are not fused themselves. Fusion:

- ``rrf``: reciprocal rank fusion, score(d) = Σ_lists w_l / (k + rank_l(d)), k = 60
  (Cormack, Clarke & Büttcher, SIGIR 2009).
- ``weighted``: Σ_lists w_l · minmax_l(score_l(d)), scores min-max normalised per list and
  query, a missing document scoring 0 — the weighted score fusion of the Cite-or-Decline
  paper (dense weight 1.0, BM25 weight 1.25).

Optional rerank: the top candidates are rescored by their best window of 1–3 consecutive
sentences (cosine of the mean of the sentences' embeddings with the query), which finds a
passage whose one spot answers the question even when the rest is about something else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .chargrams import grams
from .ports import SearchIndex
from .search_index import ALL_COURSES, Hit

RRF_K = 60


@dataclass(frozen=True)
class RetrievalConfig:
    """Which lists to fuse and how. The defaults were chosen by 5-fold cross-validation (6 repeats)
    over the 119 covered questions of the MIT 6.006 dev set and the fresh held-out set
    (``python -m evals.cv``), on passages cut where the topic shifts (``services.index.core``):
    weighted score fusion with these weights was the choice of 17 of the 30 training splits; its
    held-out-fold scores are in ``evals/README.md``."""

    lists: tuple[str, ...] = ("dense", "bm25", "dense_sent", "chargram")
    fusion: str = "weighted"
    weights: dict = field(default_factory=lambda: {"dense": 1.0, "bm25": 1.5, "dense_sub": 1.0, "bm25_sub": 1.5,
                                                   "dense_sent": 2.0, "chargram": 2.0, "chapter": 0.4})
    rerank: bool = False
    rerank_top: int = 12
    rerank_weight: float = 1.0
    center: bool = False
    center_target_s: float = 60.0
    prf_docs: int = 0          # pseudo-relevance feedback: re-query BM25 with terms of the top docs
    prf_terms: int = 8
    prf_weight: float = 0.4
    depth: int = 30


@dataclass
class Passage:
    """A retrieved segment (at most 90 s) and its fused ``score`` (rank order only)."""

    hit: Hit
    score: float


def rrf(lists: dict[str, list[Hit]], weights: dict[str, float], k: int = RRF_K) -> dict[str, float]:
    """Weighted reciprocal rank fusion; returns segment point id → fused score."""
    fused: dict[str, float] = {}
    for name, hits in lists.items():
        w = weights.get(name, 1.0)
        for rank, h in enumerate(hits, start=1):
            fused[h.point_id] = fused.get(h.point_id, 0.0) + w / (k + rank)
    return fused


def weighted(lists: dict[str, list[Hit]], weights: dict[str, float]) -> dict[str, float]:
    """Weighted sum of per-list min-max normalised scores; returns point id → fused score."""
    fused: dict[str, float] = {}
    for name, hits in lists.items():
        if not hits:
            continue
        scores = [h.score for h in hits]
        lo, hi = min(scores), max(scores)
        w = weights.get(name, 1.0)
        for h in hits:
            norm = (h.score - lo) / (hi - lo) if hi > lo else 1.0
            fused[h.point_id] = fused.get(h.point_id, 0.0) + w * norm
    return fused


def best_window(vecs: np.ndarray, query_vec: np.ndarray, widths: tuple[int, ...] = (1, 2, 3),
                lo: int = 0, hi: int | None = None) -> tuple[float, int, int]:
    """The best run of consecutive sentences for the query: ``(cosine, i, j)`` for rows
    ``vecs[i:j]`` inside ``[lo, hi)``, each run's vector being the normalised sum of its
    sentence embeddings; runs have the lengths in ``widths`` (capped at what is there).
    ``(-1.0, lo, lo)`` when there is no sentence."""
    hi = len(vecs) if hi is None else hi
    best = (-1.0, lo, lo)
    if hi <= lo:
        return best
    part = vecs[lo:hi]
    csum = np.vstack([np.zeros((1, part.shape[1]), dtype="float32"), np.cumsum(part, axis=0)])
    for w in sorted({min(w, len(part)) for w in widths}):
        sums = csum[w:] - csum[:-w]
        cos = (sums @ query_vec) / (np.linalg.norm(sums, axis=1) + 1e-9)
        k = int(cos.argmax())
        if float(cos[k]) > best[0]:
            best = (float(cos[k]), lo + k, lo + k + w)
    return best


def window_score(index: SearchIndex, hit: Hit, query_vec: np.ndarray) -> float:
    """Best cosine between the query and a run of 1–3 consecutive sentences of the segment."""
    entry = index.sentences.get((hit.lecture_id, hit.segment_idx))
    return best_window(entry[1], query_vec)[0] if entry else 0.0


def _candidates(lists: dict[str, list[Hit]]) -> dict[str, Hit]:
    """The union of the lists' hits by point id (first occurrence kept)."""
    seen: dict[str, Hit] = {}
    for hits in lists.values():
        for h in hits:
            seen.setdefault(h.point_id, h)
    return seen


def _rescored(h: Hit, score: float) -> Hit:
    return Hit(h.point_id, h.lecture_id, h.lecture_number, h.segment_idx, h.start_s, h.end_s, h.text, score)


def sentence_list(index: SearchIndex, lists: dict[str, list[Hit]], query_vec: np.ndarray,
                  depth: int) -> list[Hit]:
    """Candidates of the other lists re-ranked by their best 1–3-sentence window's cosine."""
    scored = [(window_score(index, h, query_vec), h) for h in _candidates(lists).values()]
    scored.sort(key=lambda x: -x[0])
    return [_rescored(h, sc) for sc, h in scored[:depth]]


def chargram_list(index: SearchIndex, course_id: str, lists: dict[str, list[Hit]], query: str,
                  depth: int) -> list[Hit]:
    """Candidates of the other lists re-ranked by BM25 over character n-grams (course statistics;
    :mod:`.chargrams`); candidates sharing no n-gram with the query are left out."""
    stats = index.course_grams(course_id) if course_id != ALL_COURSES else None
    if stats is None or not stats.n:
        return []
    q = grams(query)
    scored = [(stats.score(q, h.text), h) for h in _candidates(lists).values()]
    scored = sorted((x for x in scored if x[0] > 0), key=lambda x: -x[0])
    return [_rescored(h, sc) for sc, h in scored[:depth]]


def chapter_list(index: SearchIndex, lists: dict[str, list[Hit]], query_vec: np.ndarray,
                 depth: int) -> list[Hit]:
    """Candidates of the other lists ranked by their chapter-summary prior (ties: dense score);
    candidates whose chapter has no summary get the query's lowest prior, as in the paper."""
    seen = _candidates(lists)
    dense = {h.point_id: h.score for h in lists.get("dense", [])}
    priors = {pid: index.chapter_prior(h, query_vec) for pid, h in seen.items()}
    known = [p for p in priors.values() if p is not None]
    floor = min(known) if known else 0.0
    prior = {pid: floor if p is None else p for pid, p in priors.items()}
    scored = sorted(seen.values(), key=lambda h: (-prior[h.point_id], -dense.get(h.point_id, -1.0)))
    return [_rescored(h, prior[h.point_id]) for h in scored[:depth]]


def centered(index: SearchIndex, hit: Hit, query_vec: np.ndarray, target_s: float = 60.0,
             max_s: float = 90.0) -> Hit:
    """The passage re-centred on the evidence: the segment's best 1–3-sentence window, grown
    sentence by sentence on whichever side keeps it centred (crossing the segment's edges)
    up to ``target_s`` and never past ``max_s``. Same point id and score as ``hit``."""
    entry = index.lecture_sentences.get(hit.lecture_id)
    if not entry:
        return hit
    sents, vecs = entry
    inside = [i for i, s in enumerate(sents) if s.start_s >= hit.start_s - 1e-6 and s.end_s <= hit.end_s + 1e-6]
    if not inside:
        return hit
    _, i, j = best_window(vecs, query_vec, lo=inside[0], hi=inside[-1] + 1)
    mid = (sents[i].start_s + sents[j - 1].end_s) / 2
    while sents[j - 1].end_s - sents[i].start_s < target_s:
        left_ok = i > 0 and sents[j - 1].end_s - sents[i - 1].start_s <= max_s
        right_ok = j < len(sents) and sents[j].end_s - sents[i].start_s <= max_s
        if not (left_ok or right_ok):
            break
        if left_ok and (not right_ok or mid - sents[i].start_s <= sents[j - 1].end_s - mid):
            i -= 1
        else:
            j += 1
    return Hit(hit.point_id, hit.lecture_id, hit.lecture_number, hit.segment_idx, sents[i].start_s,
               sents[j - 1].end_s, " ".join(s.text for s in sents[i:j]), hit.score)


def _overlap(a: Hit, b: Hit) -> float:
    if a.lecture_id != b.lecture_id:
        return 0.0
    inter = min(a.end_s, b.end_s) - max(a.start_s, b.start_s)
    return max(0.0, inter) / max(1e-9, min(a.end_s - a.start_s, b.end_s - b.start_s))


def retrieve(index: SearchIndex, course_id: str, lecture_id: str | None, query_vec: np.ndarray,
             query: str, k: int = 6, config: RetrievalConfig | None = None) -> list[Passage]:
    """The ``k`` best segments of the course (or lecture), best first. Syncs the index first."""
    cfg = config or RetrievalConfig()
    if course_id != ALL_COURSES:
        index.sync_course(course_id)
    fuse = rrf if cfg.fusion == "rrf" else weighted
    all_lists = index.search(course_id, lecture_id, query_vec, query, cfg.depth)
    if cfg.prf_docs:
        first = fuse({n: all_lists[n] for n in cfg.lists if n in all_lists}, cfg.weights)
        texts = {h.point_id: h.text for hits in all_lists.values() for h in hits}
        top = sorted(first, key=lambda pid: -first[pid])[:cfg.prf_docs]
        sparse = index.expanded_query(query, [texts[p] for p in top], cfg.prf_terms, cfg.prf_weight)
        all_lists = index.search(course_id, lecture_id, query_vec, query, cfg.depth, sparse_query=sparse)
    if "chargram" in cfg.lists:
        all_lists["chargram"] = chargram_list(index, course_id, all_lists, query, cfg.depth)
    if "dense_sent" in cfg.lists:
        all_lists["dense_sent"] = sentence_list(index, all_lists, query_vec, cfg.depth)
    if "chapter" in cfg.lists:
        all_lists["chapter"] = chapter_list(index, all_lists, query_vec, cfg.depth)
    lists = {name: all_lists[name] for name in cfg.lists}
    fused = fuse(lists, cfg.weights)
    by_id = _candidates(all_lists)
    order = sorted(fused, key=lambda pid: -fused[pid])
    if cfg.rerank and order:
        top = order[:cfg.rerank_top]
        hi = fused[top[0]]
        rescored = {pid: fused[pid] / hi + cfg.rerank_weight * window_score(index, by_id[pid], query_vec)
                    for pid in top}
        order = sorted(top, key=lambda pid: -rescored[pid]) + order[cfg.rerank_top:]
        fused = {**fused, **rescored}
    out: list[Passage] = []
    for pid in order:
        hit = by_id[pid]
        if cfg.center:
            hit = centered(index, hit, query_vec, cfg.center_target_s)
            if any(_overlap(hit, p.hit) > 0.5 for p in out):
                continue
        out.append(Passage(hit=hit, score=fused[pid]))
        if len(out) == k:
            break
    return out
