"""The points of the search index in a Qdrant server (``QDRANT_URL``), through qdrant-client: the same
named vectors and payload as the embedded shard (:mod:`lecturecopilot.points`), in one collection.
Ask only reads them; the index service writes them (:class:`lecturecopilot.points.PointWriter`)."""

from __future__ import annotations

from dataclasses import dataclass

from lecturecopilot.points import ALL_COURSES, DEFAULT_COLLECTION, SPARSE, ensure_collection


@dataclass
class _Found:
    id: str
    payload: dict
    score: float


class QdrantServerBackend:
    """Queries the points in a Qdrant server (or any qdrant-client target) instead of the embedded
    shard; it never writes a point.

    ``client`` is a ``qdrant_client.QdrantClient``; ``collection`` is created empty if it does not
    exist yet (:func:`lecturecopilot.points.ensure_collection`), so ask can start before the first
    lecture is indexed. Raises qdrant-client's errors when the server refuses or is unreachable.
    """

    def __init__(self, client, collection: str = DEFAULT_COLLECTION, replication_factor: int = 1):
        from qdrant_client import models as m

        self.client, self.collection, self.m = client, collection, m
        ensure_collection(client, collection, replication_factor)

    def _filter(self, course_id: str, lecture_id: str | None, kind: str | None):
        m = self.m
        must = [] if course_id == ALL_COURSES else [m.FieldCondition(key="course_id", match=m.MatchValue(value=course_id))]
        if lecture_id:
            must.append(m.FieldCondition(key="lecture_id", match=m.MatchValue(value=lecture_id)))
        if kind:
            must.append(m.FieldCondition(key="kind", match=m.MatchValue(value=kind)))
        return m.Filter(must=must)

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
