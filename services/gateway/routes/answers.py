"""Search, ask and feedback: the course's passages for a query, an answer (JSON, or ask's
``Ask`` stream relayed as server-sent events) and one rating per person per answer.

Questions and searches are counted against the day's budgets (``LC_ASK_LIMIT_*``,
``LC_SEARCH_LIMIT_*``) once the course, lecture and body are checked; one that ask refuses, cannot
take or does not finish gives its use back, so only served requests use up a budget.
"""

from __future__ import annotations

import json
import logging
import queue
import threading

import grpc
from flask import Blueprint, Response, g, request, stream_with_context

from lecturecopilot import telemetry
from lecturecopilot.ask.v1 import ask_pb2

from .. import events as ev, limits, responses as out, schemas, store
from ..access import a_uuid, course_row, lecture_in, limited, may_manage, person, unlimited, within_course
from ..context import ctx
from ..contract import accepts, returns
from ..errors import ApiError, grpc_error, not_found

log = logging.getLogger("services.gateway")
bp = Blueprint("answers", __name__)

FIRST_EVENT_WAIT_S = 0.5  # how long a streamed ask waits for ask's first event before sending headers
KEEPALIVE_S = 1.0  # SSE comment interval while ask is still working
FEEDBACK_LOOKUP_S = 10  # ask's GetAnswer (one indexed row) before a rating is taken
RETRIED = ("answers.ask_question", "answers.search")  # before ask they only read (a use is rolled back on loss)


@bp.post("/api/courses/<course_id>/search")
@accepts(schemas.SearchQuery)
@returns(out.SearchResults)
def search(course_id: str, body: schemas.SearchQuery):
    """``{"results": [{"lecture_id", "lecture_number", "start_s", "end_s", "text", "score"}]}``,
    best first. Counted against ``LC_SEARCH_LIMIT_VISITOR`` / ``LC_SEARCH_LIMIT_USER`` searches a
    day per person (429 with ``Retry-After`` beyond)."""
    c = course_row(course_id)
    lecture_id = lecture_in(c, body.lecture_id)
    s, use = ctx().settings, None
    if not unlimited():
        budget = s.search_limit_user if g.principal else s.search_limit_visitor
        use = limited([(f"search:{person()}", limits.DAY_S, budget)], "searches today")
    try:
        resp = ctx().ask.Search(ask_pb2.SearchRequest(course_id=str(c["id"]), query=body.query, k=body.k,
                                                      lecture_id=lecture_id),
                                timeout=30, metadata=telemetry.grpc_metadata())
    except grpc.RpcError as e:
        limits.refund(ctx().pool, use)
        raise grpc_error(e) from None
    return {"results": [{"lecture_id": p.lecture_id, "lecture_number": p.lecture_number, "start_s": p.start_s,
                         "end_s": p.end_s, "text": p.text, "score": p.score} for p in resp.results]}


def done_json(d: ask_pb2.Done) -> dict:
    """Ask's ``Done`` as :class:`responses.AskAnswer`."""
    return {
        "answer_id": d.answer_id, "conversation_id": d.conversation_id, "declined": d.declined,
        "answer": d.answer,
        "sentences": [sentence_json(s) for s in d.sentences],
        "sources": [{"lecture_id": s.lecture_id, "lecture_number": s.lecture_number, "start_s": s.start_s,
                     "end_s": s.end_s} for s in d.sources],
        "timings": {"retrieve_ms": round(d.retrieve_ms, 1), "first_sentence_ms": round(d.first_sentence_ms, 1),
                    "total_ms": round(d.total_ms, 1)},
        "writer": d.writer, "reason": d.reason or None,
        "rewritten_question": d.rewritten_question or None,
    }


def sentence_json(s: ask_pb2.Sentence) -> dict:
    """Ask's ``Sentence`` as :class:`responses.Sentence`."""
    return {"text": s.text, "citations": [{"lecture_id": c.lecture_id, "lecture_number": c.lecture_number,
                                           "t_s": c.t_s, "label": c.label} for c in s.citations]}


def _count_question(c: dict) -> limits.Use | None:
    """One use of the day's questions in course ``c`` and across courses (None for admins)."""
    if unlimited():
        return None
    s, who = ctx().settings, person()
    per_course, total = ((s.ask_limit_user, s.ask_limit_user_total) if g.principal else
                         (s.ask_limit_visitor, s.ask_limit_visitor_total))
    return limited([(f"ask:{c['id']}:{who}", limits.DAY_S, per_course), (f"ask-all:{who}", limits.DAY_S, total)],
                   "questions today")


@bp.post("/api/courses/<course_id>/ask")
@accepts(schemas.AskQuestion)
@returns(out.AskAnswer)
@returns(None, 200, media="text/event-stream", events=ev.ASK_EVENTS, description="with Accept: text/event-stream: "
         "`delta` and `sentence` events, then `done` (the AskAnswer) or `error`")
def ask_question(course_id: str, body: schemas.AskQuestion):
    """An answer as JSON, or streamed as SSE with ``Accept: text/event-stream``. Counted against
    the day's questions (per course and across courses, ``LC_ASK_LIMIT_*``); a question ask
    refuses, cannot take or does not finish gives its use back."""
    c = course_row(course_id)
    lecture_id = lecture_in(c, body.lecture_id)
    at = _moment(c, lecture_id, body.at)
    use = _count_question(c)
    req = ask_pb2.AskRequest(course_id=str(c["id"]), question=body.question, lecture_id=lecture_id,
                             conversation_id=body.conversation_id or "",
                             asker=person(), staff=may_manage(c), at=at)  # staff are not counted as students
    # the trace context goes in the metadata by hand: the gRPC client instrumentation would wrap
    # the call in a generator that cannot be cancelled when the client goes away
    call = ctx().ask.Ask(req, timeout=60, metadata=telemetry.grpc_metadata())
    # the client's preference (RFC 9110 §12.5.1: q-values, any case; "*/*" or none is JSON, q=0 refuses the stream)
    if request.accept_mimetypes.best_match(["application/json", "text/event-stream"]) == "text/event-stream":
        return _streamed(call, use)
    pool = ctx().pool
    try:
        for ev in call:
            if ev.HasField("done"):
                return done_json(ev.done)
    except grpc.RpcError as e:
        limits.refund(pool, use)
        raise grpc_error(e) from None
    limits.refund(pool, use)
    raise ApiError(500, "ask_failed", "The answer ended without a result.")


def _moment(c: dict, lecture_id: str, at: schemas.AskMoment | None) -> ask_pb2.Moment | None:
    """The question's ``at`` for ask: its lecture a lecture of course ``c`` (404 "Unknown lecture in this
    course." otherwise, as ``lecture_id``), the lecture asked about when the question names one, and
    ``t_s`` within the lecture (0 .. its duration, when known); 400 ``invalid_at`` otherwise."""
    if at is None:
        return None
    lid = lecture_in(c, at.lecture_id)
    if lecture_id and lid != lecture_id:
        raise ApiError(400, "invalid_at", "'at.lecture_id' must be the lecture the question is asked about "
                       "('lecture_id').", extra={"field": "at.lecture_id"})
    duration = (store.lecture(ctx().pool, lid) or {}).get("duration_s")
    if duration is not None and at.t_s > duration:
        raise ApiError(400, "invalid_at", f"'at.t_s' must be within the lecture (at most {duration:g} s).",
                       extra={"field": "at.t_s"})
    return ask_pb2.Moment(lecture_id=lid, t_s=at.t_s + 0.0, focus=at.focus)


def _streamed(call, use: limits.Use | None) -> Response:
    """Relays ask's stream as SSE (``delta``, ``sentence``, ``done``, or ``error``). The stream is
    read by a thread into a queue, so the relay can send keep-alive comments while ask works: a
    client that has gone away is noticed at the next write (within KEEPALIVE_S) and the call is
    cancelled, which stops the work in ask. A stream that ends without ``done`` gives ``use`` back."""
    events: queue.Queue = queue.Queue()

    def pump() -> None:
        try:
            for ev in call:
                events.put(("event", ev))
            events.put(("end", None))
        except grpc.RpcError as e:
            events.put(("error", e))

    threading.Thread(target=pump, daemon=True, name="ask-stream").start()
    # Fail before streaming starts when the request itself is bad (404/400 as JSON): ask refuses those at once.
    try:
        first = events.get(timeout=FIRST_EVENT_WAIT_S)
    except queue.Empty:
        first = None
    if first is not None and first[0] == "error":
        limits.refund(ctx().pool, use)
        raise grpc_error(first[1]) from None
    return Response(stream_with_context(_relay(call, events, first, use)), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


def _sse(event: str, payload: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(payload)}\n\n"


def _relay(call, events: queue.Queue, item, use: limits.Use | None):
    """The SSE lines of ask's events as ``_streamed``'s thread queues them (``item``: the first)."""
    pool = ctx().pool
    try:
        while True:
            if item is None:
                try:
                    item = events.get(timeout=KEEPALIVE_S)
                except queue.Empty:
                    yield ": keep-alive\n\n"
                    continue
            kind, ev = item
            item = None
            if kind in ("end", "error"):
                limits.refund(pool, use)  # no answer came (a done ends the relay first)
            if kind == "end":
                return
            if kind == "error":
                err = grpc_error(ev)
                yield _sse("error", {"code": err.code, "message": err.message})
                return
            which = ev.WhichOneof("event")
            if which == "delta":
                yield _sse("delta", {"text": ev.delta})
            elif which == "sentence":
                yield _sse("sentence", sentence_json(ev.sentence))
            elif which == "done":
                yield _sse("done", done_json(ev.done))
                return
    except GeneratorExit:  # the client went away: stop the work in ask
        log.info("client went away; cancelling the answer")
        call.cancel()
        raise


@bp.post("/api/answers/<answer_id>/feedback")
@accepts(schemas.Feedback)
@returns(None, 204, media="")
def feedback(answer_id: str, body: schemas.Feedback):
    """Rates an answer → 204. One rating per person (the keyed hash the limits use) per answer:
    a new one replaces the person's earlier rating and comment. ``LC_FEEDBACK_LIMIT`` ratings an
    hour per person (429 beyond), counted once the answer and body are checked. The answer's course
    comes from ask (``GetAnswer``): 503 ``ask_unavailable`` while ask is not reachable."""
    aid = a_uuid(answer_id, "answer")
    pool = ctx().pool
    try:  # ask owns the answers: their course comes from its GetAnswer
        got = ctx().ask.GetAnswer(ask_pb2.AnswerRef(answer_id=aid), timeout=FEEDBACK_LOOKUP_S,
                                  metadata=telemetry.grpc_metadata())
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.NOT_FOUND:
            raise not_found("answer") from None
        raise grpc_error(e) from None
    within_course(got.course_id, "answer")
    rater = person()
    limited([(f"feedback:{rater}", limits.HOUR_S, ctx().settings.feedback_limit)], "ratings this hour")
    store.rate_answer(pool, aid, rater, body.rating, body.comment)
    return Response(status=204)
