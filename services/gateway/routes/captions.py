"""Captions out: ``GET /api/lectures/{id}/captions.vtt`` and ``.srt`` (``services.gateway.caption_export``
builds the files from the stored sentences and words).

Who may read them is decided as for the transcript (``lecture_row``: 404 for a lecture whose course
this request may not see, e.g. a private course to a non-member); a lecture that is not ``ready``
is a 409 ``not_ready``.
"""

from __future__ import annotations

import functools

from flask import Blueprint, Response, request

from lecturecopilot.captions import Word

from .. import caption_export, store
from ..access import lecture_row
from ..context import ctx
from ..contract import query, returns
from ..errors import ApiError

bp = Blueprint("captions", __name__)

CONTENT_TYPES = {"vtt": "text/vtt; charset=utf-8", "srt": "application/x-subrip; charset=utf-8"}


@functools.lru_cache(maxsize=32)
def _built(lecture_id: str, ext: str, indexed_at: str, generation: int, slides: bool = True) -> str:
    """The captions file's text (with the slides' cues unless ``slides`` is False), built once per index
    of the lecture (``indexed_at``, ``generation`` are the cache key: a re-index builds it again): a
    2-hour lecture's takes over a second of the gateway's CPU, and anyone may ask for a public one again
    and again."""
    sentences, words = store.caption_rows(ctx().pool, lecture_id)
    cues = caption_export.build_cues(
        [caption_export.Line(s["start_s"], s["end_s"], s["text"], s["kind"]) for s in sentences
         if slides or s["kind"] != "slide"],
        [Word(w["start_s"], w["end_s"], w["word"]) for w in words])
    return caption_export.to_vtt(cues) if ext == "vtt" else caption_export.to_srt(cues)


SLIDES = {"slides": ("1 (the default): each slide's text as a `[Slide]` cue; 0: speech only (the web player's "
                     "subtitles: the slide is on screen)", {"type": "string", "enum": ["0", "1"]})}


def _captions(lecture_id: str, ext: str) -> Response:
    """The captions file of a ready lecture as an attachment named after it; 404 as ``lecture_row``,
    409 ``not_ready`` before the lecture is ready, 400 ``invalid_slides`` for a ``slides`` other than 0 or 1."""
    slides = request.args.get("slides", "1")
    if slides not in ("0", "1"):
        raise ApiError(400, "invalid_slides", "'slides' is 1 (slides as cues, the default) or 0 (speech only).")
    r = lecture_row(lecture_id)
    if r["status"] != "ready":
        raise ApiError(409, "not_ready", f"The lecture's captions are made once it is ready (it is {r['status']}).")
    body = _built(str(r["id"]), ext, str(r["indexed_at"]), r["generation"], slides == "1")
    name = caption_export.download_name(r["number"], r["title"], ext)
    return Response(body, content_type=CONTENT_TYPES[ext],
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


@bp.get("/api/lectures/<lecture_id>/captions.vtt")
@returns(None, 200, media="text/vtt", description="WebVTT: a cue per sentence, slides as `[Slide]` cues at the top")
@query(**SLIDES)
def captions_vtt(lecture_id: str) -> Response:
    """The lecture's captions as WebVTT (``text/vtt``)."""
    return _captions(lecture_id, "vtt")


@bp.get("/api/lectures/<lecture_id>/captions.srt")
@returns(None, 200, media="application/x-subrip", description="SubRip: the same cues as the WebVTT file")
@query(**SLIDES)
def captions_srt(lecture_id: str) -> Response:
    """The lecture's captions as SubRip (``application/x-subrip``)."""
    return _captions(lecture_id, "srt")
