"""The points of the search index in a Qdrant server (``QDRANT_URL``), through qdrant-client: the same
named vectors and payload as the embedded shard (:mod:`services.ask.search_index`), in one collection."""

from __future__ import annotations

from dataclasses import dataclass

from lecturecopilot.models import EMBED_DIM

from .points import ALL_COURSES, DENSE, SPARSE


@dataclass
class _Found:
    id: str
    payload: dict
    score: float


class QdrantServerBackend:
    """Points in a Qdrant server (or any qdrant-client target) instead of the embedded shard.

    ``client`` is a ``qdrant_client.QdrantClient``; ``collection`` is created on first use with a
    cosine ``dense`` vector (384-d), a plain sparse ``bm25`` vector and keyword indexes on
    ``course_id``, ``lecture_id`` and ``kind``. Raises qdrant-client's errors when the server
    refuses or is unreachable.
    """

    def __init__(self, client, collection: str = "lecture_copilot", replication_factor: int = 1):
        from qdrant_client import models as m

        self.client, self.collection, self.m = client, collection, m
        if not client.collection_exists(collection):
            client.create_collection(
                collection, vectors_config={DENSE: m.VectorParams(size=EMBED_DIM, distance=m.Distance.COSINE)},
                sparse_vectors_config={SPARSE: m.SparseVectorParams()}, replication_factor=replication_factor)
            for field in ("course_id", "lecture_id", "kind"):
                client.create_payload_index(collection, field, m.PayloadSchemaType.KEYWORD)

    def _filter(self, course_id: str, lecture_id: str | None, kind: str | None):
        m = self.m
        must = [] if course_id == ALL_COURSES else [m.FieldCondition(key="course_id", match=m.MatchValue(value=course_id))]
        if lecture_id:
            must.append(m.FieldCondition(key="lecture_id", match=m.MatchValue(value=lecture_id)))
        if kind:
            must.append(m.FieldCondition(key="kind", match=m.MatchValue(value=kind)))
        return m.Filter(must=must)

    def upsert(self, points: list[tuple[str, list[float], object, dict]]) -> None:
        """``points``: (id, dense vector, BM25 sparse vector with ``indices``/``values``, payload)."""
        m = self.m
        self.client.upsert(self.collection, wait=True, points=[
            m.PointStruct(id=pid, payload=payload, vector={
                DENSE: dense, SPARSE: m.SparseVector(indices=list(sp.indices), values=list(sp.values))})
            for pid, dense, sp, payload in points])

    def delete_lecture(self, lecture_id: str) -> None:
        m = self.m
        self.client.delete(self.collection, wait=True, points_selector=m.FilterSelector(filter=m.Filter(
            must=[m.FieldCondition(key="lecture_id", match=m.MatchValue(value=lecture_id))])))

    def query(self, specs: list[tuple]) -> list[list[_Found]]:
        """``specs``: (vector name, dense list or (indices, values), course_id, lecture_id, kind, limit)."""
        m = self.m
        reqs = []
        for using, vec, course_id, lecture_id, kind, limit in specs:
            query = m.SparseVector(indices=list(vec[0]), values=list(vec[1])) if using == SPARSE else vec
            reqs.append(m.QueryRequest(query=query, using=using, filter=self._filter(course_id, lecture_id, kind),
                                       limit=limit, with_payload=True))
        res = self.client.query_batch_points(self.collection, requests=reqs)
        return [[_Found(str(p.id), p.payload, float(p.score)) for p in r.points] for r in res]

    def close(self) -> None:
        self.client.close()
