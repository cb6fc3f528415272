"""Questions about a moment (services/ask/moment.py, issue 33 item 1) through the answer use case, over
the in-memory ports of test_answer_usecase.py with the two index reads a moment needs (a lecture's
segments and its slides). The same path runs against Postgres and Qdrant in
tests/integration/test_moments.py."""

from __future__ import annotations

import math

import pytest

from services.ask import moment
from services.ask.answer import AnswerRequest, InvalidQuestion, NotFound, answer_question, check_moment
from services.ask.domain import Done
from services.ask.ports import AskPorts
from test_answer_usecase import A, B_HASHING, HASHING, SORTING, FakeIndex, FakeStore, embed


class MomentIndex(FakeIndex):
    """FakeIndex with its lectures' segments and, for the Hashing lecture, one slide on screen 38–62 s."""

    def __init__(self, slides: dict | None = None):
        super().__init__()
        self.slides = slides if slides is not None else {HASHING: [(38.0, 62.0, "Chaining\nA linked list per slot")]}

    def lecture_segments(self, lecture_id: str):
        return sorted((h for _, h in self.segments if h.lecture_id == lecture_id), key=lambda h: h.start_s)

    def lecture_slides(self, lecture_id: str):
        return list(self.slides.get(lecture_id, []))


def ask_at(store: FakeStore, message: str, at: moment.Moment | None, conversation_id: str | None = None) -> Done:
    ports = AskPorts(store=store, index=MomentIndex(), embed=embed, writers=[], clock=lambda: 1.0)
    events = list(answer_question(AnswerRequest(A, None, message, conversation_id=conversation_id, at=at), ports))
    assert isinstance(events[-1], Done)
    return events[-1]


def _cites(done: Done) -> list[tuple[str, float]]:
    return [(c.lecture_id, c.t_s) for s in done.sentences for c in s.cites]


@pytest.fixture()
def store():
    return FakeStore()


@pytest.mark.parametrize("question", ["what does this mean?", "why is that?", "what did he just say?",
                                      "Can you explain this again?"])
def test_a_question_pointing_at_the_screen_is_answered_from_the_moment(store, question):
    done = ask_at(store, question, moment.Moment(SORTING, 13.0))  # no slide: ±30 s
    assert not done.declined and done.writer == "extractive", done
    cites = _cites(done)
    assert cites and all(lid == SORTING and 0.0 <= t <= 43.0 for lid, t in cites), cites
    assert done.sources[0].lecture_id == SORTING  # the moment's passage comes first


def test_without_the_moment_the_same_question_gets_no_such_treatment(store):
    done = ask_at(store, "what does this mean?", None)
    assert done.declined or all(lid != SORTING for lid, _ in _cites(done)), done


def test_a_slide_on_screen_bounds_the_answer_to_its_time(store):
    done = ask_at(store, "explain this slide", moment.Moment(HASHING, 50.0))
    cites = _cites(done)
    assert not done.declined and cites and all(lid == HASHING and 38.0 <= t <= 62.0 for lid, t in cites), cites


def test_about_this_moment_answers_from_it_whatever_the_wording(store):
    topical = ask_at(store, "What is a hash table?", moment.Moment(HASHING, 50.0))
    focused = ask_at(store, "What is a hash table?", moment.Moment(HASHING, 50.0, focus=True))
    assert any(t < 38.0 for _, t in _cites(topical))  # answered as without the moment: the definition at 0:10
    assert _cites(focused) and all(38.0 <= t <= 62.0 for _, t in _cites(focused))


def test_a_topical_question_is_answered_as_without_the_moment(store):
    q = "How does chaining resolve collisions?"
    plain, at = ask_at(store, q, None), ask_at(store, q, moment.Moment(SORTING, 13.0))
    assert [s.text for s in at.sentences] == [s.text for s in plain.sentences]
    assert _cites(at) == _cites(plain) == [(HASHING, 40.0), (HASHING, 47.0)]


def test_in_a_conversation_that_refers_to_the_previous_answer_not_the_moment(store):
    first = ask_at(store, "How does chaining resolve collisions?", None)
    why = ask_at(store, "why is that?", moment.Moment(SORTING, 13.0), conversation_id=first.conversation_id)
    assert all(lid == HASHING for lid, _ in _cites(why)), why  # the follow-up, not merge sort on screen
    on_screen = ask_at(store, "what is on the screen?", moment.Moment(SORTING, 13.0),
                       conversation_id=first.conversation_id)
    assert _cites(on_screen) and all(lid == SORTING for lid, _ in _cites(on_screen))


def test_a_moment_where_nothing_is_said_is_answered_as_any_question(store):
    done = ask_at(store, "what does this mean?", moment.Moment(SORTING, 500.0))
    assert done.declined or all(abs(t - 500.0) > 30 for _, t in _cites(done))


def test_ties_are_broken_by_closeness_to_the_moment():
    from services.ask.retrieve import Passage
    from services.ask.search_index import Hit

    far, near, other = (Passage(Hit(str(i), lid, 1, i, s, s + 10, "", 0.0), score) for i, (lid, s, score) in
                        enumerate([(HASHING, 0.0, 1.0), (HASHING, 40.0, 1.0), (SORTING, 0.0, 2.0)]))
    order = moment.tie_break([far, near, other], moment.Moment(HASHING, 45.0))
    assert order == [other, near, far]  # the better score first whatever the distance


def test_check_moment_refuses_what_is_not_a_moment_of_the_course(store):
    assert check_moment(store, A, None, HASHING, 12.5) == moment.Moment(HASHING, 12.5)
    assert math.copysign(1, check_moment(store, A, None, HASHING, -0.0).t_s) == 1.0
    with pytest.raises(NotFound):
        check_moment(store, A, None, B_HASHING, 10.0)  # a lecture of another course
    with pytest.raises(NotFound):
        check_moment(store, A, None, "not-a-uuid", 10.0)
    for bad in (float("nan"), float("inf"), -1.0, 1e9):
        with pytest.raises(InvalidQuestion):
            check_moment(store, A, None, HASHING, bad)
    with pytest.raises(InvalidQuestion):
        check_moment(store, A, SORTING, HASHING, 10.0)  # the question is scoped to another lecture


def test_the_window_is_the_slide_on_screen_or_30_seconds_either_side():
    index = MomentIndex()
    assert moment.window(index, moment.Moment(HASHING, 50.0)) == moment.Window(HASHING, 38.0, 62.0, index.slides[HASHING][0][2])
    assert moment.window(index, moment.Moment(HASHING, 20.0)) == moment.Window(HASHING, 0.0, 50.0)
    assert moment.window(index, moment.Moment(HASHING, 70.0)) == moment.Window(HASHING, 40.0, 100.0)
    long = MomentIndex({HASHING: [(0.0, 1000.0, "One slide all along")]})
    assert moment.window(long, moment.Moment(HASHING, 500.0)) == moment.Window(HASHING, 410.0, 590.0, "One slide all along")
