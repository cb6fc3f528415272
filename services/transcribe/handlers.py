"""Transcribe-service handlers: plain functions of (event, context), no NATS in sight."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from lecturecopilot import bus, media
from lecturecopilot.captions import Word, parse_captions
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.storage import MediaStore, UnsafeMediaURI
from lecturecopilot.worker import PermanentError, StageContext

from . import core
from . import slides as slides_mod

log = logging.getLogger(__name__)


def _store_words(ctx: StageContext, words: list[Word]) -> None:
    with ctx.pool.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM transcript_words WHERE lecture_id=%s", (ctx.lecture_id,))
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO transcript_words (lecture_id, idx, start_s, end_s, word) VALUES (%s,%s,%s,%s,%s)",
                [(ctx.lecture_id, i, w.start_s, w.end_s, w.word) for i, w in enumerate(words)],
            )
        conn.execute("UPDATE lectures SET transcribed_at=now() WHERE id=%s", (ctx.lecture_id,))


def _store(ctx: StageContext) -> MediaStore:
    return ctx.store or MediaStore.from_settings(ctx.settings)


def _words_of(event: ev.LectureUploaded, ctx: StageContext) -> tuple[list[Word], str]:
    """Words from the event's captions, else from speech recognition on its media; and their
    source. URIs are confined to the lecture's folder (:meth:`MediaStore.resolve`). Raises
    :class:`lecturecopilot.media.MediaError`, ``ValueError`` or :class:`PermanentError`."""
    store, settings = _store(ctx), ctx.settings
    if event.captions_uri:
        return parse_captions(store.resolve(event.captions_uri, ctx.lecture_id)), "captions"
    if not event.media_uri:
        raise PermanentError("The lecture has neither a video nor captions.")
    video_path = store.resolve(event.media_uri, ctx.lecture_id)
    info = media.probe(video_path)
    words = core.transcribe_media(
        video_path, info=info, model_name=settings.whisper_model, language=event.language or None,
        duration_s=info.duration_s, progress=ctx.progress, workdir=video_path.parent,
        compute_type=settings.whisper_compute_type, threads=settings.whisper_threads)
    if info.audio_offset_s > 0.01:  # the audio starts late in the container: shift onto the video's clock
        words = [Word(w.start_s + info.audio_offset_s, w.end_s + info.audio_offset_s, w.word) for w in words]
    return words, f"asr:{settings.whisper_model}"


def transcribe(event: ev.LectureUploaded, ctx: StageContext):
    """``lecture.uploaded`` → words in Postgres → ``lecture.transcribed``.

    Captions, when given, are used instead of speech recognition. Raises
    :class:`PermanentError` for media or captions that cannot be read, or no speech at all.
    """
    t0 = time.time()
    try:
        words, source = _words_of(event, ctx)
    except (media.MediaError, ValueError) as e:  # our sentences (UnsafeMediaURI is a ValueError too)
        raise PermanentError(str(e)) from e
    if not words:
        raise PermanentError("No speech was found in the lecture's audio.")
    _store_words(ctx, words)
    duration = words[-1].end_s
    log.info("transcribed %s: %d words via %s in %.1f s", ctx.lecture_id, len(words), source, time.time() - t0)
    return bus.TRANSCRIBED, ev.LectureTranscribed(
        lecture_id=event.lecture_id, course_id=event.course_id, word_count=len(words),
        duration_s=event.duration_s or duration, source=source)


def make_web_copy(event: ev.LectureUploaded, ctx: StageContext):
    """``lecture.uploaded`` → a browser-playable copy of the video (in the background, beside
    transcription; a side consumer that never changes the lecture's stage). Returns None.

    A stream copy when the upload is already H.264/AAC MP4, else a transcode (see
    :func:`lecturecopilot.media.make_web_copy`). The copy is written to a temporary name in the
    lecture's own folder of the store and renamed, so the player is never served half a file;
    until it exists the original is served. A copy that cannot be made is logged and the
    original stays in use.
    """
    if not event.media_uri:
        return None
    store = _store(ctx)
    try:
        src = store.resolve(event.media_uri, ctx.lecture_id)
    except UnsafeMediaURI as e:
        log.warning("no web copy for %s: %s", ctx.lecture_id, e)
        return None
    if not src.exists():
        return None
    dst, tmp = src.parent / "web.mp4", src.parent / "web.partial.mp4"
    try:
        media.make_web_copy(src, tmp, media.probe(src))
    except media.MediaError as e:
        log.warning("no web copy for %s: %s", ctx.lecture_id, e)
        tmp.unlink(missing_ok=True)
        return None
    tmp.replace(dst)
    with ctx.pool.connection() as conn:
        conn.execute("UPDATE lectures SET web_path=%s WHERE id=%s", (str(dst), ctx.lecture_id))
    return None


def read_slides(event: ev.LectureTranscribed, ctx: StageContext):
    """``lecture.transcribed`` → slides (time + OCR'd text) in Postgres → ``lecture.slides_read``.

    Slide changes come from scene detection and each distinct slide is OCR'd once (see
    :mod:`services.transcribe.slides`); a captions-only lecture or one without a readable video
    stream has none. Re-running replaces the lecture's slides. A slide reader that cannot decode
    the video logs the reason and yields no slides rather than failing a lecture whose speech
    is already transcribed.
    """
    with ctx.pool.connection() as conn:
        row = conn.execute("SELECT media_path, duration_s FROM lectures WHERE id=%s", (ctx.lecture_id,)).fetchone()
    found: list[slides_mod.Slide] = []
    try:
        path = (_store(ctx).resolve(MediaStore.uri(Path(row["media_path"])), ctx.lecture_id)
                if row and row["media_path"] else None)
    except UnsafeMediaURI as e:
        raise PermanentError("The lecture's video is not in the media store; upload it again.") from e
    if path is not None and path.exists():
        try:
            info = media.probe(path)
            if info.video_codec is not None:
                found = slides_mod.detect_slides(path, info=info, progress=ctx.progress,
                                                 duration_s=info.duration_s or row["duration_s"] or 0.0)
        except (media.MediaError, RuntimeError) as e:
            log.warning("slides of %s not read: %s", ctx.lecture_id, e)
    with ctx.pool.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM slides WHERE lecture_id=%s", (ctx.lecture_id,))
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO slides (lecture_id, idx, start_s, end_s, text) VALUES (%s,%s,%s,%s,%s)",
                            [(ctx.lecture_id, i, s.start_s, s.end_s, "\n".join(s.lines))
                             for i, s in enumerate(found)])
        conn.execute("UPDATE lectures SET slides_read_at=now() WHERE id=%s", (ctx.lecture_id,))
    return bus.SLIDES_READ, ev.LectureSlidesRead(lecture_id=event.lecture_id, course_id=event.course_id,
                                                  slide_count=len(found))
