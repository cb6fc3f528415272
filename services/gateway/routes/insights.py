"""Course insights for instructors (owner or admin): ``GET /api/courses/{id}/insights`` (JSON)
and ``.../insights.csv``, over ``?from=&to=`` ISO dates (also ``since``/``until``; default the
last 30 days). What each field holds: :mod:`services.gateway.insights`."""

from __future__ import annotations

import grpc
import numpy as np
from flask import Blueprint, Response, request

from lecturecopilot import telemetry
from lecturecopilot.ask.v1 import ask_pb2

from .. import insights, study_responses as out
from ..access import course_row
from ..context import ctx
from ..contract import query, returns
from ..errors import ApiError, grpc_error
from . import checkpoints

bp = Blueprint("insights", __name__)
_DAY = {"type": "string", "format": "date"}  # ISO 8601: 400 invalid_period otherwise (insights.period)
PERIOD = {"from": ("first day (YYYY-MM-DD), default 29 days before 'to'", _DAY),
          "to": ("last day (YYYY-MM-DD), default today", _DAY),
          "since": ("the same as 'from'", _DAY), "until": ("the same as 'to'", _DAY)}


def embed(texts: list[str]) -> np.ndarray:
    """``texts`` embedded by ask's ``Embed`` call (ask holds the embedder; the gateway loads no
    model), in batches of ``EMBED_BATCH``: an array (len(texts), dim). ApiError as :func:`grpc_error`."""
    vecs: list[list[float]] = []
    for i in range(0, len(texts), insights.EMBED_BATCH):
        try:
            got = ctx().ask.Embed(ask_pb2.EmbedRequest(texts=texts[i:i + insights.EMBED_BATCH]), timeout=60,
                                  metadata=telemetry.grpc_metadata())
        except grpc.RpcError as e:
            raise grpc_error(e) from None
        vecs += [list(v.values) for v in got.vectors]
    return np.asarray(vecs, dtype="float32").reshape(len(texts), -1)


def load(course_id: str) -> dict:
    """The course's insights over the request's period; ApiError 400 ``invalid_period``."""
    c = course_row(course_id, manage=True)
    try:
        start, end = insights.period(request.args.get("from") or request.args.get("since"),
                                     request.args.get("to") or request.args.get("until"))
    except ValueError as e:
        raise ApiError(400, "invalid_period", str(e)) from None
    with ctx().pool.connection() as conn:
        found = insights.compute(conn, str(c["id"]), start, end, embed)
    return {**found, "checkpoints": checkpoints.course_stats(c)}


@bp.get("/api/courses/<course_id>/insights")
@query(**PERIOD)
@returns(out.Insights)
def course_insights(course_id: str):
    """The course's insights as JSON (see :func:`services.gateway.insights.compute`)."""
    return load(course_id)


@bp.get("/api/courses/<course_id>/insights.csv")
@query(**PERIOD)
@returns(None, 200, media="text/csv", description="section,label,count,lecture_number,t_s,detail")
def course_insights_csv(course_id: str):
    """The course's insights as a CSV download (see :func:`services.gateway.insights.to_csv`)."""
    ins = load(course_id)
    return Response(insights.to_csv(ins), mimetype="text/csv", headers={
        "Content-Disposition": f'attachment; filename="insights-{ins["from"]}-{ins["to"]}.csv"'})
