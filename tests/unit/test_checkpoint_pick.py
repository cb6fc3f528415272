"""Which question a chapter's checkpoint offers (:func:`services.gateway.checkpoints.pick`): per
chapter, the earliest question of the lecture cited inside it; none for a chapter without one."""

from __future__ import annotations

from lecturecopilot.ask.v1 import ask_pb2
from services.gateway.checkpoints import pick

L, OTHER = "lecture-1", "lecture-2"
CHAPTERS = [{"start_s": 0.0, "end_s": 60.0, "title": "Counting sort"},
            {"start_s": 60.0, "end_s": 120.0, "title": "Radix sort"},
            {"start_s": 120.0, "end_s": 180.0, "title": "Merge sort"}]


def q(qid: str, t_s: float, lecture_id: str = L) -> ask_pb2.PracticeQuestion:
    return ask_pb2.PracticeQuestion(id=qid, lecture_id=L, question=f"stem {qid}", options=["a", "b", "c", "d"],
                                    citation=ask_pb2.Citation(lecture_id=lecture_id, t_s=t_s))


def test_each_chapter_offers_its_earliest_question_and_a_chapter_without_one_has_none():
    found = pick(CHAPTERS, [q("late", 50.0), q("early", 12.0), q("third", 150.0), q("edge", 60.0)], L)
    assert [(c.chapter_index, c.chapter_title, c.start_s, c.at_s, c.question.id) for c in found] == [
        (0, "Counting sort", 0.0, 60.0, "early"),   # 12 s before 50 s
        (1, "Radix sort", 60.0, 120.0, "edge"),      # a chapter is [start, end): 60 s is the second's
        (2, "Merge sort", 120.0, 180.0, "third")]
    assert [c.question.id for c in pick(CHAPTERS, [q("only", 70.0)], L)] == ["only"]  # chapters 0 and 2: none


def test_a_question_citing_another_lecture_is_no_checkpoint_and_the_last_chapter_keeps_its_end():
    assert pick(CHAPTERS, [q("elsewhere", 10.0, OTHER)], L) == []
    assert [c.chapter_index for c in pick(CHAPTERS, [q("end", 180.0)], L)] == [2]
    assert pick(CHAPTERS, [q("past", 181.0)], L) == [] and pick([], [q("x", 1.0)], L) == []


def test_ties_keep_the_order_given():
    assert pick(CHAPTERS, [q("first", 5.0), q("second", 5.0)], L)[0].question.id == "first"
