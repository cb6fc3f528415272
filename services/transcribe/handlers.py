"""Transcribe-service handlers: plain functions of (event, context), no NATS in sight."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from lecturecopilot import bus, media
from lecturecopilot.captions import Word, parse_captions
from lecturecopilot.events.v1 import events_pb2 as ev
from lecturecopilot.mediastores import media_store
from lecturecopilot.slidetext import denoise_slide
from lecturecopilot.storage import MediaStore, UnsafeMediaURI
from lecturecopilot.worker import PermanentError, StageContext

from . import core, store as records
from . import slides as slides_mod
from .respell import respell
from .vocabulary import SlideText, Vocabulary, course_terms

log = logging.getLogger(__name__)


def _store(ctx: StageContext) -> MediaStore:
    return ctx.store or media_store(ctx.settings)


def _words_of(event: ev.LectureUploaded, ctx: StageContext) -> tuple[list[Word], str, int | None]:
    """Words from the event's captions, else from speech recognition on its media, prompted by the
    course's vocabulary and respelled where a slide on screen spells a misheard term
    (:mod:`.respell`); their source; and how many slides were read first (None when none were:
    captions need no vocabulary). URIs are confined to the lecture's folder
    (:meth:`MediaStore.resolve`). Raises :class:`lecturecopilot.media.MediaError`, ``ValueError`` or
    :class:`PermanentError`."""
    store, settings = _store(ctx), ctx.settings
    if event.captions_uri:
        return parse_captions(store.resolve(event.captions_uri, ctx.lecture_id)), "captions", None
    if not event.media_uri:
        raise PermanentError("The lecture has neither a video nor captions.")
    video_path = store.resolve(event.media_uri, ctx.lecture_id)
    info = media.probe(video_path)
    found = _read_and_store_slides(ctx, video_path, info, event.duration_s,
                                   progress=lambda f: ctx.progress(SLIDES_SHARE * f))
    prompt_for = None
    on_screen = [SlideText.from_lines(s.start_s, s.end_s, s.lines) for s in found]
    if settings.asr_vocabulary:
        vocab = course_vocabulary(ctx, event.title, on_screen)
        prompt_for = None if vocab.empty else vocab.prompt
    asr = core.Asr.from_settings(settings, event.language)
    words = core.transcribe_media(
        video_path, asr, info=info, duration_s=info.duration_s,
        progress=lambda f: ctx.progress(SLIDES_SHARE + (1 - SLIDES_SHARE) * f), workdir=video_path.parent,
        prompt_for=prompt_for)
    if info.audio_offset_s > 0.01:  # the audio starts late in the container: shift onto the video's clock
        words = [Word(w.start_s + info.audio_offset_s, w.end_s + info.audio_offset_s, w.word) for w in words]
    if settings.asr_respell and on_screen:
        words = respell(words, on_screen)
    return words, f"asr:{settings.whisper_model}", len(found)


SLIDES_SHARE = 0.15  # of the transcribe stage's progress bar: reading the slides before speech recognition


def course_vocabulary(ctx: StageContext, title: str, slides: list[SlideText]) -> Vocabulary:
    """What the course spells, for prompting speech recognition (:mod:`.vocabulary`): the lecture's
    title, its ``slides``, and the distinctive words of the course's other lectures' slides and
    titles (already read: this service wrote them)."""
    others = records.other_lectures_text(ctx.pool, ctx.lecture_id)
    return Vocabulary(titles=[title] if title else [],
                      slides=slides,
                      course_terms=course_terms([denoise_slide(t) for t in others]))


def transcribe(event: ev.LectureUploaded, ctx: StageContext):
    """``lecture.uploaded`` → (slides, then) words in Postgres → ``lecture.transcribed``.

    Captions, when given, are used instead of speech recognition. Otherwise the slides are read
    first (:func:`read_slides`' work, done here) and speech recognition is prompted, window by
    window, with the course's own vocabulary (``LC_ASR_VOCABULARY``; :mod:`.vocabulary`): the terms a
    recognizer mishears are the ones the slides spell right. Raises :class:`PermanentError` for
    media or captions that cannot be read, or no speech at all.
    """
    t0 = time.time()
    try:
        words, source, slides = _words_of(event, ctx)
    except (media.MediaError, ValueError) as e:  # our sentences (UnsafeMediaURI is a ValueError too)
        raise PermanentError(str(e)) from e
    if not words:
        raise PermanentError("No speech was found in the lecture's audio.")
    records.save_words(ctx.pool, ctx.lecture_id, words)
    duration = words[-1].end_s
    log.info("transcribed %s: %d words via %s in %.1f s", ctx.lecture_id, len(words), source, time.time() - t0)
    return bus.TRANSCRIBED, ev.LectureTranscribed(
        lecture_id=event.lecture_id, course_id=event.course_id, word_count=len(words),
        duration_s=event.duration_s or duration, source=source, slides_read=slides is not None,
        slide_count=slides or 0)


def make_web_copy(event: ev.LectureUploaded, ctx: StageContext):
    """``lecture.uploaded`` → a browser-playable copy of the video (in the background, beside
    transcription; a side consumer that never changes the lecture's stage). Returns None.

    A stream copy when the upload is already H.264/AAC MP4, else a transcode (see
    :func:`lecturecopilot.media.make_web_copy`). The copy is written to a temporary name in the
    lecture's own folder of the store and renamed, so the player is never served half a file;
    until it exists the original is served. A copy that cannot be made is logged and the
    original stays in use. With object storage the copy is uploaded beside the source
    (:meth:`MediaStore.keep`) before the row names it, and its local file goes. A lecture deleted
    while the copy was made gets nothing stored; one deleted while the copy went up (its objects
    deleted before this one arrived) has the copy removed again (:meth:`MediaStore.discard`), and
    ingest's sweep removes what a crash in between leaves (``services/ingest/leftovers.py``).
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
    if not records.lecture_exists(ctx.pool, ctx.lecture_id):  # deleted while the copy was made: nothing written
        dst.unlink(missing_ok=True)
        log.info("no web copy for %s: the lecture was deleted meanwhile", ctx.lecture_id)
        return None
    # with object storage: uploaded beside the source, and the local copy dropped (the player gets a
    # presigned URL of the object; nothing reads web.mp4 locally), so it takes no room in the cache
    uri = store.keep(dst, ctx.lecture_id, move=True)
    # deleted while it went up (after its objects were): what this stage wrote goes too
    if not records.name_web_copy(ctx.pool, ctx.lecture_id, store.column(uri)):
        store.discard(uri, ctx.lecture_id)
        log.info("web copy of %s removed: the lecture was deleted meanwhile", ctx.lecture_id)
    return None


def _read_and_store_slides(ctx: StageContext, path: Path | None, info: media.ProbeResult | None,
                           duration_s: float, progress) -> list[slides_mod.Slide]:
    """Reads the slides of the video at ``path`` (their footers and running headers left out:
    :func:`slides_mod.without_footers`) and replaces the lecture's slides in Postgres with them; a
    video that cannot be decoded logs the reason and yields none."""
    found: list[slides_mod.Slide] = []
    if path is not None and path.exists():
        try:
            info = info or media.probe(path)
            if info.video_codec is not None:
                found = slides_mod.without_footers(slides_mod.detect_slides(
                    path, info=info, progress=progress, duration_s=info.duration_s or duration_s or 0.0))
        except (media.MediaError, RuntimeError) as e:
            log.warning("slides of %s not read: %s", ctx.lecture_id, e)
    records.save_slides(ctx.pool, ctx.lecture_id, [(s.start_s, s.end_s, s.lines) for s in found])
    return found


def read_slides(event: ev.LectureTranscribed, ctx: StageContext):
    """``lecture.transcribed`` → slides (time + OCR'd text) in Postgres → ``lecture.slides_read``.

    Slide changes come from scene detection and each distinct slide is OCR'd once (see
    :mod:`services.transcribe.slides`); a captions-only lecture or one without a readable video
    stream has none. When transcription already read them (before speech recognition:
    ``event.slides_read``) they are passed on as they are. Re-running replaces the lecture's
    slides. A slide reader that cannot decode the video logs the reason and yields no slides rather
    than failing a lecture whose speech is already transcribed.
    """
    if event.slides_read:
        return bus.SLIDES_READ, ev.LectureSlidesRead(lecture_id=event.lecture_id, course_id=event.course_id,
                                                      slide_count=event.slide_count)
    media_path, duration_s = records.media_of(ctx.pool, ctx.lecture_id)
    try:
        path = _store(ctx).resolve(MediaStore.uri_of_column(media_path), ctx.lecture_id) if media_path else None
    except UnsafeMediaURI as e:
        raise PermanentError("The lecture's video is not in the media store; upload it again.") from e
    found = _read_and_store_slides(ctx, path, None, duration_s, ctx.progress)
    return bus.SLIDES_READ, ev.LectureSlidesRead(lecture_id=event.lecture_id, course_id=event.course_id,
                                                  slide_count=len(found))
