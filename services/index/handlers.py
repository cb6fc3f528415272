"""Index-service handler: transcript words → sentences and segments, embedded, in Postgres."""

from __future__ import annotations

import json
import logging
import uuid

from lecturecopilot import bus, models
from lecturecopilot.slidetext import slide_sentence
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.worker import PermanentError, StageContext

from . import core

log = logging.getLogger(__name__)


def segment_id(lecture_id: str, idx: int) -> str:
    """Deterministic row id: re-indexing a lecture replaces its rows, never duplicates them."""
    return str(uuid.uuid5(uuid.UUID(lecture_id), f"segment:{idx}"))


def index_lecture(event: ev.LectureSlidesRead, ctx: StageContext):
    """``lecture.slides_read`` → segments, sub-chunks, sentences (embedded) and chapters → ``lecture.indexed``.

    Slide text joins the spoken sentences at the second each slide appears, so it is searched,
    quoted and cited like speech.

    Raises :class:`PermanentError` when the lecture has no transcript.
    """
    with ctx.pool.connection() as conn:
        rows = conn.execute("SELECT start_s, end_s, word FROM transcript_words WHERE lecture_id=%s ORDER BY idx",
                            (ctx.lecture_id,)).fetchall()
        slide_rows = conn.execute("SELECT start_s, text FROM slides WHERE lecture_id=%s ORDER BY idx",
                                  (ctx.lecture_id,)).fetchall()
    words = [core.TimedWord(r["start_s"], r["end_s"], r["word"]) for r in rows]
    if not words:
        raise PermanentError("The lecture has no transcript to index.")
    sentences = core.merge_slides(core.split_sentences(words),
                                  [(r["start_s"], slide_sentence(r["text"].splitlines())) for r in slide_rows])
    segments = core.make_segments(sentences)
    ctx.progress(0.1)
    name = ctx.settings.embed_model
    seg_vecs = models.embed(name, [s.text for s in segments])
    ctx.progress(0.4)
    flat = [(si, s) for si, seg in enumerate(segments) for s in seg.sentences]
    sent_vecs = models.embed(name, [s.text for _, s in flat])
    subchunks = core.make_subchunks(segments)
    sub_vecs = models.embed(name, [c.text for c in subchunks])
    offsets, pos = [], 0
    for seg in segments:
        offsets.append((pos, pos + len(seg.sentences)))
        pos += len(seg.sentences)
    chapters = core.make_chapters(segments, seg_vecs, [sent_vecs[a:b] for a, b in offsets])
    bullet_vecs = [models.embed(name, c.bullets).tolist() for c in chapters]
    ctx.progress(0.9)
    with ctx.pool.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM segments WHERE lecture_id=%s", (ctx.lecture_id,))
        conn.execute("DELETE FROM sentences WHERE lecture_id=%s", (ctx.lecture_id,))
        conn.execute("DELETE FROM subchunks WHERE lecture_id=%s", (ctx.lecture_id,))
        conn.execute("DELETE FROM chapters WHERE lecture_id=%s", (ctx.lecture_id,))
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO segments (id, lecture_id, course_id, idx, start_s, end_s, text, embedding) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
                [(segment_id(ctx.lecture_id, i), ctx.lecture_id, event.course_id, i, s.start_s, s.end_s, s.text,
                  seg_vecs[i].tolist()) for i, s in enumerate(segments)],
            )
            cur.executemany(
                "INSERT INTO sentences (lecture_id, idx, segment_idx, start_s, end_s, text, embedding, kind) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
                [(ctx.lecture_id, j, si, s.start_s, s.end_s, s.text, sent_vecs[j].tolist(), s.kind)
                 for j, (si, s) in enumerate(flat)],
            )
            cur.executemany(
                "INSERT INTO subchunks (lecture_id, idx, segment_idx, start_s, end_s, text, embedding) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s)",
                [(ctx.lecture_id, j, c.segment_idx, c.start_s, c.end_s, c.text, sub_vecs[j].tolist())
                 for j, c in enumerate(subchunks)],
            )
            cur.executemany(
                "INSERT INTO chapters (lecture_id, idx, start_s, end_s, title, bullets, bullet_embeddings) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s)",
                [(ctx.lecture_id, j, c.start_s, c.end_s, c.title, json.dumps(c.bullets), json.dumps(bullet_vecs[j]))
                 for j, c in enumerate(chapters)],
            )
        conn.execute("UPDATE lectures SET indexed_at=clock_timestamp(), status='ready', stage='ready', "
                     "progress=1, error=NULL, updated_at=now() WHERE id=%s", (ctx.lecture_id,))
    log.info("indexed %s: %d segments, %d sentences, %d chapters", ctx.lecture_id, len(segments), len(flat),
             len(chapters))
    return bus.INDEXED, ev.LectureIndexed(lecture_id=event.lecture_id, course_id=event.course_id,
                                          segment_count=len(segments))
