"""Questions about the course itself answered from its outline (services/ask/outline.py)."""

import pytest

from services.ask.outline import LectureInfo, answer

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
