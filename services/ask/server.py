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

from lecturecopilot import db, models, telemetry
from lecturecopilot.ask.v1 import ask_pb2, ask_pb2_grpc
from lecturecopilot.settings import Settings

from . import compose, examprep, examprep_store, followup, gate, outline, refine, requests_policy, retrieve, spelling, write
from .search_index import EmbeddedSearchIndex, QdrantServerBackend
from .writers import configured_writers

log = logging.getLogger("services.ask")
MAX_QUESTION_CHARS = 2000
MAX_EMBED_TEXTS = 2000
NO_LECTURES_TEXT = ("This course has no lectures ready yet, so there is nothing to answer from; ask again once its "
                    "lectures have been processed.")


_TRACER = telemetry.tracer("lecture-copilot.ask")
_ASK_MS = telemetry.meter("lecture-copilot.ask").create_histogram(
    "lc.ask.duration", unit="ms", description="Ask: question received to answer recorded")
_DECLINED = telemetry.meter("lecture-copilot.ask").create_counter(
    "lc.answers.declined", description="Answers declined (not covered, unsupported request)")


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
        self.writers = configured_writers(settings)

    # -- helpers (each reads or writes in one go: run again on a new connection if Postgres cut it) --
    @db.retry_on_disconnect
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

    @db.retry_on_disconnect
    def _someone_elses(self, conversation_id: str, course_id: str, asker: str | None) -> bool:
        """True when the conversation id already belongs to another course or asker."""
        with self.pool.connection() as conn:
            return conn.execute("SELECT 1 FROM answers WHERE conversation_id=%s AND (course_id<>%s OR asker IS "
                                "DISTINCT FROM %s) LIMIT 1", (conversation_id, course_id, asker)).fetchone() is not None

    @db.retry_on_disconnect
    def _assessment_mode(self, course_id: str) -> bool:
        with self.pool.connection() as conn:
            row = conn.execute("SELECT assessment_mode FROM courses WHERE id=%s", (course_id,)).fetchone()
        return bool(row and row["assessment_mode"])

    @db.retry_on_disconnect
    def _record(self, values: tuple) -> None:
        """Stores an answer (``answers`` row; a repeat after a lost connection changes nothing)."""
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO answers (id, conversation_id, course_id, lecture_id, question, rewritten_question, "
                "answer, declined, reason, sentences, sources, writer, retrieve_ms, total_ms, asker, staff) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (id) DO NOTHING", values)

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

    @db.retry_on_disconnect
    def _history(self, conversation_id: str, course_id: str, n: int = 3) -> list[str]:
        """The last ``n`` standalone questions of the conversation (oldest first)."""
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT coalesce(rewritten_question, question) AS q FROM answers WHERE conversation_id=%s "
                "AND course_id=%s ORDER BY created_at DESC LIMIT %s", (conversation_id, course_id, n)).fetchall()
        return [r["q"] for r in reversed(rows)]

    @db.retry_on_disconnect
    def _said(self, conversation_id: str, course_id: str, n: int = 3) -> set[tuple[str, float]]:
        """The moments the conversation's last ``n`` answers cited, as ``{(lecture_id, t_s)}``
        ("What is chaining?" → "why?" → "more simply": the third repeats neither)."""
        with self.pool.connection() as conn:
            rows = conn.execute("SELECT sentences FROM answers WHERE conversation_id=%s AND course_id=%s AND NOT declined "
                                "ORDER BY created_at DESC LIMIT %s", (conversation_id, course_id, n)).fetchall()
        return {(c["lecture_id"], float(c["t_s"])) for r in rows for s in r["sentences"] for c in s["citations"]}

    @db.retry_on_disconnect
    def _lectures(self, course_id: str) -> list[outline.LectureInfo]:
        with self.pool.connection() as conn:
            rows = conn.execute("SELECT id::text AS id, number, title, duration_s FROM lectures "
                                "WHERE course_id=%s AND status='ready' ORDER BY number", (course_id,)).fetchall()
            chaps = conn.execute("SELECT c.lecture_id::text AS l, c.start_s, c.title FROM chapters c "
                                 "JOIN lectures l ON l.id=c.lecture_id WHERE l.course_id=%s ORDER BY c.idx",
                                 (course_id,)).fetchall()
        by_lecture: dict[str, list] = {}
        for c in chaps:
            by_lecture.setdefault(c["l"], []).append((c["start_s"], c["title"]))
        return [outline.LectureInfo(r["id"], r["number"], r["title"], r["duration_s"],
                                    tuple(by_lecture.get(r["id"], ()))) for r in rows]

    def _locate(self, course_id: str, lecture_id: str | None):
        """For outline answers: where the course teaches a topic (lecture_id, t_s), or None."""
        def locate(topic: str):
            vec = self._embed(topic)
            found = retrieve.retrieve(self.index, course_id, lecture_id, vec, topic, k=3)
            ev = gate.evidence(self.index, course_id, found, topic, vec, self.settings.gate_coverage_weight)
            if not found or not gate.covered(ev, self.settings.gate_threshold):
                return None
            h = found[0].hit
            return h.lecture_id, refine.refine_time(self.index, h.lecture_id, h.start_s, h.end_s, topic, h.start_s)
        return locate

    def _quiz_pointer(self, course_id: str, lecture_id: str | None, topic: str) -> write.AnswerSentence | None:
        """"Quiz me on hashing": one sentence pointing to the practice questions of the lecture
        that teaches the topic (the one lecture titled with it, else, behind the relevance gate,
        the lecture with most of the top 6 retrieved passages, rank-weighted), cited at that
        lecture's start; "quiz me on lecture 4" points to lecture 4 (:func:`outline.lecture_ref`);
        None when no lecture covers the topic."""
        lectures = {l.id: l for l in self._lectures(course_id)}
        named = outline.lecture_ref(topic) if topic else None
        by_number = {l.number: l for l in lectures.values()}
        if named is not None and named in by_number:  # "quiz me on lecture 4": that lecture, whatever it holds
            lecture_id, topic = by_number[named].id, ""
        if topic:
            topic = spelling.correct(topic, self.index.course_vocabulary(course_id))
            titled = [l for l in lectures.values() if examprep.contains(l.title, topic)
                      or examprep.contains(topic, l.title)]
            target = titled[0] if len(titled) == 1 and not lecture_id else None
            if target is None and self._locate(course_id, lecture_id)(topic):  # covered: the lecture most retrieved
                vec = self._embed(topic)
                votes: dict[str, float] = {}
                for rank, p in enumerate(retrieve.retrieve(self.index, course_id, lecture_id, vec, topic, k=6)):
                    votes[p.hit.lecture_id] = votes.get(p.hit.lecture_id, 0.0) + 1.0 / (rank + 1)
                target = lectures.get(max(votes, key=votes.get)) if votes else None
        else:
            target = lectures.get(lecture_id) if lecture_id else min(lectures.values(), key=lambda l: l.number,
                                                                     default=None)
        if target is None:
            return None
        n = self._practice_questions(target.id)
        about = f" on {topic}" if topic else ""
        text = (f"Lecture {target.number}, “{target.title}”, has {n} practice question{'s' if n != 1 else ''}{about}: "
                f"open its exam-prep questions to test yourself, each explained with the moment of the lecture it "
                f"comes from." if n else
                f"Lecture {target.number}, “{target.title}”, teaches this, but it has no practice questions yet; "
                f"start from the beginning of the lecture.")
        return write.AnswerSentence(text, [write.Cite(target.id, target.number, 0.0)])

    @db.retry_on_disconnect
    def _practice_questions(self, lecture_id: str) -> int:
        """How many exam-prep questions the lecture has, writing its set (extractive, well under
        a second) when it has none. That set is ``automatic``: it does not use up the instructor's
        5-minute regeneration window."""
        with self.pool.connection() as conn:
            def count() -> int:
                return conn.execute("SELECT count(*) AS n FROM quiz_questions WHERE lecture_id=%s",
                                    (lecture_id,)).fetchone()["n"]

            if n := count():
                return n
            try:
                return examprep_store.generate(conn, lecture_id, self._embed_many, automatic=True).kept
            except examprep_store.QuizError as e:  # none can be written, or another request just wrote it
                log.info("no practice questions for %s: %s", lecture_id, e)
                return count()

    def _embed_many(self, texts: list[str]):
        return models.embed(self.settings.embed_model, texts)

    def GeneratePractice(self, request, context):  # noqa: N802 - gRPC naming
        """An instructor's (re)generation of a lecture's exam-prep set; see ask.proto for the errors.
        The configured cloud writers write it (one question per chapter, each kept only if the blind
        check passes); the extractive writer when none is configured or none's questions survive."""
        try:
            with self.pool.connection() as conn:
                gen = examprep_store.generate(conn, request.lecture_id, self._embed_many, writers=self.writers)
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

    def Ask(self, request, context):  # noqa: N802 - gRPC naming
        t0 = time.perf_counter()
        course_id, lecture_id, message = self._check(request, context)
        conversation_id = _uuid_or_none(request.conversation_id) or str(uuid.uuid4())
        asker = request.asker[:128] or None
        if self._someone_elses(conversation_id, course_id, asker):  # a conversation belongs to one course and one asker: anyone else starts a new one
            conversation_id = str(uuid.uuid4())
        history = self._history(conversation_id, course_id)
        question = followup.rewrite_with_model(message, history, self.writers)
        said = self._said(conversation_id, course_id) if history and followup.continues(message) else None
        self.index.sync_course(course_id)
        question = spelling.correct(question, self.index.course_vocabulary(course_id))
        retrieve_ms = 0.0
        first_ms = 0.0
        passages: list[retrieve.Passage] = []
        reason = ""
        out: list[ask_pb2.Sentence] = []
        outcome = compose.Outcome()

        graded = self._assessment_mode(course_id) and examprep.looks_like_graded_item(message)
        hidden = 0

        def emit(sentence: write.AnswerSentence):
            nonlocal first_ms, hidden
            if graded and sentence.cites and not examprep.strip_answer_reveals([sentence.text], message):
                hidden += 1  # assessment mode: never name an option of a pasted graded item
                return
            cits = [ask_pb2.Citation(lecture_id=c.lecture_id, lecture_number=c.lecture_number, t_s=c.t_s,
                                     label=c.label) for c in sentence.cites]
            msg = ask_pb2.Sentence(text=sentence.text, citations=cits)
            out.append(msg)
            if not first_ms:
                first_ms = (time.perf_counter() - t0) * 1000
            yield ask_pb2.AskEvent(delta=(" " if len(out) > 1 else "") + sentence.text)
            yield ask_pb2.AskEvent(sentence=msg)

        topic = examprep.quiz_intent(message)
        pointer = self._quiz_pointer(course_id, lecture_id, topic) if topic is not None else None
        if pointer is not None:
            outcome.writer = "exam_prep"
            yield from emit(pointer)
        elif requests_policy.unsupported(message):
            outcome.writer, reason = "policy", "unsupported_request"
            yield from emit(write.AnswerSentence(requests_policy.UNSUPPORTED_REPLY, []))
        elif not (lectures := self._lectures(course_id)):
            # nothing to answer from yet: say so, rather than "not covered" (it may well be, soon)
            reason = "no_lectures"
            yield from emit(write.AnswerSentence(NO_LECTURES_TEXT, []))
        else:
            from_outline = outline.answer(question, lectures, self._locate(course_id, lecture_id))
            if from_outline:
                outcome.writer = "outline"
                for s in from_outline:
                    yield from emit(s)
            else:
                with _TRACER.start_as_current_span("retrieve", attributes={"lc.course_id": course_id}) as span:
                    topic_q = gate.request_topic(question)  # "explain chaining" is searched as "chaining"
                    qvec = self._embed(topic_q)
                    passages = retrieve.retrieve(self.index, course_id, lecture_id, qvec, topic_q, k=6)
                    retrieve_ms = (time.perf_counter() - t0) * 1000
                    ev = gate.evidence(self.index, course_id, passages, question, qvec,
                                       self.settings.gate_coverage_weight)
                    covered = gate.covered(ev, self.settings.gate_threshold)
                    span.set_attribute("lc.passages", len(passages))
                    span.set_attribute("lc.covered", covered)
                if covered:
                    titles = {l.id: l.title for l in lectures}
                    # a span ended by hand: the generator yields inside it, so it is never "current"
                    write_span = _TRACER.start_span("write")
                    try:
                        for s in compose.compose(self.index, self.writers, question, qvec, passages, titles, outcome,
                                                 said=said):
                            if not context.is_active():  # the client went away: stop working
                                log.info("client went away; stopped writing")
                                return
                            yield from emit(s)
                    finally:
                        write_span.set_attribute("lc.writer", outcome.writer or "")
                        write_span.end()
        declined = not out or (not out[0].citations and outcome.writer != "outline")
        if not out and hidden:
            reason = "assessment_mode"
            yield from emit(write.AnswerSentence(examprep.ASSESSMENT_REPLY, []))
        if not out:
            reason = "not_covered"
            yield from emit(write.AnswerSentence(write.DECLINE_TEXT, []))
        sources = [] if declined else [
            ask_pb2.Source(lecture_id=p.hit.lecture_id, lecture_number=p.hit.lecture_number,
                           start_s=p.hit.start_s, end_s=p.hit.end_s) for p in passages]
        if not context.is_active():  # the client went away: nothing to finish or record
            log.info("client went away; answer not recorded")
            return
        answer_text = " ".join(s.text for s in out)
        answer_id = str(uuid.uuid4())
        total_ms = (time.perf_counter() - t0) * 1000
        _ASK_MS.record(total_ms, {"writer": outcome.writer or "none", "declined": declined})
        if declined:
            _DECLINED.add(1, {"reason": reason or "not_covered"})
        self._record((answer_id, conversation_id, course_id, lecture_id, message, question, answer_text, declined,
                      reason or None,
                      json.dumps([{"text": s.text, "citations": [{"lecture_id": c.lecture_id, "t_s": c.t_s}
                                                                 for c in s.citations]} for s in out]),
                      json.dumps([{"lecture_id": s.lecture_id, "start_s": s.start_s, "end_s": s.end_s}
                                  for s in sources]),
                      outcome.writer, retrieve_ms, total_ms, asker, request.staff))
        yield ask_pb2.AskEvent(done=ask_pb2.Done(
            answer_id=answer_id, conversation_id=conversation_id, declined=declined, answer=answer_text,
            sentences=out, sources=sources, retrieve_ms=retrieve_ms, total_ms=total_ms, writer=outcome.writer,
            reason=reason, rewritten_question=question if question != message else "", first_sentence_ms=first_ms))


def serve(settings: Settings) -> None:
    """Starts the gRPC server on ``ask_host:ask_port`` and blocks until terminated."""
    import signal
    import threading

    from lecturecopilot import db
    from lecturecopilot.health import serve_health

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
    index = EmbeddedSearchIndex(settings.data_dir / "qdrant" / f"ask-{settings.ask_port}", pool, server=server_backend)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
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
