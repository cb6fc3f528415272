"""Questions about the course itself answered from its outline (services/ask/outline.py)."""

import pytest

from services.ask.domain import LectureInfo
from services.ask.outline import answer

LECTURES = [LectureInfo("a", 3, "Sets and Sorting", 3170.0, ((0.0, "Sets"), (1300.0, "Sorting"))),
            LectureInfo("b", 4, "Hashing", 3080.0)]


@pytest.mark.parametrize("q", ["How many lectures are there?", "What lectures are in this course?",
                               "which lectures are there", "What are the lectures?", "list the lectures",
                               "What videos are part of the course?", "what lectures does this class have"])
def test_the_lecture_list_in_its_phrasings(q):
    [s] = answer(q, LECTURES, lambda topic: None)
    assert s.text.startswith("This course has 2 lectures") and "L3 Sets and Sorting (52:50)" in s.text
    assert [(c.lecture_id, c.t_s) for c in s.cites] == [("a", 0.0), ("b", 0.0)]


@pytest.mark.parametrize("q", ["What is a lecture?", "Which lecture covers radix sort?", "what is hashing"])
def test_other_questions_are_not_the_lecture_list(q):
    got = answer(q, LECTURES, lambda topic: None)
    assert got is None or not got[0].text.startswith("This course has")


@pytest.mark.parametrize("text,n", [
    ("What are the chapters of lecture 5?", 5), ("quiz me on lecture 4", 4), ("what is the fifth lecture about", 5),
    ("summarize L3", 3), ("5th lecture topics", 5), ("lecture five", 5), ("Lecture #12 outline", 12),
    ("which lecture covers hashing", None), ("what is a lecture", None), ("Explain L-systems", None)])
def test_a_lecture_is_named_by_number_word_or_ordinal(text, n):
    from services.ask.outline import lecture_ref

    assert lecture_ref(text) == n


OUTLINED = [LectureInfo("a", 3, "Sets and Sorting", 3175.0, ((0.0, "Introduction"), (121.0, "The Set Interface"))),
            LectureInfo("b", 5, "Linear Sorting", 3117.0, ((0.0, "Review"), (1063.2, "Direct access array sort")))]


@pytest.mark.parametrize("q", ["What are the chapters of lecture 5?", "What is lecture 5 about?",
                               "give me an overview of the fifth lecture", "what happens in lecture 5?",
                               "what topics does lecture 5 cover"])
def test_what_one_lecture_holds_is_its_title_and_chapters(q):
    from services.ask.outline import answer

    out = answer(q, OUTLINED, lambda t: None)
    assert out and "Linear Sorting" in out[0].text and out[0].cites[0].lecture_id == "b"
    assert [s.cites[0].t_s for s in out[1:]] == [0.0, 1063.2] and "Direct access array sort" in out[2].text


@pytest.mark.parametrize("q", ["what does lecture 3 say about merge sort?", "In lecture 3, what is the set interface?"])
def test_a_topic_asked_of_a_lecture_is_not_an_outline_question(q):
    from services.ask.outline import answer

    assert answer(q, OUTLINED, lambda t: None) is None


@pytest.mark.parametrize("q", ["What are the chapters?", "Give me an outline of the lecture", "summarize this video",
                               "what's the agenda for today?"])
def test_an_outline_asked_without_a_lecture_number_is_of_the_lecture_in_scope_or_of_the_course(q):
    """A newcomer's "What are the chapters?" was declined in a course of one lecture."""
    from services.ask.outline import answer

    scoped = answer(q, OUTLINED, lambda t: None, scope="b")
    assert scoped and "Linear Sorting" in scoped[0].text and [s.cites[0].t_s for s in scoped[1:]] == [0.0, 1063.2]
    only = answer(q, OUTLINED[:1], lambda t: None)
    assert only and "Sets and Sorting" in only[0].text and "2 chapters" in only[0].text
    course = answer(q, OUTLINED, lambda t: None)
    assert [s.cites[0].lecture_id for s in course] == ["a", "b"] and "covers Introduction" in course[0].text


@pytest.mark.parametrize("q", ["What are the parts of a hash function?", "summary of hashing", "outline the proof of the bound"])
def test_an_outline_word_with_a_topic_is_a_question_about_the_topic(q):
    from services.ask.outline import answer

    assert answer(q, OUTLINED[:1], lambda t: None) is None


def test_a_lecture_the_course_does_not_have_is_named_as_such():
    from services.ask.outline import answer

    out = answer("What are the chapters of lecture 7?", OUTLINED, lambda t: None)
    assert out and out[0].text == "There is no lecture 7 ready in this course; its ready lectures are 3 and 5."
    one = answer("what is lecture 1 about", OUTLINED[1:], lambda t: None)
    assert one[0].text == "There is no lecture 1 ready in this course; it has only lecture 5 ready, \u201cLinear Sorting\u201d."
    many = [LectureInfo(str(n), n, f"L{n}", 60.0) for n in range(1, 6)]
    assert answer("what is lecture 9 about", many, lambda t: None)[0].text.endswith("its ready lectures are 1\u20135.")
    huge = answer("what is lecture 99999999999999999999999 about", OUTLINED, lambda t: None)  # was searched, declined
    assert huge[0].text == "There is no lecture 99999999999999999999999 ready in this course; its ready lectures are 3 and 5."


def test_what_a_lecture_is_about_says_it_with_each_chapter_summary():
    from services.ask.outline import answer

    two = [LectureInfo("b", 5, "Linear Sorting", 3117.0, ((0.0, "Review"), (1063.2, "Direct access array sort")),
                       ("Hashing: one; two.\nUm, so we review the comparison model and its lower bound today.",
                        "Does that make sense?\nWhy?\nA direct access array sort puts each key at its own index."))]
    out = answer("What is lecture 5 about?", two, lambda t: None)
    assert [s.text for s in out[1:]] == [
        "Review (0:00): We review the comparison model and its lower bound today.",
        "Direct access array sort (17:43): A direct access array sort puts each key at its own index."]
    one = [LectureInfo("d", 1, "Dijkstra's algorithm", 60.0, ((0.0, "Distance"),),
                       ("Today we study Dijkstra's algorithm, which finds shortest paths from one source.",))]
    [s] = answer("what is lecture 1 about", one, lambda t: None)
    assert s.text == ("L1 \u201cDijkstra's algorithm\u201d (1:00) is one chapter, Distance: Today we study "
                      "Dijkstra's algorithm, which finds shortest paths from one source.")
    assert [(c.lecture_id, c.t_s) for c in s.cites] == [("d", 0.0)]
    bare = answer("what is lecture 1 about", [LectureInfo("d", 1, "T", 60.0, ((0.0, "Distance"),))], lambda t: None)
    assert bare[0].text == "L1 \u201cT\u201d (1:00) is one chapter, Distance."


@pytest.mark.parametrize("q,outline", [("what's week 1 about", True), ("What is Week 1 about?", True),
                                       ("summarize week 1", True), ("what does week 1 say about chaining?", False),
                                       ("what is hashing about", False), ("week 12 outline", False)])
def test_a_lecture_is_named_by_a_title_that_holds_a_number(q, outline):
    """"What's week 1 about" was declined in a course whose lecture 1 is titled "Week 1" (the newcomer's
    README walk-through); a title without a number ("Hashing") names a topic, not a lecture."""
    from services.ask.outline import answer

    lectures = [LectureInfo("w1", 1, "Week 1", 250.0, ((0.0, "Collisions"), (120.0, "Chaining"))),
                LectureInfo("h", 2, "Hashing", 300.0, ((0.0, "Hash functions"),))]
    out = answer(q, lectures, lambda t: None)
    assert (out is not None and out[0].text.startswith("L1 \u201cWeek 1\u201d")) == outline, out


@pytest.mark.parametrize("q,reply", [
    ("what's week 2 about", "There is no week 2 ready in this course; it has only lecture 1 ready, \u201cWeek 1\u201d."),
    ("summarize Week 12", "There is no week 12 ready in this course; it has only lecture 1 ready, \u201cWeek 1\u201d."),
    ("what does week 2 say about chaining?", None), ("what's week 1 about", "L1 \u201cWeek 1\u201d")])
def test_a_number_the_series_of_titles_lacks_is_named_as_such(q, reply):
    """The re-probe: "what's week 2 about" in a course whose one lecture is "Week 1" was answered from week 1."""
    from services.ask.outline import answer

    out = answer(q, [LectureInfo("w1", 1, "Week 1", 250.0, ((0.0, "Collisions"),))], lambda t: None)
    assert (out[0].text if out else None) == reply or (reply and out and out[0].text.startswith(reply)), out
