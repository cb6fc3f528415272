"""Captions out: ``GET /api/lectures/{id}/captions.vtt`` and ``.srt`` (``lecturecopilot.caption_export``
builds the files from the stored sentences and words).

Who may read them is decided as for the transcript (``lecture_row``: 404 for a lecture whose course
this request may not see, e.g. a private course to a non-member); a lecture that is not ``ready``
is a 409 ``not_ready``.
"""

from __future__ import annotations

from typing import Callable

from flask import Blueprint, Response
from psycopg_pool import ConnectionPool

from lecturecopilot import caption_export
from lecturecopilot.captions import Word

from .. import store

CONTENT_TYPES = {"vtt": "text/vtt; charset=utf-8", "srt": "application/x-subrip; charset=utf-8"}


def blueprint(pool: ConnectionPool, lecture_row: Callable[[str], dict], api_error: type[Exception]) -> Blueprint:
    """The captions routes. ``lecture_row(id)``: the lecture's row if this request may see it, else
    it raises (404); ``api_error(status, code, message)``: the exception answered as the JSON error."""
    bp = Blueprint("captions", __name__)

    def captions(lecture_id: str, ext: str) -> Response:
        r = lecture_row(lecture_id)
        if r["status"] != "ready":
            raise api_error(409, "not_ready", f"The lecture's captions are made once it is ready (it is {r['status']}).")
        sentences, words = store.caption_rows(pool, r["id"])
        cues = caption_export.build_cues(
            [caption_export.Line(s["start_s"], s["end_s"], s["text"], s["kind"]) for s in sentences],
            [Word(w["start_s"], w["end_s"], w["word"]) for w in words])
        body = caption_export.to_vtt(cues) if ext == "vtt" else caption_export.to_srt(cues)
        name = caption_export.download_name(r["number"], r["title"], ext)
        return Response(body, content_type=CONTENT_TYPES[ext],
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @bp.get("/api/lectures/<lecture_id>/captions.vtt")
    def vtt(lecture_id: str) -> Response:
        """The lecture's captions as WebVTT (``text/vtt``)."""
        return captions(lecture_id, "vtt")

    @bp.get("/api/lectures/<lecture_id>/captions.srt")
    def srt(lecture_id: str) -> Response:
        """The lecture's captions as SubRip (``application/x-subrip``)."""
        return captions(lecture_id, "srt")

    return bp
