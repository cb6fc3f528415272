"""The ask service's entrypoint: gRPC ``AskService`` (``proto/lecturecopilot/ask/v1/ask.proto``).

The servicer only translates proto ↔ domain and streams: ``Ask`` runs the answer path's use case
(:func:`services.ask.answer.answer_question`: retrieve inside the course → gate → write → stream each
sentence (``delta`` then ``sentence`` with its citation) → ``done``, every exchange recorded in
Postgres by :class:`services.ask.store.AskStore`); ``Search``, ``GeneratePractice`` and ``Embed`` call
retrieval, exam prep and the embedding model; ``GetAnswer`` gives a recorded answer's course (the
gateway's check of who may rate it); the practice RPCs (``ListPractice`` ... ``AnswerPractice``) call
:mod:`services.ask.examprep.practice` through the translations of :mod:`services.ask.practice_rpc`.
"""

from __future__ import annotations

import logging
import threading
from concurrent import futures

import grpc
from psycopg_pool import ConnectionPool

from lecturecopilot import db, logsafe, models, telemetry
from lecturecopilot.ask.v1 import ask_pb2, ask_pb2_grpc
from lecturecopilot.health import serve_health
from lecturecopilot.settings import Settings

from . import answer, practice_rpc as prpc, retrieve
from .examprep import practice, store as examprep_store
from .answer import AnswerConfig, AnswerRequest
from .domain import Done, SentenceEvent
from .ports import AskPorts
from .rerank import configured_reranker
from .search_index import EmbeddedSearchIndex, QdrantServerBackend
from .store import AskStore
from .writers.cloud import configured_writers

log = logging.getLogger("services.ask")
MAX_QUESTION_CHARS = answer.MAX_QUESTION_CHARS
MAX_EMBED_TEXTS = 2000
CHEAP_WORKERS = 8  # gRPC threads beyond those writer streams may hold

_ASK_MS = telemetry.meter("lecture-copilot.ask").create_histogram(
    "lc.ask.duration", unit="ms", description="Ask: question received to answer recorded")
_DECLINED = telemetry.meter("lecture-copilot.ask").create_counter(
    "lc.answers.declined", description="Answers declined (not covered, unsupported request)")


def _citations(sentence) -> list:
    return [ask_pb2.Citation(lecture_id=c.lecture_id, lecture_number=c.lecture_number, t_s=c.t_s, label=c.label)
            for c in sentence.cites]


def _sentence(sentence) -> ask_pb2.Sentence:
    return ask_pb2.Sentence(text=sentence.text, citations=_citations(sentence))


def _done(d: Done) -> ask_pb2.AskEvent:
    return ask_pb2.AskEvent(done=ask_pb2.Done(
        answer_id=d.answer_id, conversation_id=d.conversation_id, declined=d.declined, answer=d.answer,
        sentences=[_sentence(s) for s in d.sentences],
        sources=[ask_pb2.Source(lecture_id=s.lecture_id, lecture_number=s.lecture_number, start_s=s.start_s,
                                end_s=s.end_s) for s in d.sources],
        retrieve_ms=d.retrieve_ms, total_ms=d.total_ms, writer=d.writer, reason=d.reason,
        rewritten_question=d.rewritten_question, first_sentence_ms=d.first_sentence_ms))


class AskServicer(ask_pb2_grpc.AskServiceServicer):
    """Implements ``AskService`` (see ask.proto) by translating proto ↔ domain: ``Ask`` streams
    :func:`services.ask.answer.answer_question`; ``index`` is the process's search index replica."""

    def __init__(self, settings: Settings, pool: ConnectionPool, index: EmbeddedSearchIndex):
        self.settings = settings
        self.store = AskStore(pool)
        self.index = index
        self.writers = configured_writers(settings)
        self.ports = AskPorts(store=self.store, index=index, embed=self._embed_many, writers=self.writers,
                              writer_slots=threading.BoundedSemaphore(settings.writer_streams_max),
                              reranker=configured_reranker(settings))
        self.config = AnswerConfig(settings.gate_threshold, settings.gate_coverage_weight, settings.writer_deadline_s,
                                   settings.writer_max_chars)

    def _embed_many(self, texts: list[str]):
        return models.embed(self.settings.embed_model, texts)

    def _check(self, request, context) -> tuple[str, str | None, str]:
        """The request's (course_id, lecture_id, text), or the call aborted with NOT_FOUND / INVALID_ARGUMENT."""
        text = getattr(request, "question", None) or getattr(request, "query", "")
        try:
            return answer.check_request(self.store, request.course_id, request.lecture_id, text)
        except answer.NotFound as e:
            context.abort(grpc.StatusCode.NOT_FOUND, str(e))
        except answer.InvalidQuestion as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))

    def _moment(self, request, course_id: str, lecture_id: str | None, context):
        """The request's ``at`` as a :class:`services.ask.moment.Moment`, or the call aborted with
        NOT_FOUND (a lecture not in the course) / INVALID_ARGUMENT (see :func:`answer.check_moment`)."""
        try:
            return answer.check_moment(self.store, course_id, lecture_id, request.at.lecture_id, request.at.t_s,
                                       request.at.focus)
        except answer.NotFound as e:
            context.abort(grpc.StatusCode.NOT_FOUND, str(e))
        except answer.InvalidQuestion as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))

    # -- RPCs ------------------------------------------------------------------------------
    def Search(self, request, context):  # noqa: N802 - gRPC naming
        course_id, lecture_id, query = self._check(request, context)
        k = max(1, min(int(request.k or 6), 50))
        passages = answer.search_passages(self.index, self._embed_many, course_id, lecture_id, query, k)
        return ask_pb2.SearchResponse(results=[
            ask_pb2.Passage(lecture_id=p.hit.lecture_id, lecture_number=p.hit.lecture_number,
                            start_s=p.hit.start_s, end_s=p.hit.end_s, text=p.hit.text, score=p.score)
            for p in passages])

    def GeneratePractice(self, request, context):  # noqa: N802 - gRPC naming
        """An instructor's (re)generation of a lecture's exam-prep set; see ask.proto for the errors.
        The configured cloud writers write it (one question per chapter, each kept only if the blind
        check passes); the extractive writer when none is configured or none's questions survive."""
        try:
            gen = self.store.generate_practice(request.lecture_id, self._embed_many, self.writers)
        except examprep_store.RegenerationTooSoon as e:
            context.set_trailing_metadata((("retry-after-s", str(e.wait_s)),))
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(e))
        except examprep_store.NoQuestions as e:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(e))
        except examprep_store.NotFound as e:
            context.abort(grpc.StatusCode.NOT_FOUND, str(e))
        except examprep_store.QuizError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        return ask_pb2.GeneratePracticeResponse(method=gen.method, written=gen.written, kept=gen.kept,
                                                seconds=gen.seconds, question_ids=[q["id"] for q in gen.questions])

    def Embed(self, request, context):  # noqa: N802 - gRPC naming
        """Embeddings of ``request.texts`` (at most MAX_EMBED_TEXTS, each cut at MAX_QUESTION_CHARS)."""
        texts = list(request.texts)
        if len(texts) > MAX_EMBED_TEXTS:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"At most {MAX_EMBED_TEXTS} texts per call.")
        vecs = self._embed_many([t[:MAX_QUESTION_CHARS] for t in texts]) if texts else []
        return ask_pb2.EmbedResponse(vectors=[ask_pb2.Vector(values=[float(x) for x in v]) for v in vecs])

    def GetAnswer(self, request, context):  # noqa: N802 - gRPC naming
        """The course of a recorded answer; NOT_FOUND "Unknown answer." when there is none."""
        course_id = self.store.answer_course(request.answer_id)
        if course_id is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "Unknown answer.")
        return ask_pb2.AnswerInfo(answer_id=request.answer_id, course_id=course_id)

    # -- practice questions (the gateway checks who may call) -------------------------------------
    def ListPractice(self, request, context):  # noqa: N802 - gRPC naming
        """A lecture's or a course's questions (a lecture's first set written on its first listing); the
        instructor's fields with ``with_answers``."""
        with prpc.quiz_errors(context):
            found = practice.list_practice(self.store.pool, lecture_id=request.lecture_id or None,
                                           course_id=request.course_id or None, with_answers=request.with_answers,
                                           embed=self._embed_many)
        return prpc.list_pb(found, request.with_answers)

    def GetPracticeQuestion(self, request, context):  # noqa: N802 - gRPC naming
        """One question with its answer and statistics."""
        with prpc.quiz_errors(context):
            return prpc.question_pb(practice.question(self.store.pool, request.question_id, with_answers=True))

    def UpdatePracticeQuestion(self, request, context):  # noqa: N802 - gRPC naming
        """Changes the fields set; the whole question is validated (INVALID_ARGUMENT)."""
        with prpc.quiz_errors(context):
            return prpc.question_pb(practice.edit(self.store.pool, request.question_id, prpc.changes(request)))

    def DeletePracticeQuestion(self, request, context):  # noqa: N802 - gRPC naming
        """Deletes a question."""
        with prpc.quiz_errors(context):
            practice.delete(self.store.pool, request.question_id)
        return ask_pb2.Empty()

    def ReportPracticeQuestion(self, request, context):  # noqa: N802 - gRPC naming
        """Records a student's report (comment optional)."""
        with prpc.quiz_errors(context):
            practice.report(self.store.pool, request.question_id,
                            request.comment if request.HasField("comment") else None)
        return ask_pb2.Empty()

    def AnswerPractice(self, request, context):  # noqa: N802 - gRPC naming
        """Records and grades each answer in order."""
        with prpc.quiz_errors(context):
            got = practice.answer(self.store.pool, [(a.question_id, a.choice, a.checkpoint) for a in request.answers],
                                  person=request.person[:128] or None, record=not request.staff)
        return ask_pb2.AnswerPracticeResponse(results=[prpc.result_pb(r) for r in got])

    def Ask(self, request, context):  # noqa: N802 - gRPC naming
        """Streams ``delta`` and ``sentence`` per released sentence, then ``done`` (see ask.proto)."""
        course_id, lecture_id, message = self._check(request, context)
        at = self._moment(request, course_id, lecture_id, context) if request.HasField("at") else None
        req = AnswerRequest(course_id, lecture_id, message, conversation_id=request.conversation_id or None,
                            asker=request.asker[:128] or None, staff=request.staff, at=at)
        for event in answer.answer_question(req, self.ports, self.config, still_wanted=context.is_active):
            if isinstance(event, SentenceEvent):
                yield ask_pb2.AskEvent(delta=event.delta)
                yield ask_pb2.AskEvent(sentence=_sentence(event.sentence))
            else:
                _ASK_MS.record(event.total_ms, {"writer": event.writer or "none", "declined": event.declined})
                if event.declined:
                    _DECLINED.add(1, {"reason": event.reason or "not_covered"})
                yield _done(event)


def serve(settings: Settings) -> None:
    """Starts the gRPC server on ``ask_host:ask_port`` and blocks until terminated."""
    import signal

    logsafe.install()  # a log it cannot write (a full disk) must not end the service
    if telemetry.setup("ask"):
        from opentelemetry.instrumentation.grpc import GrpcInstrumentorServer

        GrpcInstrumentorServer().instrument()
    pool = db.make_pool(settings, max_size=8)
    models.embed(settings.embed_model, ["warm up"])  # load the model before taking traffic
    server_backend = None
    if settings.qdrant_url:  # a Qdrant server (cluster) holds the points; else the embedded shard
        from qdrant_client import QdrantClient

        server_backend = QdrantServerBackend(QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key),
                                             settings.qdrant_collection, settings.qdrant_replication_factor)
        log.info("search index on the Qdrant server %s (collection %s)", settings.qdrant_url,
                 settings.qdrant_collection)
    index = EmbeddedSearchIndex(settings.data_dir / "qdrant" / f"ask-{settings.ask_port}", pool, server=server_backend,
                                profile=settings.search_profile)
    # CHEAP_WORKERS threads besides the writer streams' (at most writer_streams_max, services.ask.bounded):
    # searches and the other calls never wait behind answers that a slow cloud writer holds
    # no SO_REUSEPORT (gRPC's default): a second ask on a port one already serves fails to start instead
    # of sharing the port's calls with it unseen
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=CHEAP_WORKERS + settings.writer_streams_max),
                         options=[("grpc.so_reuseport", 0)])
    ask_pb2_grpc.add_AskServiceServicer_to_server(AskServicer(settings, pool, index), server)
    server.add_insecure_port(f"{settings.ask_host}:{settings.ask_port}")
    server.start()
    serve_health(settings.health_host, settings.health_port_ask, lambda: True)
    log.info("ask serving on %s:%s", settings.ask_host, settings.ask_port)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    server.stop(grace=5).wait()
    index.close()
    pool.close()
