"""The one place that says how an embedded Qdrant (qdrant-edge) shard is laid out in memory.

Used by the ask service's :class:`services.ask.search_index.EmbeddedSearchIndex` and by
``bench/search_scale.py``, so the benchmark measures the shard the product runs.

Two profiles (``LC_SEARCH_PROFILE``):

- ``ram`` (the default, as before): qdrant-edge's defaults — float32 vectors (memory-mapped and kept
  cached), a global HNSW graph, the sparse index pinned in RAM, the payload on disk.
- ``disk``: the memory-lean layout for a replica holding many courses. The original float32
  vectors, the payload and the sparse (BM25) index are memory-mapped files that are not read in
  ahead (``Memory.Cold``: the kernel pages in only what a query touches, and may drop it again);
  the dense vectors also carry an int8 scalar-quantized copy (4× smaller, kept in RAM), which
  scores the candidates first, the best ``oversampling`` × limit of them then rescored with the
  original vectors. ``course_id`` is a tenant index (points of a course stored together) and the
  dense HNSW graph is per course only (``m=0``, ``payload_m=16``: Qdrant's multitenancy
  layout), so a bulk load builds no 1M-point global graph. ``full_scan_threshold`` is in KB of
  vectors (Qdrant's unit), not points: 10,000 KB ≈ 6,600 384-d float32 vectors, so a course below
  that (≈ 28 lecture-hours at ≈ 230 points each) is answered by a filtered scan of its points, a
  larger one through its per-course graph. The benchmark's courses hold 500 points (scans); the
  per-course graph's recall is not measured there.

Every query the product sends is filtered by course (``services.ask.search_index._course_filter``),
so dropping the global graph costs nothing there; the unfiltered ``ALL_COURSES`` ablation of the
evaluation becomes a scan.
"""

from __future__ import annotations

from typing import Literal

import qdrant_edge as q

from lecturecopilot.points import DENSE, KEYWORD_FIELDS, SPARSE

Profile = Literal["ram", "disk"]
PROFILES: tuple[str, ...] = ("ram", "disk")
# candidates rescored with the original vectors per result wanted (Qdrant's oversampling); 2.0 is
# Qdrant's documented starting point for int8 scalar quantization with rescoring
OVERSAMPLING = 2.0
# quantile of the int8 range (Qdrant's documented default for scalar quantization is 0.99)
QUANTILE = 0.99


def edge_config(dim: int, profile: Profile = "ram") -> q.EdgeConfig:
    """The shard configuration: a ``dense`` cosine vector of ``dim`` floats and a ``bm25``
    sparse vector with the IDF modifier, laid out per ``profile`` (see the module docstring).
    Raises ValueError for an unknown profile."""
    if profile == "ram":
        return q.EdgeConfig(vectors={DENSE: q.EdgeVectorParams(size=dim, distance=q.Distance.Cosine)},
                            sparse_vectors={SPARSE: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)})
    if profile != "disk":
        raise ValueError(f"unknown search profile {profile!r} (one of {PROFILES})")
    dense = q.EdgeVectorParams(
        size=dim, distance=q.Distance.Cosine, memory=q.Memory.Cold,
        quantization_config=q.ScalarQuantizationConfig(q.ScalarType.Int8, quantile=QUANTILE, memory=q.Memory.Pinned),
        hnsw_config=q.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10000, payload_m=16,
                                      memory=q.Memory.Cold))
    return q.EdgeConfig(vectors={DENSE: dense},
                        sparse_vectors={SPARSE: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf,
                                                                         memory=q.Memory.Cold)},
                        payload_memory=q.Memory.Cold)


def create_shard(path: str, dim: int, profile: Profile = "ram",
                 keyword_fields: tuple[str, ...] = KEYWORD_FIELDS) -> q.EdgeShard:
    """A new shard at ``path`` (which must hold no segments) with keyword indexes on
    ``keyword_fields``; under ``disk`` the ``course_id`` index is a tenant index."""
    shard = q.EdgeShard.create(path, edge_config(dim, profile))
    for field in keyword_fields:
        schema = q.PayloadSchemaType.Keyword
        if profile == "disk" and field == "course_id":
            schema = q.KeywordIndexParams(is_tenant=True)
        shard.update(q.UpdateOperation.create_field_index(field, schema))
    return shard


def dense_params(profile: Profile = "ram") -> q.SearchParams | None:
    """Search parameters of a dense query: under ``disk`` the int8 copy scores candidates and the
    best ``OVERSAMPLING`` × limit are rescored with the original vectors; None under ``ram``."""
    if profile == "ram":
        return None
    return q.SearchParams(quantization=q.QuantizationSearchParams(rescore=True, oversampling=OVERSAMPLING))
