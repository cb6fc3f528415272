"""The search index the ask service queries: an embedded Qdrant shard (qdrant-edge).

Postgres is the system of record for segments and their embeddings; this shard is the
ask process's own replica of them, rebuilt at start and brought up to date before each
query from a cheap watermark check (``lectures.indexed_at`` per course). Every point
carries ``course_id`` and ``lecture_id`` in its payload; every query is filtered by course.

Named vectors per point: ``dense`` (all-MiniLM-L6-v2, cosine) and ``bm25`` (sparse,
Qdrant's BM25 with the IDF modifier; IDF is computed over the active course's points only,
via ``SearchParams(idf=IdfParams(corpus=course filter))``, so one course's vocabulary
never changes another course's ranking).
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import qdrant_edge as q
from psycopg_pool import ConnectionPool

from lecturecopilot.models import EMBED_DIM

DENSE = "dense"
SPARSE = "bm25"


@dataclass
class Hit:
    """One retrieved segment. Times in seconds; ``score`` is the list's own score."""

    point_id: str
    lecture_id: str
    lecture_number: int
    segment_idx: int
    start_s: float
    end_s: float
    text: str
    score: float


@dataclass
class IndexedSentence:
    start_s: float
    end_s: float
    text: str


def _course_filter(course_id: str, lecture_id: str | None) -> q.Filter:
    must = [q.FieldCondition(key="course_id", match=q.MatchValue(course_id))]
    if lecture_id:
        must.append(q.FieldCondition(key="lecture_id", match=q.MatchValue(lecture_id)))
    return q.Filter(must=must)


class EmbeddedSearchIndex:
    """A qdrant-edge shard at ``path`` synced from Postgres. Thread-safe (one lock)."""

    def __init__(self, path: Path, pool: ConnectionPool):
        self.pool = pool
        self.path = path
        shutil.rmtree(path, ignore_errors=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        cfg = q.EdgeConfig(
            vectors={DENSE: q.EdgeVectorParams(size=EMBED_DIM, distance=q.Distance.Cosine)},
            sparse_vectors={SPARSE: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)},
        )
        self.shard = q.EdgeShard.create(str(path), cfg)
        self.shard.update(q.UpdateOperation.create_field_index("course_id", q.PayloadSchemaType.Keyword))
        self.shard.update(q.UpdateOperation.create_field_index("lecture_id", q.PayloadSchemaType.Keyword))
        self.bm25 = q.Bm25(q.Bm25Config(language="english"))
        self._lock = threading.RLock()
        self._synced: dict[str, dict[str, object]] = {}  # course_id -> {lecture_id: indexed_at}
        # (lecture_id, segment_idx) -> sentences with their embeddings, for the extractive writer
        self.sentences: dict[tuple[str, int], tuple[list[IndexedSentence], np.ndarray]] = {}

    # -- sync ---------------------------------------------------------------------------
    def sync_course(self, course_id: str) -> None:
        """Brings the shard's points of ``course_id`` in line with Postgres (ready lectures)."""
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT id::text AS id, number, indexed_at FROM lectures "
                "WHERE course_id=%s AND status='ready' AND indexed_at IS NOT NULL", (course_id,)).fetchall()
        want = {r["id"]: r["indexed_at"] for r in rows}
        numbers = {r["id"]: r["number"] for r in rows}
        with self._lock:
            have = self._synced.setdefault(course_id, {})
            if have == want:
                return
            for lid in [lid for lid in have if lid not in want]:
                self._drop_lecture(lid)
                del have[lid]
            for lid, stamp in want.items():
                if have.get(lid) != stamp:
                    self._load_lecture(course_id, lid, numbers[lid])
                    have[lid] = stamp

    def _drop_lecture(self, lecture_id: str) -> None:
        self.shard.update(q.UpdateOperation.delete_points_by_filter(
            q.Filter(must=[q.FieldCondition(key="lecture_id", match=q.MatchValue(lecture_id))])))
        for key in [k for k in self.sentences if k[0] == lecture_id]:
            del self.sentences[key]

    def _load_lecture(self, course_id: str, lecture_id: str, number: int) -> None:
        with self.pool.connection() as conn:
            segs = conn.execute("SELECT id::text AS id, idx, start_s, end_s, text, embedding FROM segments "
                                "WHERE lecture_id=%s ORDER BY idx", (lecture_id,)).fetchall()
            sents = conn.execute("SELECT segment_idx, start_s, end_s, text, embedding FROM sentences "
                                 "WHERE lecture_id=%s ORDER BY idx", (lecture_id,)).fetchall()
        self._drop_lecture(lecture_id)
        points = [
            q.Point(s["id"], {DENSE: list(s["embedding"]), SPARSE: self.bm25.embed_document(s["text"])},
                    {"course_id": course_id, "lecture_id": lecture_id, "lecture_number": number,
                     "segment_idx": s["idx"], "start_s": s["start_s"], "end_s": s["end_s"], "text": s["text"]})
            for s in segs
        ]
        if points:
            self.shard.update(q.UpdateOperation.upsert_points(points))
        grouped: dict[int, list[dict]] = {}
        for r in sents:
            grouped.setdefault(r["segment_idx"], []).append(r)
        for si, rs in grouped.items():
            self.sentences[(lecture_id, si)] = (
                [IndexedSentence(r["start_s"], r["end_s"], r["text"]) for r in rs],
                np.asarray([r["embedding"] for r in rs], dtype="float32"),
            )

    # -- queries ------------------------------------------------------------------------
    def search(self, course_id: str, lecture_id: str | None, dense: np.ndarray, text: str,
               limit: int) -> tuple[list[Hit], list[Hit]]:
        """Two ranked lists inside the course (and lecture): dense cosine and sparse BM25."""
        f = _course_filter(course_id, lecture_id)
        reqs = q.QueryBatchRequest([
            q.QueryRequest(limit=limit, query=q.Query.Nearest(dense.tolist(), using=DENSE), filter=f,
                           with_payload=True),
            q.QueryRequest(limit=limit, query=q.Query.Nearest(self.bm25.embed_query(text), using=SPARSE),
                           filter=f, params=q.SearchParams(idf=q.IdfParams(corpus=f)), with_payload=True),
        ])
        with self._lock:
            dense_res, sparse_res = self.shard.query_batch(reqs)

        def hits(res) -> list[Hit]:
            return [Hit(str(p.id), p.payload["lecture_id"], int(p.payload["lecture_number"]),
                        int(p.payload["segment_idx"]), float(p.payload["start_s"]), float(p.payload["end_s"]),
                        p.payload["text"], float(p.score)) for p in res]

        return hits(dense_res), hits(sparse_res)

    def close(self) -> None:
        with self._lock:
            self.shard.close()
