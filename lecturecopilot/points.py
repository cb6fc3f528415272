"""What a point of the search index is, in one place for the services that write and read them.

A point is a segment of a lecture (at most 90 s) or one of its ~20 s sub-chunks, with two named
vectors — ``dense`` (all-MiniLM-L6-v2, cosine, :data:`lecturecopilot.models.EMBED_DIM`) and
``bm25`` (Qdrant's BM25 document tokens, English) — and the payload of :func:`payload`. Point ids
are deterministic (a segment's row id in Postgres; :func:`subchunk_point_id`), so writing a
lecture again replaces its points, never duplicates them.

Who writes: with ``QDRANT_URL`` set the index service writes a lecture's points when it indexes it
(:class:`PointWriter`) and ingest deletes them with the lecture; ask only queries. Without it ask
builds its own embedded shard from Postgres with the same :func:`lecture_points`.
"""

from __future__ import annotations

import threading
import uuid
from functools import lru_cache
from typing import Iterable, Mapping

from .models import EMBED_DIM

DENSE = "dense"        # all-MiniLM-L6-v2, cosine
SPARSE = "bm25"        # Qdrant's BM25 tokens
SEGMENT = "segment"    # a point's ``kind``: a segment (at most 90 s) ...
SUBCHUNK = "subchunk"  # ... or one of its ~20 s sub-chunks
ALL_COURSES = "*all-courses*"  # evaluation only: the isolation-off ablation; never reachable from the API
DEFAULT_COLLECTION = "lecture_copilot"
# payload fields with a keyword index (every query filters on them)
KEYWORD_FIELDS = ("course_id", "lecture_id", "kind")
# every payload field, for readers: ids (str), lecture_number (int), kind, segment_idx (int), times (s), text
PAYLOAD_FIELDS = ("course_id", "lecture_id", "lecture_number", "kind", "segment_idx", "start_s", "end_s", "text")

Point = tuple  # (id: str, dense: list[float], sparse: object with .indices/.values, payload: dict)


@lru_cache(maxsize=1)
def bm25():
    """The BM25 encoder (qdrant-edge's, English) whose document tokens are the ``bm25`` vectors and
    whose query tokens search them. One per process (it is stateless)."""
    import qdrant_edge as q

    return q.Bm25(q.Bm25Config(language="english"))


def subchunk_point_id(lecture_id: str, idx: int) -> str:
    """The point id of sub-chunk ``idx`` of a lecture (a UUID5 under the lecture's id)."""
    return str(uuid.uuid5(uuid.UUID(lecture_id), f"subchunk:{idx}"))


def payload(course_id: str, lecture_id: str, number: int, kind: str, segment_idx: int, row: Mapping) -> dict:
    """The payload of a point (the :data:`PAYLOAD_FIELDS`) of lecture ``number``'s segment
    ``segment_idx`` or one of its sub-chunks (``kind``), ``row`` its ``start_s``, ``end_s`` (seconds)
    and ``text``."""
    return {"course_id": course_id, "lecture_id": lecture_id, "lecture_number": number, "kind": kind,
            "segment_idx": segment_idx, "start_s": row["start_s"], "end_s": row["end_s"], "text": row["text"]}


def lecture_points(course_id: str, lecture_id: str, number: int, segments: Iterable[Mapping],
                   subchunks: Iterable[Mapping]) -> list[Point]:
    """The points of one lecture from its ``segments`` rows (``id``, ``idx``, ``start_s``, ``end_s``,
    ``text``, ``embedding``) and ``subchunks`` rows (``idx``, ``segment_idx``, the same times, text
    and embedding), as (id, dense, BM25 sparse, payload) tuples: segments first, then sub-chunks."""
    enc = bm25()

    def point(pid: str, kind: str, seg_idx: int, r: Mapping) -> Point:
        return (pid, list(r["embedding"]), enc.embed_document(r["text"]),
                payload(course_id, lecture_id, number, kind, seg_idx, r))

    points = [point(str(s["id"]), SEGMENT, s["idx"], s) for s in segments]
    points += [point(subchunk_point_id(lecture_id, c["idx"]), SUBCHUNK, c["segment_idx"], c) for c in subchunks]
    return points


def ensure_collection(client, collection: str = DEFAULT_COLLECTION, replication_factor: int = 1) -> None:
    """Creates ``collection`` on a qdrant-client target unless it exists: a cosine ``dense`` vector
    (384-d), a plain sparse ``bm25`` vector (no IDF modifier: readers weight the query with the
    course's own IDF) and keyword indexes on :data:`KEYWORD_FIELDS`. Raises qdrant-client's errors
    when the server refuses or is unreachable."""
    from qdrant_client import models as m

    if client.collection_exists(collection):
        return
    client.create_collection(
        collection, vectors_config={DENSE: m.VectorParams(size=EMBED_DIM, distance=m.Distance.COSINE)},
        sparse_vectors_config={SPARSE: m.SparseVectorParams()}, replication_factor=replication_factor)
    for field in KEYWORD_FIELDS:
        client.create_payload_index(collection, field, m.PayloadSchemaType.KEYWORD)


class PointWriter:
    """Writes and deletes lectures' points in a Qdrant collection (qdrant-client; ``QDRANT_URL``).

    ``client`` is a ``qdrant_client.QdrantClient`` (a server, or local mode in tests); nothing is
    asked of the server until the first write, which creates the collection if it is missing
    (:func:`ensure_collection`). Every call waits for the write to be applied. Raises
    qdrant-client's errors when the server refuses or is unreachable.
    """

    def __init__(self, client, collection: str = DEFAULT_COLLECTION, replication_factor: int = 1):
        from qdrant_client import models as m

        self.client, self.collection, self.m = client, collection, m
        self.replication_factor = replication_factor
        self._ready = False
        self._lock = threading.Lock()

    def _ensure(self) -> None:
        with self._lock:
            if not self._ready:
                ensure_collection(self.client, self.collection, self.replication_factor)
                self._ready = True

    @classmethod
    def from_settings(cls, settings) -> "PointWriter | None":
        """The writer of ``settings.qdrant_url`` (with its API key, collection and replication
        factor), or None when no Qdrant server is configured (the embedded default)."""
        if not settings.qdrant_url:
            return None
        from qdrant_client import QdrantClient

        return cls(QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key),
                   settings.qdrant_collection, settings.qdrant_replication_factor)

    def replace_lecture(self, lecture_id: str, points: list[Point]) -> None:
        """Makes ``points`` the lecture's points: upserts them, then deletes the lecture's points
        whose ids are not among them (a re-index with fewer segments), so readers never see the
        lecture without points."""
        self._ensure()
        m = self.m
        if points:
            self.client.upsert(self.collection, wait=True, points=[
                m.PointStruct(id=pid, payload=body, vector={
                    DENSE: dense, SPARSE: m.SparseVector(indices=list(sp.indices), values=list(sp.values))})
                for pid, dense, sp, body in points])
        keep = [pid for pid, *_ in points]
        self.client.delete(self.collection, wait=True, points_selector=m.FilterSelector(filter=m.Filter(
            must=[m.FieldCondition(key="lecture_id", match=m.MatchValue(value=lecture_id))],
            must_not=[m.HasIdCondition(has_id=keep)] if keep else None)))

    def delete_lectures(self, lecture_ids: list[str]) -> None:
        """Deletes every point of the lectures ``lecture_ids`` (nothing when the list is empty)."""
        if not lecture_ids:
            return
        self._ensure()
        m = self.m
        self.client.delete(self.collection, wait=True, points_selector=m.FilterSelector(filter=m.Filter(
            must=[m.FieldCondition(key="lecture_id", match=m.MatchAny(any=list(lecture_ids)))])))

    def close(self) -> None:
        """Closes the client."""
        self.client.close()
