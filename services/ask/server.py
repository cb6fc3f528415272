"""The ask service: gRPC ``AskService`` (``proto/lecturecopilot/ask/v1/ask.proto``).

``Ask`` streams an answer: retrieve inside the course → gate → write (extractive) →
stream each sentence (``delta`` then ``sentence`` with its citation) → ``done``; every
exchange is recorded in Postgres (``answers``).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from concurrent import futures

import grpc
from psycopg_pool import ConnectionPool

from lecturecopilot import models
from lecturecopilot.ask.v1 import ask_pb2, ask_pb2_grpc
from lecturecopilot.labels import citation_label
from lecturecopilot.settings import Settings

from . import gate, retrieve, write
from .search_index import EmbeddedSearchIndex

log = logging.getLogger("services.ask")
MAX_QUESTION_CHARS = 2000


def _uuid_or_none(value: str) -> str | None:
    if not value:
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


class AskServicer(ask_pb2_grpc.AskServiceServicer):
    """Implements ``Ask`` and ``Search``. ``index`` is the process's search index replica."""

    def __init__(self, settings: Settings, pool: ConnectionPool, index: EmbeddedSearchIndex):
        self.settings = settings
        self.pool = pool
        self.index = index

    # -- helpers ---------------------------------------------------------------------------
    def _check(self, request, context) -> tuple[str, str | None, str]:
        course_id = _uuid_or_none(request.course_id)
        if course_id is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "Unknown course.")
        with self.pool.connection() as conn:
            if conn.execute("SELECT 1 FROM courses WHERE id=%s", (course_id,)).fetchone() is None:
                context.abort(grpc.StatusCode.NOT_FOUND, "Unknown course.")
            lecture_id = None
            if request.lecture_id:
                lecture_id = _uuid_or_none(request.lecture_id)
                if lecture_id is None or conn.execute("SELECT 1 FROM lectures WHERE id=%s AND course_id=%s",
                                                      (lecture_id, course_id)).fetchone() is None:
                    context.abort(grpc.StatusCode.NOT_FOUND, "Unknown lecture in this course.")
        text = " ".join((getattr(request, "question", None) or getattr(request, "query", "")).split())
        if not text:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "The question is empty.")
        if len(text) > MAX_QUESTION_CHARS:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"The question is too long (over {MAX_QUESTION_CHARS} characters).")
        return course_id, lecture_id, text

    def _embed(self, text: str):
        return models.embed(self.settings.embed_model, [text])[0]

    # -- RPCs ------------------------------------------------------------------------------
    def Search(self, request, context):  # noqa: N802 - gRPC naming
        course_id, lecture_id, query = self._check(request, context)
        k = max(1, min(int(request.k or 6), 50))
        passages = retrieve.retrieve(self.index, course_id, lecture_id, self._embed(query), query, k=k)
        return ask_pb2.SearchResponse(results=[
            ask_pb2.Passage(lecture_id=p.hit.lecture_id, lecture_number=p.hit.lecture_number,
                            start_s=p.hit.start_s, end_s=p.hit.end_s, text=p.hit.text, score=p.score)
            for p in passages])

    def Ask(self, request, context):  # noqa: N802 - gRPC naming
        t0 = time.perf_counter()
        course_id, lecture_id, question = self._check(request, context)
        conversation_id = _uuid_or_none(request.conversation_id) or str(uuid.uuid4())
        qvec = self._embed(question)
        passages = retrieve.retrieve(self.index, course_id, lecture_id, qvec, question, k=6)
        retrieve_ms = (time.perf_counter() - t0) * 1000
        sentences: list[write.CitedSentence] = []
        ev = gate.evidence(self.index, course_id, passages, question, qvec, self.settings.gate_coverage_weight)
        if gate.covered(ev, self.settings.gate_threshold):
            sentences = write.extractive_answer(self.index, passages, question, qvec)
        declined = not sentences
        out_sentences = []
        if declined:
            yield ask_pb2.AskEvent(delta=write.DECLINE_TEXT)
            out_sentences.append(ask_pb2.Sentence(text=write.DECLINE_TEXT))
            yield ask_pb2.AskEvent(sentence=out_sentences[-1])
        else:
            for i, s in enumerate(sentences):
                if not context.is_active():
                    return
                yield ask_pb2.AskEvent(delta=(" " if i else "") + s.text)
                cit = ask_pb2.Citation(lecture_id=s.lecture_id, lecture_number=s.lecture_number, t_s=s.t_s,
                                       label=citation_label(s.lecture_number, s.t_s))
                out_sentences.append(ask_pb2.Sentence(text=s.text, citations=[cit]))
                yield ask_pb2.AskEvent(sentence=out_sentences[-1])
        sources = [] if declined else [
            ask_pb2.Source(lecture_id=p.hit.lecture_id, lecture_number=p.hit.lecture_number,
                           start_s=p.hit.start_s, end_s=p.hit.end_s) for p in passages]
        answer_text = " ".join(s.text for s in out_sentences)
        answer_id = str(uuid.uuid4())
        total_ms = (time.perf_counter() - t0) * 1000
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO answers (id, conversation_id, course_id, lecture_id, question, answer, declined, "
                "sentences, sources, writer, retrieve_ms, total_ms) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                (answer_id, conversation_id, course_id, lecture_id, question, answer_text, declined,
                 json.dumps([{"text": s.text, "citations": [{"lecture_id": c.lecture_id, "t_s": c.t_s}
                                                            for c in s.citations]} for s in out_sentences]),
                 json.dumps([{"lecture_id": s.lecture_id, "start_s": s.start_s, "end_s": s.end_s} for s in sources]),
                 "extractive", retrieve_ms, total_ms))
        yield ask_pb2.AskEvent(done=ask_pb2.Done(
            answer_id=answer_id, conversation_id=conversation_id, declined=declined, answer=answer_text,
            sentences=out_sentences, sources=sources, retrieve_ms=retrieve_ms, total_ms=total_ms,
            writer="extractive"))


def serve(settings: Settings) -> None:
    """Starts the gRPC server on ``ask_host:ask_port`` and blocks until terminated."""
    import signal
    import threading

    from lecturecopilot import db
    from lecturecopilot.health import serve_health

    pool = db.make_pool(settings, max_size=8)
    models.embed(settings.embed_model, ["warm up"])  # load the model before taking traffic
    index = EmbeddedSearchIndex(settings.data_dir / "qdrant" / f"ask-{settings.ask_port}", pool)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    ask_pb2_grpc.add_AskServiceServicer_to_server(AskServicer(settings, pool, index), server)
    server.add_insecure_port(f"{settings.ask_host}:{settings.ask_port}")
    server.start()
    serve_health("0.0.0.0", settings.health_port_ask, lambda: True)
    log.info("ask serving on %s:%s", settings.ask_host, settings.ask_port)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    server.stop(grace=5).wait()
    index.close()
    pool.close()
