"""The JSON answers of checkpoints while watching and of course insights (the rest are in
:mod:`services.gateway.responses`, whose conventions hold: every field declared, times in seconds)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from .responses import Answer, Citation, QuizQuestion


# -- checkpoints while watching ----------------------------------------------------------------
class Checkpoint(Answer):
    """A chapter's end (``at_s``, seconds into the lecture) and the practice question offered there,
    the earliest of the lecture's questions whose explaining moment lies inside the chapter."""

    chapter_index: int
    chapter_title: str
    start_s: float
    at_s: float
    question: QuizQuestion


class CheckpointList(Answer):
    """A lecture's checkpoints in time order; none while the course has them off (``enabled`` false)."""

    lecture_id: str
    enabled: bool
    checkpoints: list[Checkpoint]


class CheckpointStat(Answer):
    """How a checkpoint did: answers given at it (``answered``) and the wrong ones, since its question
    was written (a regenerated set starts at 0)."""

    lecture_id: str
    lecture_number: int
    lecture_title: str
    chapter_index: int
    chapter_title: str
    at_s: float
    question_id: str
    question: str
    answered: int
    wrong: int


# -- insights --------------------------------------------------------------------------------
class Group(Answer):
    """Questions grouped by meaning, labelled by the most central one."""

    label: str
    count: int
    examples: list[str]


class Moment(Citation):
    """One of the most-cited moments (a whole second) with how often it was cited."""

    lecture_title: str
    count: int


class Insights(Answer):
    """What students asked over ``from``..``to`` (see ``services/gateway/insights.py``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    course_id: str
    from_: str = Field(alias="from")
    to: str
    questions: int
    declined: int
    students: int
    grouping: dict
    topics: list[Group]
    uncovered: list[Group]
    thumbs_down: list[dict]
    top_moments: list[Moment]
    per_day: list[dict]
    checkpoints: list[CheckpointStat] = Field(description=(
        "per checkpoint: answers and wrong ones (all time, not only the period); none while checkpoints are off"))
