"""The search index the ask service queries: an embedded Qdrant shard (qdrant-edge).

Postgres is the system of record for segments and their embeddings; this shard is the
ask process's own replica of them, rebuilt at start and brought up to date before each
query from a cheap watermark check (``lectures.indexed_at`` per course); the same query gives
every lecture's current number, which labels the hits (a renumber needs no re-indexing). Every point
carries ``course_id`` and ``lecture_id`` in its payload; every query is filtered by course.

Named vectors per point: ``dense`` (all-MiniLM-L6-v2, cosine) and ``bm25`` (sparse,
Qdrant's BM25 with the IDF modifier; IDF is computed over the active course's points only,
via ``SearchParams(idf=IdfParams(corpus=course filter))``, so one course's vocabulary
never changes another course's ranking).

With ``QDRANT_URL`` set, the points live in a Qdrant server instead (:class:`QdrantServerBackend`,
through qdrant-client): the same named vectors and payload (:mod:`lecturecopilot.points`) in one
collection, written by the index service when it indexes a lecture; ask only queries them, still
loading from Postgres what it keeps in memory (sentences, chapters, token statistics), and drops
any hit of a lecture Postgres does not list as ready (a point whose deletion failed). A server computes
IDF over its whole collection, so there the BM25 query is weighted on our side with the course's
own IDF (Qdrant's formula, ln((N − n + 0.5)/(n + 0.5) + 1), N and n counted over the course's
segments) and the stored sparse vectors carry no modifier: the ranking stays per course.
"""

from __future__ import annotations

import re
import shutil
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import qdrant_edge as q
from psycopg_pool import ConnectionPool

from lecturecopilot import db
from lecturecopilot.models import EMBED_DIM
from lecturecopilot.points import ALL_COURSES, DENSE, SEGMENT, SPARSE, SUBCHUNK, bm25, lecture_points

from . import spelling
from .chargrams import CourseGrams
from .qdrant_server import QdrantServerBackend
from .shard_config import Profile, create_shard, dense_params

__all__ = ["ALL_COURSES", "EmbeddedSearchIndex", "Hit", "IndexedSentence", "QdrantServerBackend"]



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
    """A sentence of a lecture (seconds); ``kind`` "speech" or "slide" (a slide's text at the second it appears)."""

    start_s: float
    end_s: float
    text: str
    kind: str = "speech"




def _course_filter(course_id: str, lecture_id: str | None, kind: str | None = None) -> q.Filter:
    """The hard filter of every query: the active course (and lecture), one kind of point."""
    must = [] if course_id == ALL_COURSES else [q.FieldCondition(key="course_id", match=q.MatchValue(course_id))]
    if lecture_id:
        must.append(q.FieldCondition(key="lecture_id", match=q.MatchValue(lecture_id)))
    if kind:
        must.append(q.FieldCondition(key="kind", match=q.MatchValue(kind)))
    return q.Filter(must=must)


class EmbeddedSearchIndex:
    """A qdrant-edge shard at ``path`` (or a Qdrant server: ``server``) synced from Postgres, laid
    out per ``profile`` (:mod:`services.ask.shard_config`: ``ram`` or ``disk``). Starts empty: a
    course's points are loaded on its first query (:meth:`sync_course`). Thread-safe (one lock)."""

    def __init__(self, path: Path, pool: ConnectionPool, server: QdrantServerBackend | None = None,
                 profile: Profile = "ram"):
        self.pool = pool
        self.path = path
        self.server = server
        self.shard = None
        self.profile = profile  # the shard's memory layout (services.ask.shard_config; LC_SEARCH_PROFILE)
        self._dense_params = dense_params(profile)
        if server is None:
            shutil.rmtree(path, ignore_errors=True)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.shard = create_shard(str(path), EMBED_DIM, profile)
        self.bm25 = bm25()
        self._lock = threading.RLock()
        self._synced: dict[str, dict[str, object]] = {}  # course_id -> {lecture_id: indexed_at}
        # lecture_id -> its number as Postgres has it at the last sync: hits are labelled with it, not
        # with the number in the point's payload (written when the lecture was indexed), so a renumber
        # reaches citations and search at the next query without re-indexing
        self.numbers: dict[str, int] = {}
        # (lecture_id, segment_idx) -> sentences with their embeddings, for the extractive writer
        self.sentences: dict[tuple[str, int], tuple[list[IndexedSentence], np.ndarray]] = {}
        # (lecture_id, segment_idx) -> the segment as a Hit (score 0), to map sub-chunk hits to
        self.segments: dict[tuple[str, int], Hit] = {}
        # course vocabulary statistics for the gate: BM25 token ids per segment, per course
        self.segment_tokens: dict[tuple[str, int], frozenset[int]] = {}
        self.course_of: dict[str, str] = {}
        self._df_cache: dict[str, tuple[int, dict[int, int]]] = {}
        self._grams_cache: dict[str, CourseGrams] = {}
        self._vocab_cache: dict[str, dict[str, int]] = {}
        self._compound_cache: dict[str, dict[str, str]] = {}
        # lecture_id -> chapters [(start_s, end_s, bullet embeddings (k, dim))] for the chapter prior
        self.chapters: dict[str, list[tuple[float, float, np.ndarray]]] = {}
        # lecture_id -> all its sentences in time order with their embeddings (centered passages)
        self.lecture_sentences: dict[str, tuple[list[IndexedSentence], np.ndarray]] = {}
        # lecture_id -> its slides (start_s, end_s, text) in time order: what was on screen when (a moment's window)
        self.slides: dict[str, list[tuple[float, float, str]]] = {}

    # -- sync ---------------------------------------------------------------------------
    @db.retry_on_disconnect
    def sync_course(self, course_id: str) -> None:
        """Brings the shard's points of ``course_id`` in line with Postgres (ready lectures): a
        lecture indexed anew (``indexed_at``) is reloaded, a deleted one dropped, and every lecture's
        current number is taken (a renumber changes no point, only the labels of hits). Runs once
        more if Postgres cut the connection (a lecture's load is whole or not at all)."""
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT id::text AS id, number, indexed_at FROM lectures "
                "WHERE course_id=%s AND status='ready' AND indexed_at IS NOT NULL", (course_id,)).fetchall()
        want = {r["id"]: r["indexed_at"] for r in rows}
        numbers = {r["id"]: r["number"] for r in rows}
        with self._lock:
            self.numbers.update(numbers)
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
        if self.shard is not None:  # a server's points are the index service's to delete
            self.shard.update(q.UpdateOperation.delete_points_by_filter(
                q.Filter(must=[q.FieldCondition(key="lecture_id", match=q.MatchValue(lecture_id))])))
        for key in [k for k in self.sentences if k[0] == lecture_id]:
            del self.sentences[key]
        for key in [k for k in self.segments if k[0] == lecture_id]:
            del self.segments[key]
            self.segment_tokens.pop(key, None)
        course = self.course_of.pop(lecture_id, "")
        self.numbers.pop(lecture_id, None)
        self._df_cache.pop(course, None)
        self._grams_cache.pop(course, None)
        self._vocab_cache.pop(course, None)
        self._compound_cache.pop(course, None)
        self.lecture_sentences.pop(lecture_id, None)
        self.chapters.pop(lecture_id, None)
        self.slides.pop(lecture_id, None)

    def _load_lecture(self, course_id: str, lecture_id: str, number: int) -> None:
        # one snapshot for the four tables: a re-index committing mid-load must not mix its rows with
        # the old ones (PostgreSQL's REPEATABLE READ sees only what was committed before the first query)
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            segs = conn.execute("SELECT id::text AS id, idx, start_s, end_s, text, embedding FROM segments "
                                "WHERE lecture_id=%s ORDER BY idx", (lecture_id,)).fetchall()
            sents = conn.execute("SELECT segment_idx, start_s, end_s, text, embedding, kind FROM sentences "
                                 "WHERE lecture_id=%s ORDER BY idx", (lecture_id,)).fetchall()
            subs = conn.execute("SELECT idx, segment_idx, start_s, end_s, text, embedding FROM subchunks "
                                "WHERE lecture_id=%s ORDER BY idx", (lecture_id,)).fetchall()
            chaps = conn.execute("SELECT start_s, end_s, bullet_embeddings FROM chapters WHERE lecture_id=%s "
                                 "ORDER BY idx", (lecture_id,)).fetchall()
            shown = conn.execute("SELECT start_s, end_s, text FROM slides WHERE lecture_id=%s ORDER BY start_s, idx",
                                 (lecture_id,)).fetchall()
        self._drop_lecture(lecture_id)
        self.numbers[lecture_id] = number
        self.course_of[lecture_id] = course_id
        self._df_cache.pop(course_id, None)
        self._grams_cache.pop(course_id, None)
        self._vocab_cache.pop(course_id, None)
        self._compound_cache.pop(course_id, None)
        for s in segs:
            self.segment_tokens[(lecture_id, s["idx"])] = frozenset(self.bm25.embed_document(s["text"]).indices)
            self.segments[(lecture_id, s["idx"])] = Hit(s["id"], lecture_id, number, s["idx"], s["start_s"],
                                                        s["end_s"], s["text"], 0.0)
        points = lecture_points(course_id, lecture_id, number, segs, subs) if self.shard is not None else []
        if points:  # a server already holds them (the index service wrote them)
            self.shard.update(q.UpdateOperation.upsert_points(
                [q.Point(pid, {DENSE: dense, SPARSE: sp}, payload) for pid, dense, sp, payload in points]))
        self.slides[lecture_id] = [(float(r["start_s"]), float(r["end_s"]), r["text"] or "") for r in shown]
        self.chapters[lecture_id] = [
            (c["start_s"], c["end_s"], np.asarray(c["bullet_embeddings"], dtype="float32").reshape(-1, EMBED_DIM))
            for c in chaps]
        if sents:
            self.lecture_sentences[lecture_id] = (
                [IndexedSentence(r["start_s"], r["end_s"], r["text"], r["kind"]) for r in sents],
                np.asarray([r["embedding"] for r in sents], dtype="float32"))
        grouped: dict[int, list[dict]] = {}
        for r in sents:
            grouped.setdefault(r["segment_idx"], []).append(r)
        for si, rs in grouped.items():
            self.sentences[(lecture_id, si)] = (
                [IndexedSentence(r["start_s"], r["end_s"], r["text"], r["kind"]) for r in rs],
                np.asarray([r["embedding"] for r in rs], dtype="float32"),
            )

    # -- queries ------------------------------------------------------------------------
    def chapter_prior(self, hit: Hit, query_vec: np.ndarray) -> float | None:
        """Max cosine between the query and the summary bullets of the chapter holding the
        segment's midpoint (the Cite-or-Decline paper's chapter-summary prior); None when that
        chapter has no bullets."""
        mid = (hit.start_s + hit.end_s) / 2
        for start, end, bullets in self.chapters.get(hit.lecture_id, []):
            if start <= mid <= end + 1e-6:
                return float((bullets @ query_vec).max()) if len(bullets) else None
        return None

    def lecture_segments(self, lecture_id: str) -> list[Hit]:
        """The lecture's segments (score 0) in time order, as of the last sync; [] for one not loaded."""
        with self._lock:
            return sorted((h for (lid, _), h in self.segments.items() if lid == lecture_id), key=lambda h: h.start_s)

    def lecture_slides(self, lecture_id: str) -> list[tuple[float, float, str]]:
        """The lecture's slides as ``(start_s, end_s, text)`` (seconds on screen, the text read from it) in
        time order, as of the last sync; [] for a lecture without slides (captions only, a talk without any)."""
        return list(self.slides.get(lecture_id, []))

    def course_vocabulary(self, course_id: str) -> dict[str, int]:
        """Lower-case words of the course's segments with their counts (for spelling correction)."""
        with self._lock:
            if course_id not in self._vocab_cache:
                words = (w for segment in self._course_words(course_id) for w in segment)
                self._vocab_cache[course_id] = dict(Counter(words))
            return self._vocab_cache[course_id]

    def course_compounds(self, course_id: str) -> dict[str, str]:
        """The words the course never says but says in full, keyed by that word: {"lookup": "look up",
        "clt": "central limit theorem"} (:func:`.spelling.compounds`). For :func:`.spelling.correct`."""
        with self._lock:
            if course_id not in self._compound_cache:
                self._compound_cache[course_id] = spelling.compounds(self._course_words(course_id),
                                                                     self.course_vocabulary(course_id))
            return self._compound_cache[course_id]

    def _course_words(self, course_id: str) -> list[list[str]]:
        """The lower-case words of each of the course's segments, in index order."""
        return [re.findall(r"[a-z]+", h.text.lower()) for (lid, _), h in self.segments.items()
                if self.course_of.get(lid) == course_id]

    def passage_tokens(self, hit: Hit) -> frozenset[int]:
        """The BM25 token ids ``hit``'s segment says (the ids ``course_df`` counts)."""
        return self.segment_tokens.get((hit.lecture_id, hit.segment_idx), frozenset())

    def course_df(self, course_id: str) -> tuple[int, dict[int, int]]:
        """(number of segments, document frequency per BM25 token id) over the course's segments
        only — statistics of one course never mix with another's."""
        with self._lock:
            if course_id not in self._df_cache:
                course = [toks for (lid, _), toks in self.segment_tokens.items()
                          if self.course_of.get(lid) == course_id]
                self._df_cache[course_id] = (len(course), dict(Counter(t for toks in course for t in toks)))
            return self._df_cache[course_id]

    def query_tokens(self, text: str) -> list[int]:
        """The BM25 token ids of ``text`` as a query (the ids :meth:`course_df` counts)."""
        return list(self.bm25.embed_query(text).indices)

    def course_grams(self, course_id: str) -> CourseGrams:
        """Character n-gram statistics over the course's segments only (see :mod:`.chargrams`)."""
        with self._lock:
            cached = self._grams_cache.get(course_id)
            if cached is None:
                texts = [h.text for (lid, _), h in self.segments.items() if self.course_of.get(lid) == course_id]
                cached = self._grams_cache[course_id] = CourseGrams(texts)
            return cached

    def expanded_query(self, text: str, feedback: list[str], terms: int = 8, weight: float = 0.4) -> q.SparseVector:
        """BM25 query with pseudo-relevance feedback: the query's tokens (weight 1) plus the
        ``terms`` tokens weighing most in the ``feedback`` passages (weight ``weight``); IDF
        is applied by Qdrant at query time, so common tokens count little (RM3-style
        expansion, Lavrenko & Croft 2001; Abdul-Jaleel et al. 2004)."""
        base = self.bm25.embed_query(text)
        mass: dict[int, float] = {}
        for doc in feedback:
            v = self.bm25.embed_document(doc)
            total = sum(v.values) or 1.0
            for i, x in zip(v.indices, v.values):
                mass[i] = mass.get(i, 0.0) + x / total
        own = set(base.indices)
        extra = [i for i, _ in sorted(mass.items(), key=lambda kv: -kv[1]) if i not in own][:terms]
        return q.SparseVector(list(base.indices) + extra, list(base.values) + [weight] * len(extra))

    def search(self, course_id: str, lecture_id: str | None, dense: np.ndarray, text: str,
               limit: int, sparse_query: q.SparseVector | None = None) -> dict[str, list[Hit]]:
        """Ranked lists inside the course (and lecture), each of segments, best first:

        - ``dense`` / ``bm25``: segments by cosine / by BM25 (IDF over the course);
        - ``dense_sub`` / ``bm25_sub``: sub-chunks by cosine / BM25, each segment scored by its
          best sub-chunk (max-pooling), so the unit returned is always the segment (≤ 90 s).
        """
        sparse_q = sparse_query or self.bm25.embed_query(text)
        if self.server is not None:
            weighted = self._course_idf_weighted(course_id, sparse_q)
            vec = dense.tolist()
            with self._lock:
                dense_seg, bm25_seg, dense_sub, bm25_sub = self.server.query([
                    (DENSE, vec, course_id, lecture_id, SEGMENT, limit),
                    (SPARSE, weighted, course_id, lecture_id, SEGMENT, limit),
                    (DENSE, vec, course_id, lecture_id, SUBCHUNK, limit * 3),
                    (SPARSE, weighted, course_id, lecture_id, SUBCHUNK, limit * 3)])
                return self._lists(dense_seg, bm25_seg, dense_sub, bm25_sub, limit)
        seg_f = _course_filter(course_id, lecture_id, SEGMENT)
        sub_f = _course_filter(course_id, lecture_id, SUBCHUNK)
        reqs = q.QueryBatchRequest([
            q.QueryRequest(limit=limit, query=q.Query.Nearest(dense.tolist(), using=DENSE), filter=seg_f,
                           params=self._dense_params, with_payload=True),
            q.QueryRequest(limit=limit, query=q.Query.Nearest(sparse_q, using=SPARSE), filter=seg_f,
                           params=q.SearchParams(idf=q.IdfParams(corpus=seg_f)), with_payload=True),
            q.QueryRequest(limit=limit * 3, query=q.Query.Nearest(dense.tolist(), using=DENSE), filter=sub_f,
                           params=self._dense_params, with_payload=True),
            q.QueryRequest(limit=limit * 3, query=q.Query.Nearest(sparse_q, using=SPARSE), filter=sub_f,
                           params=q.SearchParams(idf=q.IdfParams(corpus=sub_f)), with_payload=True),
        ])
        with self._lock:
            dense_seg, bm25_seg, dense_sub, bm25_sub = self.shard.query_batch(reqs)
            return self._lists(dense_seg, bm25_seg, dense_sub, bm25_sub, limit)

    def _course_idf_weighted(self, course_id: str, sparse) -> tuple[list[int], list[float]]:
        """The BM25 query with each term weighted by its IDF over the course's segments (Qdrant's
        formula: ln((N − n + 0.5)/(n + 0.5) + 1)); used with a server, whose IDF would span every course."""
        import math

        if course_id == ALL_COURSES:
            n_docs, df = 0, {}
            for cid in set(self.course_of.values()):
                n, d = self.course_df(cid)
                n_docs += n
                for t, k in d.items():
                    df[t] = df.get(t, 0) + k
        else:
            n_docs, df = self.course_df(course_id)
        idx, vals = [], []
        for i, v in zip(sparse.indices, sparse.values):
            n = df.get(i, 0)
            idx.append(int(i))
            vals.append(float(v) * math.log((n_docs - n + 0.5) / (n + 0.5) + 1.0))
        return idx, vals

    def number_of(self, lecture_id: str, fallback: int) -> int:
        """The lecture's number at the last sync (``fallback``: the one stored with its points)."""
        return self.numbers.get(lecture_id, fallback)

    def _lists(self, dense_seg, bm25_seg, dense_sub, bm25_sub, limit: int) -> dict[str, list[Hit]]:
        """The four result lists as hits. Called under ``_lock``: a lecture that another ask's
        :meth:`sync_course` is reloading is briefly missing from ``segments``."""
        def hits(res) -> list[Hit]:
            return [Hit(str(p.id), p.payload["lecture_id"],
                        self.number_of(p.payload["lecture_id"], int(p.payload["lecture_number"])),
                        int(p.payload["segment_idx"]), float(p.payload["start_s"]), float(p.payload["end_s"]),
                        p.payload["text"], float(p.score)) for p in res if p.payload["lecture_id"] in self.course_of]

        def pooled(res) -> list[Hit]:
            best: dict[tuple[str, int], float] = {}
            for p in res:  # results come best first: the first per segment is its max
                key = (p.payload["lecture_id"], int(p.payload["segment_idx"]))
                if key not in best and key in self.segments:
                    best[key] = float(p.score)
            out = []
            for key, score in list(best.items())[:limit]:
                h = self.segments[key]
                out.append(Hit(h.point_id, h.lecture_id, self.number_of(h.lecture_id, h.lecture_number),
                               h.segment_idx, h.start_s, h.end_s, h.text, score))
            return out

        return {"dense": hits(dense_seg), "bm25": hits(bm25_seg), "dense_sub": pooled(dense_sub),
                "bm25_sub": pooled(bm25_sub)}

    def close(self) -> None:
        with self._lock:
            if self.server is not None:
                self.server.close()
            else:
                self.shard.close()
