"""All of the index service's SQL on the pipeline path: the transcript it reads, the sentences,
segments, sub-chunks and chapters it writes, the rows a lecture's search points are made of, and
the lecture's ``ready`` state. Times in seconds; embeddings as lists of floats (384-d)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from psycopg_pool import ConnectionPool

from . import core
from .chapters import Chapter


def segment_id(lecture_id: str, idx: int) -> str:
    """Deterministic row id: re-indexing a lecture replaces its rows, never duplicates them."""
    return str(uuid.uuid5(uuid.UUID(lecture_id), f"segment:{idx}"))


@dataclass
class LectureIndex:
    """What indexing computed for one lecture: ``flat`` is every sentence as (segment index, sentence)
    in time order; each ``*_vecs`` is an array (n, 384) aligned with its list; ``bullet_vecs`` one
    list of bullet embeddings per chapter."""

    segments: list[core.Segment]
    seg_vecs: object
    flat: list[tuple[int, core.Sentence]]
    sent_vecs: object
    subchunks: list[core.SubChunk]
    sub_vecs: object
    chapters: list[Chapter]
    bullet_vecs: list[list[list[float]]]


def transcript(pool: ConnectionPool, lecture_id: str) -> tuple[list[core.TimedWord], list[tuple[float, str]]]:
    """The lecture's transcript words in order and its slides as (start_s, text)."""
    with pool.connection() as conn:
        rows = conn.execute("SELECT start_s, end_s, word FROM transcript_words WHERE lecture_id=%s ORDER BY idx",
                            (lecture_id,)).fetchall()
        slides = conn.execute("SELECT start_s, text FROM slides WHERE lecture_id=%s ORDER BY idx",
                              (lecture_id,)).fetchall()
    return [core.TimedWord(r["start_s"], r["end_s"], r["word"]) for r in rows], [(r["start_s"], r["text"]) for r in slides]


def _replace_rows(conn, lecture_id: str, course_id: str, ix: LectureIndex) -> None:
    for table in ("segments", "sentences", "subchunks", "chapters"):
        conn.execute(f"DELETE FROM {table} WHERE lecture_id=%s", (lecture_id,))
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO segments (id, lecture_id, course_id, idx, start_s, end_s, text, embedding) "
            "VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
            [(segment_id(lecture_id, i), lecture_id, course_id, i, s.start_s, s.end_s, s.text,
              ix.seg_vecs[i].tolist()) for i, s in enumerate(ix.segments)])
        cur.executemany(
            "INSERT INTO sentences (lecture_id, idx, segment_idx, start_s, end_s, text, embedding, kind) "
            "VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
            [(lecture_id, j, si, s.start_s, s.end_s, s.text, ix.sent_vecs[j].tolist(), s.kind)
             for j, (si, s) in enumerate(ix.flat)])
        cur.executemany(
            "INSERT INTO subchunks (lecture_id, idx, segment_idx, start_s, end_s, text, embedding) "
            "VALUES (%s,%s,%s,%s,%s,%s,%s)",
            [(lecture_id, j, c.segment_idx, c.start_s, c.end_s, c.text, ix.sub_vecs[j].tolist())
             for j, c in enumerate(ix.subchunks)])
        cur.executemany(
            "INSERT INTO chapters (lecture_id, idx, start_s, end_s, title, bullets, bullet_embeddings) "
            "VALUES (%s,%s,%s,%s,%s,%s,%s)",
            [(lecture_id, j, c.start_s, c.end_s, c.title, json.dumps(c.bullets), json.dumps(ix.bullet_vecs[j]))
             for j, c in enumerate(ix.chapters)])


def save_index(pool: ConnectionPool, lecture_id: str, course_id: str, ix: LectureIndex) -> None:
    """Replaces the lecture's segments, sentences, sub-chunks and chapters with ``ix`` in one transaction
    (the lecture's state is left as it is: :func:`mark_ready` follows)."""
    with pool.connection() as conn, conn.transaction():
        _replace_rows(conn, lecture_id, course_id, ix)


def reindex_targets(pool: ConnectionPool, course_id: str | None = None,
                    lecture_id: str | None = None) -> list[dict]:
    """The ready lectures a re-index would rebuild (of ``course_id`` and/or just ``lecture_id``; all
    when both are None), oldest first: ``id``, ``course_id``, ``number``, ``title``, ``generation``
    and ``passages`` (their segment count now)."""
    with pool.connection() as conn:
        return conn.execute(
            "SELECT l.id::text AS id, l.course_id::text AS course_id, l.number, l.title, l.generation, "
            "(SELECT count(*) FROM segments s WHERE s.lecture_id=l.id) AS passages FROM lectures l "
            "WHERE l.status='ready' AND l.indexed_at IS NOT NULL "
            "AND (%s::uuid IS NULL OR l.course_id=%s::uuid) AND (%s::uuid IS NULL OR l.id=%s::uuid) "
            "ORDER BY l.created_at, l.id", (course_id, course_id, lecture_id, lecture_id)).fetchall()


def save_reindex(pool: ConnectionPool, lecture_id: str, generation: int, ix: LectureIndex, *,
                 touch: bool = True) -> bool:
    """Replaces a ready lecture's rows with ``ix`` in one transaction, holding the lecture's row
    (``FOR UPDATE``) so no state change interleaves. The lecture stays ``ready``; with ``touch`` its
    ``indexed_at`` moves in the same transaction (ask reloads it), else it is left alone for
    :func:`touch_indexed` (after the Qdrant points are written). Returns False, writing nothing,
    when the lecture is gone, no longer ready or was retried since (``generation`` differs)."""
    with pool.connection() as conn, conn.transaction():
        row = conn.execute("SELECT course_id::text AS course_id FROM lectures WHERE id=%s AND status='ready' "
                           "AND generation=%s FOR UPDATE", (lecture_id, generation)).fetchone()
        if row is None:
            return False
        _replace_rows(conn, lecture_id, row["course_id"], ix)
        if touch:
            conn.execute("UPDATE lectures SET indexed_at=clock_timestamp() WHERE id=%s", (lecture_id,))
        return True


def touch_indexed(pool: ConnectionPool, lecture_id: str) -> None:
    """Sets a ready lecture's ``indexed_at`` to now, so every ask process reloads it at its next sync."""
    with pool.connection() as conn:
        conn.execute("UPDATE lectures SET indexed_at=clock_timestamp() WHERE id=%s AND status='ready'", (lecture_id,))


def mark_ready(pool: ConnectionPool, lecture_id: str) -> None:
    """Marks the lecture indexed (``indexed_at`` now: ask reloads it at its next sync) and ready."""
    with pool.connection() as conn:
        conn.execute("UPDATE lectures SET indexed_at=clock_timestamp(), status='ready', stage='ready', "
                     "progress=1, error=NULL, updated_at=now() WHERE id=%s", (lecture_id,))


def point_rows(pool: ConnectionPool, lecture_id: str) -> tuple[dict | None, list[dict], list[dict]]:
    """What the lecture's search points are made of: its row (``course_id``, ``number``; None when
    the lecture is gone), its segments (``id``, ``idx``, times, ``text``, ``embedding``) and its
    sub-chunks (``idx``, ``segment_idx``, times, ``text``, ``embedding``), each in order."""
    with pool.connection() as conn:
        lecture = conn.execute("SELECT course_id::text AS course_id, number FROM lectures WHERE id=%s",
                               (lecture_id,)).fetchone()
        segs = conn.execute("SELECT id::text AS id, idx, start_s, end_s, text, embedding FROM segments "
                            "WHERE lecture_id=%s ORDER BY idx", (lecture_id,)).fetchall()
        subs = conn.execute("SELECT idx, segment_idx, start_s, end_s, text, embedding FROM subchunks "
                            "WHERE lecture_id=%s ORDER BY idx", (lecture_id,)).fetchall()
    return lecture, segs, subs


def lecture_exists(pool: ConnectionPool, lecture_id: str) -> bool:
    """True while the lecture's row is there (a deletion removes it before its points)."""
    with pool.connection() as conn:
        return conn.execute("SELECT 1 FROM lectures WHERE id=%s", (lecture_id,)).fetchone() is not None


def ready_lectures(pool: ConnectionPool, course_id: str | None = None) -> list[str]:
    """Ids of the indexed, ready lectures (of ``course_id``, or of every course), oldest first."""
    with pool.connection() as conn:
        rows = conn.execute("SELECT id::text AS id FROM lectures WHERE status='ready' AND indexed_at IS NOT NULL "
                            "AND (%s::uuid IS NULL OR course_id=%s::uuid) ORDER BY created_at, id",
                            (course_id, course_id)).fetchall()
    return [r["id"] for r in rows]
