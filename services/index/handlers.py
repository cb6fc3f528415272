"""Index-service handler: transcript words → sentences and segments, embedded, in Postgres (and,
with ``QDRANT_URL``, as points in the Qdrant server)."""

from __future__ import annotations

import logging

from lecturecopilot import bus, models
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.slidetext import slide_sentence, slide_title
from lecturecopilot.worker import PermanentError, StageContext

from . import core, points, store
from .chapters import make_chapters
from .store import LectureIndex, segment_id

__all__ = ["build_index", "index_lecture", "segment_id"]
log = logging.getLogger(__name__)


def _embed_and_chapter(model: str, segments: list[core.Segment], progress, sentence_vecs=None,
                       slide_titles=()) -> LectureIndex:
    """Embeds segments, sentences (unless ``sentence_vecs`` holds them, in the segments' order),
    sub-chunks and chapter bullets with ``model`` and cuts chapters (titled by ``slide_titles``,
    ``(start_s, title)``, where slides are shown)."""
    seg_vecs = models.embed(model, [s.text for s in segments])
    progress(0.4)
    flat = [(si, s) for si, seg in enumerate(segments) for s in seg.sentences]
    sent_vecs = models.embed(model, [s.text for _, s in flat]) if sentence_vecs is None else sentence_vecs
    subchunks = core.make_subchunks(segments)
    sub_vecs = models.embed(model, [c.text for c in subchunks])
    offsets, pos = [], 0
    for seg in segments:
        offsets.append((pos, pos + len(seg.sentences)))
        pos += len(seg.sentences)
    chapters = make_chapters(segments, seg_vecs, [sent_vecs[a:b] for a, b in offsets], slide_titles=slide_titles)
    bullet_vecs = [models.embed(model, c.bullets).tolist() for c in chapters]
    return LectureIndex(segments, seg_vecs, flat, sent_vecs, subchunks, sub_vecs, chapters, bullet_vecs)


def build_index(pool, model: str, lecture_id: str, progress=lambda f: None) -> LectureIndex:
    """The lecture's index computed from its stored transcript and slides: sentences (slide text
    joined at the second each slide appears), passages cut where the topic shifts, their
    embeddings (``model``) and chapters. ``progress(f)`` gets fractions 0.1 → 0.9. Nothing is written.

    Raises :class:`PermanentError` when the lecture has no transcript."""
    words, slides = store.transcript(pool, lecture_id)
    if not words:
        raise PermanentError("The lecture has no transcript to index.")
    sentences = core.merge_slides(core.split_sentences(words),
                                  [(t, slide_sentence(text.splitlines())) for t, text in slides])
    sent_vecs = models.embed(model, [s.text for s in sentences])
    segments = core.make_segments(sentences, vecs=sent_vecs)  # cut where the topic shifts
    progress(0.1)
    in_order = {id(s): k for k, s in enumerate(sentences)}
    flat = [s for seg in segments for s in seg.sentences]
    reuse = sent_vecs[[in_order[id(s)] for s in flat]] if all(id(s) in in_order for s in flat) else None
    titles = [(float(t), slide_title(text.splitlines())) for t, text in sorted(slides, key=lambda x: x[0])]
    ix = _embed_and_chapter(model, segments, progress, reuse, titles)
    progress(0.9)
    return ix


def index_lecture(event: ev.LectureSlidesRead, ctx: StageContext):
    """``lecture.slides_read`` → segments, sub-chunks, sentences (embedded) and chapters → ``lecture.indexed``.

    Slide text joins the spoken sentences at the second each slide appears, so it is searched,
    quoted and cited like speech (:func:`build_index`). With ``QDRANT_URL`` the lecture's points are
    written to the Qdrant server before the lecture is marked ready.

    Raises :class:`PermanentError` when the lecture has no transcript; qdrant-client's errors
    (retried by redelivery) when the Qdrant server refuses the points.
    """
    ix = build_index(ctx.pool, ctx.settings.embed_model, ctx.lecture_id, ctx.progress)
    store.save_index(ctx.pool, ctx.lecture_id, event.course_id, ix)
    writer = points.writer_for(ctx.settings)
    if writer is not None:
        points.write_points(ctx.pool, writer, ctx.lecture_id)
    store.mark_ready(ctx.pool, ctx.lecture_id)
    log.info("indexed %s: %d segments, %d sentences, %d chapters", ctx.lecture_id, len(ix.segments), len(ix.flat),
             len(ix.chapters))
    return bus.INDEXED, ev.LectureIndexed(lecture_id=event.lecture_id, course_id=event.course_id,
                                          segment_count=len(ix.segments))
