"""The answer path as one use case: :func:`answer_question` over injected ports
(:class:`services.ask.ports.AskPorts`: the store, the search index, the writers, the embedder,
the clock). It only sequences the steps, each its own module:

1. the conversation: whose it is, its history, the follow-up rewritten to stand alone
   (:func:`services.ask.followup.resolve`);
2. spelling towards the course's words (:mod:`services.ask.spelling`);
3. the reply that needs no retrieval: a pointer to practice questions ("quiz me on hashing",
   :mod:`services.ask.examprep.pointer`), the honest reply to a request the lectures can't serve
   (:mod:`services.ask.requests_policy`), "no lectures yet", an answer from the course outline
   (:mod:`services.ask.outline`);
4. retrieve inside the course (:mod:`services.ask.retrieve`), the relevance gate
   (:mod:`services.ask.gate`), the cited answer written and validated (:mod:`services.ask.writers.fallback`);
   a question about the player's moment (:mod:`services.ask.moment`: it points at the screen, or "about
   this moment" is on) is written from the moment's window first, with no gate (the moment is its topic);
   a question naming its own topic uses the moment only to break ties between passages;
5. assessment mode: no sentence names an option of a pasted graded item;
6. the exchange recorded once, then :class:`Done`.

Events (:mod:`services.ask.domain`): a :class:`SentenceEvent` per sentence as it is released, then one :class:`Done`. A declined
answer is one uncited sentence (the decline text, the policy reply...). Times: ``*_ms`` milliseconds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterator

from lecturecopilot import telemetry
from lecturecopilot.labels import citation_label
from lecturecopilot.settings import Settings

from . import bounded, examprep, followup, gate, moment, outline, requests_policy, rerank, retrieve, spelling
from .domain import DECLINE_TEXT, MAX_QUESTION_CHARS, AnswerEvent, AnswerSentence, Done, SentenceEvent, Source
from .examprep import pointer as quiz_pointer
from .locate import locator
from .ports import AnswerStore, AskPorts, Embedder, RecordedAnswer, SearchIndex
from .writers import fallback

log = logging.getLogger("services.ask")
_TRACER = telemetry.tracer("lecture-copilot.ask")

NO_LECTURES_TEXT = ("This course has no lectures ready yet, so there is nothing to answer from; ask again once its "
                    "lectures have been processed.")
LECTURE_NOT_READY_TEXT = ("This lecture is not ready to answer from: it is still being processed, or its processing "
                          "failed. Ask the whole course, or a lecture that is ready.")


class AskError(Exception):
    """A request the answer path refuses; the message is for the person asking."""


class NotFound(AskError):
    """The course, or the lecture inside it, does not exist."""


class InvalidQuestion(AskError):
    """The question is empty or too long."""


def uuid_or_none(value: str | None) -> str | None:
    """``value`` as a canonical UUID string, or None when it is empty or not a UUID."""
    if not value:
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


def check_request(store: AnswerStore, course_id: str, lecture_id: str, text: str) -> tuple[str, str | None, str]:
    """``(course_id, lecture_id or None, text with its whitespace collapsed)`` for a question or
    a search. Raises NotFound for an unknown course or a lecture not in it; InvalidQuestion for
    an empty text or one over ``MAX_QUESTION_CHARS`` characters."""
    course = uuid_or_none(course_id)
    if course is None or not store.course_exists(course):
        raise NotFound("Unknown course.")
    lecture = None
    if lecture_id:
        lecture = uuid_or_none(lecture_id)
        if lecture is None or not store.lecture_in_course(lecture, course):
            raise NotFound("Unknown lecture in this course.")
    text = " ".join((text or "").split())
    if not text:
        raise InvalidQuestion("The question is empty.")
    if len(text) > MAX_QUESTION_CHARS:
        raise InvalidQuestion(f"The question is too long (over {MAX_QUESTION_CHARS} characters).")
    return course, lecture, text


MAX_MOMENT_S = 86400.0  # no lecture is longer than a day (ingest takes videos of at most 2 h)


def check_moment(store: AnswerStore, course_id: str, lecture_id: str | None, at_lecture: str, t_s: float,
                 focus: bool = False) -> moment.Moment:
    """The player's position of a question as a :class:`moment.Moment`. Raises NotFound for a lecture
    not in ``course_id`` (a checked course id); InvalidQuestion for a ``t_s`` that is not a finite
    number from 0 to ``MAX_MOMENT_S`` seconds, or a moment of another lecture than the one the
    question is scoped to (``lecture_id``)."""
    lecture = uuid_or_none(at_lecture)
    if lecture is None or not store.lecture_in_course(lecture, course_id):
        raise NotFound("Unknown lecture in this course.")
    if not (math.isfinite(t_s) and 0.0 <= t_s <= MAX_MOMENT_S):
        raise InvalidQuestion(f"The moment must be a number of seconds from 0 to {MAX_MOMENT_S:g}.")
    if lecture_id and lecture != lecture_id:
        raise InvalidQuestion("The moment must be in the lecture the question is asked about.")
    return moment.Moment(lecture, t_s + 0.0, focus)


@dataclass(frozen=True)
class AnswerRequest:
    """A checked question (:func:`check_request`): ``message`` as typed (whitespace collapsed);
    ``conversation_id`` to continue (None or unknown: a new one); ``asker`` who asks (None:
    anonymous); ``staff`` whether the asker teaches the course; ``at`` the player's position when it was
    asked (:func:`check_moment`; None: none)."""

    course_id: str
    lecture_id: str | None
    message: str
    conversation_id: str | None = None
    asker: str | None = None
    staff: bool = False
    at: moment.Moment | None = None


@dataclass(frozen=True)
class AnswerConfig:
    """The relevance gate's operating point (see :mod:`services.ask.gate`) and the bounds on the cloud
    writers (:mod:`services.ask.bounded`): ``writer_deadline_s`` seconds for one answer's writing, all
    writers together; ``writer_max_chars`` characters read from one stream. The defaults are
    :class:`lecturecopilot.settings.Settings`' (their one home)."""

    gate_threshold: float = gate.THRESHOLD
    gate_coverage_weight: float = gate.COVERAGE_WEIGHT
    writer_deadline_s: float = Settings.model_fields["writer_deadline_s"].default
    writer_max_chars: int = Settings.model_fields["writer_max_chars"].default


@dataclass
class _Answer:
    """What one answer has released so far, and how it came about."""

    t0: float
    graded: bool
    out: list[AnswerSentence] = field(default_factory=list)
    hidden: int = 0
    first_ms: float = 0.0
    retrieve_ms: float = 0.0
    reason: str = ""
    passages: list[retrieve.Passage] = field(default_factory=list)
    outcome: fallback.Outcome = field(default_factory=fallback.Outcome)
    still_wanted: Callable[[], bool] = lambda: True


def search_query(index: SearchIndex, course_id: str, question: str) -> str:
    """``question`` as the search endpoint searches it, by the two steps ask takes before it retrieves
    (:func:`answer_question` corrects misspellings towards the course's words, :func:`spelling.correct`,
    and keeps that question for the outline and the gate; :func:`_retrieved` then drops the request
    framing, :func:`gate.request_topic`: "Explain chaining." → "chaining."). Syncs the course."""
    index.sync_course(course_id)
    return gate.request_topic(corrected(index, course_id, question))


def corrected(index: SearchIndex, course_id: str, question: str) -> str:
    """``question`` with its misspellings and split compounds written as the course writes them
    (:func:`spelling.correct` over the course's vocabulary and compounds)."""
    return spelling.correct(question, index.course_vocabulary(course_id), index.course_compounds(course_id))


def search_passages(index: SearchIndex, embed: Embedder, course_id: str,
                    lecture_id: str | None, query: str, k: int) -> list[retrieve.Passage]:
    """The search endpoint's use case: the ``k`` best passages of the course (or lecture) for
    ``query``, best first, searched as ask searches (:func:`search_query`)."""
    q = search_query(index, course_id, query)
    return retrieve.retrieve(index, course_id, lecture_id, embed([q])[0], q, k=k)


def answer_question(request: AnswerRequest, ports: AskPorts, config: AnswerConfig = AnswerConfig(),
                    still_wanted: Callable[[], bool] = lambda: True) -> Iterator[AnswerEvent]:
    """Answers ``request`` (see module docstring), yielding its events. ``still_wanted()`` False
    (the client went away) stops the work: nothing more is written, shown or recorded."""
    t0 = ports.clock()
    conversation_id = _conversation(request, ports.store, ports.new_id)
    question, said, leans = followup.resolve(ports.store, ports.writers, conversation_id, request.course_id,
                                             request.message)
    ports.index.sync_course(request.course_id)
    standalone = question  # recorded as asked (a follow-up: as rewritten), not as spelling corrected it
    question = corrected(ports.index, request.course_id, question)
    graded = ports.store.assessment_mode(request.course_id) and examprep.looks_like_graded_item(request.message)
    ans = _Answer(t0, graded, still_wanted=still_wanted)
    about = request.at is not None and (request.at.focus or moment.screen_reference(request.message) or leans)
    with contextlib.closing(_reply(request, question, said if not about else None, about, ports, config, ans)) as reply:
        for sentence in reply:
            if not still_wanted():  # the client went away: stop working
                log.info("client went away; stopped writing")
                return
            yield from _emit(ans, sentence, request.message, ports.clock)
    if not still_wanted():  # the client went away (while the writers were stopped for it): nothing to finish
        log.info("client went away; answer not recorded")
        return
    declined = not ans.out or (not ans.out[0].cites and ans.outcome.writer != "outline")
    if not ans.out and ans.hidden:
        ans.reason = "assessment_mode"
        yield from _emit(ans, AnswerSentence(examprep.ASSESSMENT_REPLY, []), request.message, ports.clock)
    if not ans.out:
        ans.reason = "not_covered"
        yield from _emit(ans, AnswerSentence(DECLINE_TEXT, []), request.message, ports.clock)
    yield _finish(request, ports, ans, conversation_id, standalone, declined)


def _conversation(request: AnswerRequest, store: AnswerStore, new_id: Callable[[], str]) -> str:
    """The conversation to answer in: the one named when it is this asker's in this course; else (as
    when none is named) a new one, whose id this service makes: a client cannot pick a new
    conversation's id, so it cannot take one it guessed before its owner does."""
    named = uuid_or_none(request.conversation_id)
    if named and store.continues(named, request.course_id, request.asker):
        return named
    return new_id()


def _emit(ans: _Answer, sentence: AnswerSentence, message: str, clock: Callable[[], float]
          ) -> Iterator[SentenceEvent]:
    """Releases ``sentence`` (none in assessment mode when it names an option of the pasted item)."""
    if ans.graded and sentence.cites and not examprep.strip_answer_reveals([sentence.text], message):
        ans.hidden += 1  # assessment mode: never name an option of a pasted graded item
        return
    ans.out.append(sentence)
    if not ans.first_ms:
        ans.first_ms = (clock() - ans.t0) * 1000
    yield SentenceEvent(sentence, (" " if len(ans.out) > 1 else "") + sentence.text)


def _reply(request: AnswerRequest, question: str, said, about: bool, ports: AskPorts, config: AnswerConfig,
           ans: _Answer) -> Iterator[AnswerSentence]:
    """The reply's sentences: exam-prep pointer, policy reply, "no lectures", the answer about the
    moment (``about``: the question is about ``request.at``), outline answer, or the retrieved, gated
    and written answer (nothing when not covered)."""
    course_id, lecture_id = request.course_id, request.lecture_id
    locate = locator(ports.index, ports.embed, course_id, lecture_id, config.gate_threshold,
                     config.gate_coverage_weight)
    topic = examprep.quiz_intent(request.message)
    pointer = quiz_pointer.pointer(ports, course_id, lecture_id, topic, locate) if topic is not None else None
    if pointer is not None:
        ans.outcome = fallback.Outcome("exam_prep")
        yield pointer
    elif requests_policy.unsupported(request.message):
        ans.outcome, ans.reason = fallback.Outcome("policy"), "unsupported_request"
        yield AnswerSentence(requests_policy.UNSUPPORTED_REPLY, [])
    elif not (lectures := ports.store.lectures(course_id)):
        # nothing to answer from yet: say so, rather than "not covered" (it may well be, soon)
        ans.reason = "no_lectures"
        yield AnswerSentence(NO_LECTURES_TEXT, [])
    elif lecture_id and all(lecture.id != lecture_id for lecture in lectures):
        ans.reason = "lecture_not_ready"  # not "not covered": nothing of it could be searched
        yield AnswerSentence(LECTURE_NOT_READY_TEXT, [])
    elif about and (first := _moment_first(request.at, ports, lectures)):
        yield from _from_moment(request, question, ports, config, ans, {l.id: l.title for l in lectures}, first)
    elif from_outline := outline.answer(question, lectures, locate, lecture_id or ""):
        ans.outcome = fallback.Outcome("outline")
        yield from from_outline
    elif (scope := outline.lecture_scope(question)) and (reply := outline.named_lecture(scope, lectures)):
        ans.outcome = fallback.Outcome("outline")  # a lecture the course lacks, or one named alone
        yield from reply
    else:
        named = next((lecture for lecture in lectures if scope and lecture.number == scope[0]), None)
        if named is not None:  # "How is ATP used in lecture 1?": searched in lecture 1 only
            request, question = dataclasses.replace(request, lecture_id=named.id), scope[1]
        yield from _retrieved(request, question, said, ports, config, ans, {l.id: l.title for l in lectures})


def _retrieved(request: AnswerRequest, question: str, said, ports: AskPorts, config: AnswerConfig, ans: _Answer,
               titles: dict[str, str]) -> Iterator[AnswerSentence]:
    """Retrieve inside the course, judge the evidence, and when it clears the gate, write."""
    course_id = request.course_id
    with _TRACER.start_as_current_span("retrieve", attributes={"lc.course_id": course_id}) as span:
        topic_q = gate.request_topic(question)  # "explain chaining" is searched as "chaining"
        qvec = ports.embed([topic_q])[0]
        ans.passages = rerank.reranked(ports.reranker, question, lambda k: retrieve.retrieve(  # before the gate: see rerank
            ports.index, course_id, request.lecture_id, qvec, topic_q, k=k))
        if request.at is not None:  # a question naming its own topic: the moment only breaks ties
            ans.passages = moment.tie_break(ans.passages, request.at)
        ans.retrieve_ms = (ports.clock() - ans.t0) * 1000
        ev = gate.evidence(ports.index, course_id, ans.passages, question, qvec, config.gate_coverage_weight)
        covered = gate.covered(ev, config.gate_threshold)
        span.set_attribute("lc.passages", len(ans.passages))
        span.set_attribute("lc.covered", covered)
    if not covered:
        return
    yield from _write(ports, config, ans, fallback.Composition(question, qvec, ans.passages, titles, said=said))


def _moment_first(at: moment.Moment, ports: AskPorts, lectures) -> tuple[moment.Window, list[retrieve.Passage]] | None:
    """The window of the moment ``at`` and its passages (:func:`moment.moment_passages`), or None when
    its lecture is not ready or nothing is said or shown there (the question is then answered as any)."""
    if all(lecture.id != at.lecture_id for lecture in lectures):
        return None
    win = moment.window(ports.index, at)
    first = moment.moment_passages(ports.index, at, win)
    return (win, first) if first else None


def _from_moment(request: AnswerRequest, question: str, ports: AskPorts, config: AnswerConfig, ans: _Answer,
                 titles: dict[str, str], first: tuple[moment.Window, list[retrieve.Passage]]) -> Iterator[AnswerSentence]:
    """A question about the moment: its window's passages first, then the rest of the course searched
    with what the question names besides the moment ("what did he just say about X?": X) and what is
    shown and said there; no gate (the moment is the topic); the extractive writer quotes the window."""
    win, at_moment = first
    with _TRACER.start_as_current_span("retrieve", attributes={"lc.course_id": request.course_id}) as span:
        focus = moment.focus_of(question)
        text = " ".join(x for x in (focus, moment.context_text(ports.index, request.at, win)) if x) or question
        qvec = ports.embed([text])[0]
        rest = retrieve.retrieve(ports.index, request.course_id, request.lecture_id, qvec, text, k=6)
        ans.passages = moment.first_the_moment(at_moment, rest, k=6)
        ans.retrieve_ms = (ports.clock() - ans.t0) * 1000
        span.set_attribute("lc.passages", len(ans.passages))
        span.set_attribute("lc.moment", True)
    number = at_moment[0].hit.lecture_number
    asked = (f"{question} (asked at {citation_label(number, request.at.t_s)}, about what is shown and said then: "
             f"passage S1)")
    yield from _write(ports, config, ans, fallback.Composition(asked, qvec, ans.passages, titles,
                                                               quoted=len(at_moment)))


def _write(ports: AskPorts, config: AnswerConfig, ans: _Answer, inputs: fallback.Composition
           ) -> Iterator[AnswerSentence]:
    """The answer written from ``inputs`` within the writers' bounds; ``ans.outcome`` and ``reason`` set."""
    # a span ended by hand: the generator yields inside it, so it is never "current"
    write_span = _TRACER.start_span("write")
    budget = bounded.Budget.starting_now(config.writer_deadline_s, config.writer_max_chars, ports.clock,
                                         still_wanted=ans.still_wanted, slots=ports.writer_slots)
    try:
        ans.outcome = yield from fallback.compose(ports.index, ports.writers, inputs, budget)
        ans.reason = ans.outcome.limit
    finally:
        write_span.set_attribute("lc.writer", ans.outcome.writer or "")
        write_span.end()


def _finish(request: AnswerRequest, ports: AskPorts, ans: _Answer, conversation_id: str, question: str,
            declined: bool) -> Done:
    """Records the exchange (once) and returns its :class:`Done`."""
    sources = [] if declined else [Source(p.hit.lecture_id, p.hit.lecture_number, p.hit.start_s, p.hit.end_s)
                                   for p in ans.passages]
    answer_text = " ".join(s.text for s in ans.out)
    answer_id = ports.new_id()
    total_ms = (ports.clock() - ans.t0) * 1000
    ports.store.record(RecordedAnswer(
        answer_id, conversation_id, request.course_id, request.lecture_id, request.message, question, answer_text,
        declined, ans.reason or None,
        [{"text": s.text, "citations": [{"lecture_id": c.lecture_id, "t_s": c.t_s} for c in s.cites]}
         for s in ans.out],
        [{"lecture_id": s.lecture_id, "start_s": s.start_s, "end_s": s.end_s} for s in sources],
        ans.outcome.writer, ans.retrieve_ms, total_ms, request.asker, request.staff))
    return Done(answer_id, conversation_id, declined, answer_text, list(ans.out), sources, ans.retrieve_ms, total_ms,
                ans.outcome.writer, ans.reason, question if question != request.message else "", ans.first_ms)
