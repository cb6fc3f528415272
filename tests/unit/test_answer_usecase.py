"""The answer path's use case (services/ask/answer.py) over in-memory fakes of its ports: a store
that keeps conversations in a list, a search index over two small courses (bag-of-words vectors,
token-overlap BM25), a hashing embedder and a fixed clock. The real retrieve, gate, follow-up,
outline and extractive writer steps run on them; the same use case runs against Postgres and
Qdrant in tests/integration/test_answers.py."""

from __future__ import annotations

import itertools
import re
import zlib

import numpy as np
import pytest

from services.ask import examprep
from services.ask.answer import LECTURE_NOT_READY_TEXT, AnswerRequest, InvalidQuestion, NotFound, answer_question, \
    check_request
from services.ask.chargrams import CourseGrams
from services.ask.domain import DECLINE_TEXT, Done, LectureInfo, SentenceEvent
from services.ask.ports import AskPorts, RecordedAnswer
from services.ask.search_index import Hit, IndexedSentence

DIM = 512
_STOP = frozenset("a an the of to in on is are was it its and or by with that this what how why do does each "
                  "you we i".split())
A, B = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"
HASHING, SORTING, B_HASHING = ("10000000-0000-4000-8000-000000000001", "10000000-0000-4000-8000-000000000002",
                               "20000000-0000-4000-8000-000000000001")

# course -> lecture id -> (number, title, segments: each a list of (start_s, text))
COURSES = {
    A: {HASHING: (1, "Hashing", [
        [(10.0, "A hash table stores keys in an array of slots."),
         (16.0, "A hash function maps each key to one slot of the table."),
         (23.0, "Two keys that map to the same slot make a collision.")],
        [(40.0, "Chaining resolves collisions by keeping a linked list in each slot."),
         (47.0, "Every key that hashes to a slot is appended to the linked list of that slot."),
         (55.0, "Looking up a key then walks the linked list of its slot until the key is found.")],
    ]), SORTING: (2, "Sorting", [
        [(5.0, "Merge sort splits the array in half and sorts each half recursively."),
         (12.0, "The merge step combines two sorted halves in linear time."),
         (20.0, "So merge sort takes n log n time in the worst case.")],
    ])},
    B: {B_HASHING: (1, "Hashing again", [
        [(30.0, "Chaining resolves collisions: chaining keeps a linked list of colliding keys per slot."),
         (38.0, "Chaining is what this other course says about chaining and collisions.")],
    ])},
}


def _words(text: str) -> list[str]:
    return [w[:-1] if w.endswith("s") and len(w) > 3 else w for w in re.findall(r"[a-z]+", text.lower())
            if w not in _STOP]


def _token(word: str) -> int:
    return zlib.crc32(word.encode())


def embed(texts: list[str]) -> np.ndarray:
    """A hashing bag-of-words embedder: L2-normalised rows."""
    out = np.zeros((len(texts), DIM), dtype="float32")
    for i, t in enumerate(texts):
        for w in _words(t):
            out[i, _token(w) % DIM] += 1.0
        out[i] /= np.linalg.norm(out[i]) + 1e-9
    return out


class FakeIndex:
    """The SearchIndex port over COURSES: every query filtered by course, as the real one."""

    def __init__(self):
        self.sentences, self.lecture_sentences, self.segments = {}, {}, []  # segments: (course, Hit)
        self.synced: list[str] = []
        for course, lectures in COURSES.items():
            for lid, (number, _, segs) in lectures.items():
                everything = []
                for si, seg in enumerate(segs):
                    sents = [IndexedSentence(t, t + 6.0, text) for t, text in seg]
                    self.sentences[(lid, si)] = (sents, embed([s.text for s in sents]))
                    everything += sents
                    self.segments.append((course, Hit(f"{lid}:{si}", lid, number, si, sents[0].start_s,
                                                      sents[-1].end_s, " ".join(s.text for s in sents), 0.0)))
                self.lecture_sentences[lid] = (everything, embed([s.text for s in everything]))

    def _course(self, course_id: str, lecture_id: str | None = None) -> list[Hit]:
        return [h for c, h in self.segments if c == course_id and lecture_id in (None, h.lecture_id)]

    def sync_course(self, course_id: str) -> None:
        self.synced.append(course_id)

    def course_vocabulary(self, course_id: str) -> dict[str, int]:
        vocab: dict[str, int] = {}
        for h in self._course(course_id):
            for w in re.findall(r"[a-z]+", h.text.lower()):
                vocab[w] = vocab.get(w, 0) + 1
        return vocab

    def course_compounds(self, course_id: str) -> dict[str, str]:
        vocab, pairs = self.course_vocabulary(course_id), {}
        for h in self._course(course_id):
            words = re.findall(r"[a-z]+", h.text.lower())
            for a, b in zip(words, words[1:]):
                pairs[f"{a} {b}"] = pairs.get(f"{a} {b}", 0) + 1
        return {p.replace(" ", ""): p for p, n in pairs.items() if n >= 2 and p.replace(" ", "") not in vocab}

    def query_tokens(self, text: str) -> list[int]:
        return sorted({_token(w) for w in _words(text)})

    def passage_tokens(self, hit: Hit) -> frozenset[int]:
        return frozenset(self.query_tokens(hit.text))

    def course_df(self, course_id: str) -> tuple[int, dict[int, int]]:
        df: dict[int, int] = {}
        hits = self._course(course_id)
        for h in hits:
            for t in set(self.query_tokens(h.text)):
                df[t] = df.get(t, 0) + 1
        return len(hits), df

    def course_grams(self, course_id: str) -> CourseGrams:
        return CourseGrams([h.text for h in self._course(course_id)])

    def chapter_prior(self, hit: Hit, query_vec: np.ndarray) -> float | None:
        return None

    def search(self, course_id, lecture_id, dense, text, limit, sparse_query=None) -> dict[str, list[Hit]]:
        hits = self._course(course_id, lecture_id)
        q = set(self.query_tokens(text))

        def scored(score) -> list[Hit]:
            ranked = sorted(((score(h), h) for h in hits), key=lambda x: -x[0])
            return [Hit(h.point_id, h.lecture_id, h.lecture_number, h.segment_idx, h.start_s, h.end_s, h.text, s)
                    for s, h in ranked[:limit] if s > 0]

        return {"dense": scored(lambda h: float(embed([h.text])[0] @ dense)),
                "bm25": scored(lambda h: float(len(q & set(self.query_tokens(h.text))))),
                "dense_sub": [], "bm25_sub": []}


class FakeStore:
    """The AnswerStore port in memory: conversations are the recorded answers, as in Postgres."""

    def __init__(self, assessment: set[str] = frozenset()):
        self.records: list[RecordedAnswer] = []
        self.not_ready: set[str] = set()  # lectures still processing or failed
        self.assessment = set(assessment)
        self.practice: dict[str, int] = {HASHING: 4}

    def course_exists(self, course_id: str) -> bool:
        return course_id in COURSES

    def lecture_in_course(self, lecture_id: str, course_id: str) -> bool:
        return lecture_id in COURSES.get(course_id, {})

    def continues(self, conversation_id, course_id, asker) -> bool:
        mine = [r.course_id == course_id and r.asker == asker for r in self.records
                if r.conversation_id == conversation_id]
        return bool(mine) and all(mine)

    def _conversation(self, conversation_id, course_id) -> list[RecordedAnswer]:
        return [r for r in self.records if r.conversation_id == conversation_id and r.course_id == course_id]

    def history(self, conversation_id, course_id, n=3) -> list[str]:
        answered = [r for r in self._conversation(conversation_id, course_id) if not r.declined][-n:]
        return [r.rewritten_question or r.question for r in answered]

    def said(self, conversation_id, course_id, n=3) -> set[tuple[str, float]]:
        answered = [r for r in self._conversation(conversation_id, course_id) if not r.declined][-n:]
        return {(c["lecture_id"], float(c["t_s"])) for r in answered for s in r.sentences for c in s["citations"]}

    def assessment_mode(self, course_id: str) -> bool:
        return course_id in self.assessment

    def lectures(self, course_id: str) -> list[LectureInfo]:
        return sorted((LectureInfo(lid, number, title, 600.0) for lid, (number, title, _) in
                       COURSES.get(course_id, {}).items() if lid not in self.not_ready), key=lambda l: l.number)

    def practice_questions(self, lecture_id: str, embed) -> int:
        return self.practice.get(lecture_id, 0)

    def record(self, answer: RecordedAnswer) -> None:
        self.records.append(answer)


@pytest.fixture()
def store():
    return FakeStore()


_IDS = itertools.count(1)


def _ports(store: FakeStore) -> AskPorts:
    return AskPorts(store=store, index=FakeIndex(), embed=embed, writers=[], clock=lambda: 1.0,
                    new_id=lambda: f"30000000-0000-4000-8000-{next(_IDS):012d}")


def ask(store: FakeStore, message: str, course: str = A, conversation_id: str | None = None,
        **kw) -> tuple[list[SentenceEvent], Done]:
    events = list(answer_question(AnswerRequest(course, None, message, conversation_id=conversation_id), _ports(store),
                                  **kw))
    assert isinstance(events[-1], Done) and all(isinstance(e, SentenceEvent) for e in events[:-1])
    return events[:-1], events[-1]


def _cites(done: Done) -> list[tuple[str, float]]:
    return [(c.lecture_id, c.t_s) for s in done.sentences for c in s.cites]


def test_a_covered_question_is_answered_with_citations_from_the_index(store):
    events, done = ask(store, "How does chaining resolve collisions?")
    assert not done.declined and done.writer == "extractive" and done.reason == ""
    assert [s.text for s in done.sentences] == [
        "Chaining resolves collisions by keeping a linked list in each slot.",
        "Every key that hashes to a slot is appended to the linked list of that slot."]
    assert _cites(done) == [(HASHING, 40.0), (HASHING, 47.0)]
    assert [c.label for s in done.sentences for c in s.cites] == ["L1 · 0:40", "L1 · 0:47"]
    assert [e.delta for e in events] == [done.sentences[0].text] + [" " + s.text for s in done.sentences[1:]]
    assert done.answer == " ".join(e.delta for e in events).replace("  ", " ")
    assert (done.sources[0].lecture_id, done.sources[0].start_s, done.sources[0].end_s) == (HASHING, 40.0, 61.0)


def test_an_uncovered_question_is_declined(store):
    events, done = ask(store, "How do you bake sourdough bread?")
    assert done.declined and done.reason == "not_covered" and done.sources == []
    assert [(e.sentence.text, e.sentence.cites) for e in events] == [(DECLINE_TEXT, [])]
    assert done.answer == "Not covered in these lectures."


def test_the_answer_is_recorded_once_with_what_was_shown(store):
    _, done = ask(store, "How does chaining resolve collisions?")
    assert len(store.records) == 1
    r = store.records[0]
    assert (r.answer_id, r.conversation_id, r.course_id, r.declined, r.reason, r.answer) == (
        done.answer_id, done.conversation_id, A, False, None, done.answer)
    assert r.sentences[0] == {"text": done.sentences[0].text, "citations": [{"lecture_id": HASHING, "t_s": 40.0}]}
    assert r.sources[0] == {"lecture_id": HASHING, "start_s": 40.0, "end_s": 61.0}
    _, declined = ask(store, "How do you bake sourdough bread?")
    assert len(store.records) == 2 and store.records[1].declined and store.records[1].reason == "not_covered"


def test_a_client_that_left_gets_nothing_recorded(store):
    events = list(answer_question(AnswerRequest(A, None, "How does chaining resolve collisions?"), _ports(store),
                                  still_wanted=lambda: False))
    assert events == [] and store.records == []


def test_a_follow_up_is_answered_from_the_conversation(store):
    _, first = ask(store, "How does chaining resolve collisions?")
    _, why = ask(store, "why?", conversation_id=first.conversation_id)
    assert why.conversation_id == first.conversation_id
    assert why.rewritten_question == "Why? How does chaining resolve collisions?"
    assert not why.declined
    assert {lid for lid, _ in _cites(why)} == {HASHING}
    assert _cites(why) == [(HASHING, 16.0), (HASHING, 23.0)]  # "why?" goes on: it does not repeat the answer
    assert store.records[-1].rewritten_question == "Why? How does chaining resolve collisions?"
    # the same id from another course starts a new conversation, with no history
    _, other = ask(store, "why?", course=B, conversation_id=first.conversation_id)
    assert other.conversation_id != first.conversation_id and other.rewritten_question == ""


def test_a_misspelled_question_is_answered_and_recorded_as_the_student_wrote_it(store):
    _, done = ask(store, "What does the linekd list of a slot hold?")  # "linked" for search
    assert not done.declined and _cites(done)[0] == (HASHING, 40.0)
    assert done.rewritten_question == ""  # not a follow-up: nothing was rewritten
    r = store.records[-1]
    assert (r.question, r.rewritten_question) == ("What does the linekd list of a slot hold?",
                                                  "What does the linekd list of a slot hold?")
    _, why = ask(store, "why?", conversation_id=done.conversation_id)
    assert why.rewritten_question == "Why? What does the linekd list of a slot hold?" and not why.declined


def test_a_conversation_id_the_service_did_not_make_starts_a_new_conversation(store):
    made_up = "12345678-0000-4000-8000-000000000000"
    _, first = ask(store, "How does chaining resolve collisions?", conversation_id=made_up)
    assert first.conversation_id != made_up  # a client cannot choose (or squat on) a new conversation's id
    _, why = ask(store, "why?", conversation_id=first.conversation_id)
    assert why.conversation_id == first.conversation_id and why.rewritten_question.startswith("Why? How does chaining")


def test_a_lecture_that_is_not_ready_says_so_instead_of_not_covered(store):
    store.not_ready.add(SORTING)
    events = list(answer_question(AnswerRequest(A, SORTING, "What does merge sort do?"), _ports(store)))
    done = events[-1]
    assert done.declined and done.reason == "lecture_not_ready" and done.sources == []
    assert [(e.sentence.text, e.sentence.cites) for e in events[:-1]] == [(LECTURE_NOT_READY_TEXT, [])]
    # the course's ready lectures still answer
    _, whole = ask(store, "How does chaining resolve collisions?")
    assert not whole.declined


def test_other_courses_passages_are_never_cited(store):
    _, a = ask(store, "What is chaining?")
    assert _cites(a) and {lid for lid, _ in _cites(a)} == {HASHING}
    assert {s.lecture_id for s in a.sources} <= {HASHING, SORTING}
    _, b = ask(store, "What is chaining?", course=B)
    assert _cites(b) and {lid for lid, _ in _cites(b)} == {B_HASHING}
    assert {s.lecture_id for s in b.sources} == {B_HASHING}


ITEM = ("Which technique resolves collisions by keeping a linked list in each slot? A) chaining B) merge sort "
        "C) a hash function D) an array")


def test_assessment_mode_never_names_an_option_of_a_pasted_item():
    store = FakeStore(assessment={A})
    _, done = ask(store, ITEM)
    assert done.sentences and not any(examprep.reveals(s.text, examprep.graded_options(ITEM))
                                      for s in done.sentences)
    assert all("chaining" not in s.text.lower() for s in done.sentences)
    assert [s.text for s in done.sentences] == [
        "Every key that hashes to a slot is appended to the linked list of that slot."]
    # the same item where assessment mode is off: the sentence naming the option is shown
    _, free = ask(FakeStore(), ITEM)
    assert free.sentences[0].text == "Chaining resolves collisions by keeping a linked list in each slot."


def test_assessment_mode_replies_when_every_sentence_would_give_the_item_away():
    store = FakeStore(assessment={A})
    item = "True or false: chaining keeps a linked list in each slot?"
    events, done = ask(store, "A) chaining B) linked list C) slot D) key. " + item)
    assert done.declined and done.reason == "assessment_mode"
    assert [e.sentence.text for e in events] == [examprep.ASSESSMENT_REPLY]


def test_policy_outline_and_exam_prep_replies(store):
    _, policy = ask(store, "Please grade my homework")
    assert policy.declined and policy.writer == "policy" and policy.reason == "unsupported_request"
    _, outline = ask(store, "How many lectures are there?")
    assert outline.writer == "outline" and not outline.declined
    assert outline.sentences[0].text.startswith("This course has 2 lectures ready to ask about: L1 Hashing")
    _, quiz = ask(store, "Quiz me on hashing")
    assert quiz.writer == "exam_prep" and _cites(quiz) == [(HASHING, 0.0)]
    assert quiz.sentences[0].text.startswith("Lecture 1, “Hashing”, has 4 practice questions on hashing")


def test_a_lecture_without_practice_questions_points_to_where_it_teaches_the_topic(store):
    """A newcomer's "quiz me on slow start" got "has no practice questions yet; start from the
    beginning" cited at 0:00, although none could ever be written and the lecture teaches it at 0:41."""
    store.practice = {}
    _, quiz = ask(store, "Quiz me on chaining")
    assert quiz.writer == "exam_prep" and _cites(quiz) == [(HASHING, 40.0)], _cites(quiz)
    assert quiz.sentences[0].text == ("Lecture 1, “Hashing”, has no practice questions (none could be written from "
                                      "it); it teaches this around 0:40.")
    _, bare = ask(store, "Quiz me")
    assert _cites(bare) == [(HASHING, 0.0)] and bare.sentences[0].text.endswith("start from the beginning of the lecture.")


def test_requests_are_checked_before_any_work(store):
    assert check_request(store, A, "", "  what   is chaining? ") == (A, None, "what is chaining?")
    with pytest.raises(NotFound, match="Unknown course"):
        check_request(store, "not-a-uuid", "", "what is chaining?")
    with pytest.raises(NotFound, match="Unknown lecture in this course"):
        check_request(store, B, HASHING, "what is chaining?")
    with pytest.raises(InvalidQuestion, match="empty"):
        check_request(store, A, "", "   ")
    with pytest.raises(InvalidQuestion, match="too long"):
        check_request(store, A, "", "x" * 2001)
