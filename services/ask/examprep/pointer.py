"""The exam-prep pointer: "quiz me on hashing" is answered with one sentence pointing to the
practice questions of the lecture that teaches the topic, cited at that lecture's start."""

from __future__ import annotations

from lecturecopilot.labels import clock

from .. import outline, retrieve, spelling
from ..domain import AnswerSentence, Cite
from ..locate import Locate
from ..ports import AskPorts
from .terms import contains


def pointer(ports: AskPorts, course_id: str, lecture_id: str | None, topic: str,
            locate: Locate) -> AnswerSentence | None:
    """"Quiz me on hashing": one sentence pointing to the practice questions of the lecture
    that teaches the topic (the one lecture titled with it, else, behind the relevance gate
    (``locate``), the lecture with most of the top 6 retrieved passages, rank-weighted), cited at
    that lecture's start; "quiz me on lecture 4" points to lecture 4 (:func:`outline.lecture_ref`);
    "quiz me" (``topic`` "") to the lecture asked about, else the first. The lecture's set is
    written when it has none (``store.practice_questions``). None when no lecture covers the topic."""
    lectures = {l.id: l for l in ports.store.lectures(course_id)}
    named = outline.lecture_ref(topic) if topic else None
    by_number = {l.number: l for l in lectures.values()}
    if named is not None and named in by_number:  # "quiz me on lecture 4": that lecture, whatever it holds
        lecture_id, topic = by_number[named].id, ""
    if topic:
        topic = spelling.correct(topic, ports.index.course_vocabulary(course_id), ports.index.course_compounds(course_id))
        target = _teaching(ports, course_id, lecture_id, topic, lectures, locate)
    else:
        target = lectures.get(lecture_id) if lecture_id else min(lectures.values(), key=lambda l: l.number,
                                                                 default=None)
    if target is None:
        return None
    n = ports.store.practice_questions(target.id, ports.embed)
    about = f" on {topic}" if topic else ""
    if n:
        return AnswerSentence(
            f"Lecture {target.number}, “{target.title}”, has {n} practice question{'s' if n != 1 else ''}{about}: "
            f"open its exam-prep questions to test yourself, each explained with the moment of the lecture it "
            f"comes from.", [Cite(target.id, target.number, 0.0)])
    # none could be written from it (too little said in checkable sentences): where to study instead
    at = locate(topic) if topic else None
    t_s = at[1] if at and at[0] == target.id else 0.0
    where = (f"it teaches this around {clock(t_s)}" if topic and t_s else
             "it teaches this" if topic else "start from the beginning of the lecture")
    return AnswerSentence(f"Lecture {target.number}, “{target.title}”, has no practice questions (none "
                                f"could be written from it); {where}.", [Cite(target.id, target.number, t_s)])


def _teaching(ports: AskPorts, course_id: str, lecture_id: str | None, topic: str, lectures: dict,
              locate: Locate) -> outline.LectureInfo | None:
    """The lecture that teaches ``topic``: the one lecture titled with it (when no lecture was
    named), else, when the course covers it, the one most retrieved (votes 1/rank over the top 6)."""
    titled = [l for l in lectures.values() if contains(l.title, topic) or contains(topic, l.title)]
    target = titled[0] if len(titled) == 1 and not lecture_id else None
    if target is None and locate(topic):  # covered: the lecture most retrieved
        vec = ports.embed([topic])[0]
        votes: dict[str, float] = {}
        for rank, p in enumerate(retrieve.retrieve(ports.index, course_id, lecture_id, vec, topic, k=6)):
            votes[p.hit.lecture_id] = votes.get(p.hit.lecture_id, 0.0) + 1.0 / (rank + 1)
        target = lectures.get(max(votes, key=votes.get)) if votes else None
    return target
