"""Course insights for instructors: what students asked over a period, read from the ``answers``
log (every exchange: question, declined or not, sentences with citations, time) and ``feedback``.

- ``questions``: how many were asked; ``students``: how many distinct askers, counted by the keyed
  hash the rate limits use (``answers.asker``), never by identity; the course's own instructor and
  admins (``answers.staff``) are not counted.
- ``topics`` / ``uncovered``: answered / declined questions (a follow-up as the standalone question it
  was rewritten to) grouped by meaning. The questions are embedded by ask's ``Embed`` call (the
  course's sentence embedder, L2-normalised: cosine = dot product; the gateway loads no model).
  Which pairs are neighbours (cosine ≥ ``threshold``, 0.6) is computed by :func:`store.neighbours`:
  in SQL with pgvector's ``<=>`` where the Postgres has the extension (the embedded one), with numpy
  where it does not (the machine's Postgres 15); ``grouping.method`` says which. They are then
  clustered greedily — the question with the most neighbours seeds a group of
  its still-ungrouped neighbours, repeatedly. Each group is labelled by its most central question
  (highest mean cosine to the group), with a few example questions.
- ``thumbs_down``: thumbs-down answers with their question and comment.
- ``top_moments``: the most-cited moments (lecture, whole second — cut down, as answers' chips label it —
  count, chip) of answers from the
  lectures' content (not outline answers or "quiz me" pointers, which cite a lecture's start).
- ``per_day``: questions (and declined ones) per day of the period, for the chart.
- ``checkpoints`` (added by the route, :func:`services.gateway.routes.checkpoints.course_stats`): per
  checkpoint while watching, the answers given at it and the wrong ones (all time).
"""

from __future__ import annotations

import csv
import io
from datetime import date, datetime, time, timedelta, timezone
from functools import partial
from typing import Callable, Sequence

import numpy as np

from lecturecopilot.labels import citation_label

from . import store

THRESHOLD = 0.6
MAX_QUESTIONS = 4000  # the newest questions of the period that are grouped (embedding cost)
TOP_GROUPS = 12
EXAMPLES = 3
# answers whose chips point at a lecture's start, not at a moment taught: the course outline
# ("which lecture covers radix sort?"), "quiz me" pointers and policy replies
NOT_MOMENTS = ("outline", "exam_prep", "policy")
EMBED_BATCH = 500  # texts per Embed call (ask takes at most 2000)


Neighbours = Callable[[np.ndarray, float], np.ndarray]


def numpy_neighbours(vectors: np.ndarray, threshold: float) -> np.ndarray:
    """(n, n) bool: True where the cosine of two L2-normalised rows is ≥ ``threshold``."""
    return (vectors @ vectors.T) >= threshold


def cluster(vectors: np.ndarray, threshold: float = THRESHOLD, near: np.ndarray | None = None) -> list[list[int]]:
    """Greedy grouping of L2-normalised row vectors by cosine ≥ ``threshold``: the point with the
    most ungrouped neighbours seeds a group of them, until every point is grouped. ``near``: the
    (n, n) bool neighbour matrix if computed elsewhere (:func:`store.neighbours`), else numpy's.
    Returns groups of row indices, largest first, each ordered by centrality (mean cosine to its
    group, highest first)."""
    n = len(vectors)
    if n == 0:
        return []
    if near is None:
        near = numpy_neighbours(vectors, threshold)
    free = np.ones(n, dtype=bool)
    groups: list[list[int]] = []
    while free.any():
        counts = (near & free[None, :]).sum(axis=1)
        counts[~free] = -1
        seed = int(np.argmax(counts))
        members = np.flatnonzero(near[seed] & free)
        if seed not in members:
            members = np.append(members, seed)
        free[members] = False
        central = (vectors[members] @ vectors[members].T).mean(axis=1)
        groups.append([int(members[i]) for i in np.argsort(-central, kind="stable")])
    groups.sort(key=lambda g: (-len(g), g[0]))
    return groups


def grouped(questions: Sequence[str], embed: Callable[[list[str]], np.ndarray],
            threshold: float = THRESHOLD, top: int = TOP_GROUPS, neighbours: Neighbours = numpy_neighbours) -> list[dict]:
    """``[{"label", "count", "examples"}]`` for the ``top`` largest groups of ``questions``
    (see :func:`cluster`, its neighbour matrix from ``neighbours(vectors, threshold)``); the label
    is the group's most central question."""
    if not questions:
        return []
    vecs = np.asarray(embed(list(questions)), dtype="float32")
    out = []
    for g in cluster(vecs, threshold, neighbours(vecs, threshold))[:top]:
        texts = [questions[i] for i in g]
        examples, seen = [], {" ".join(texts[0].lower().split())}
        for t in texts[1:]:
            key = " ".join(t.lower().split())
            if key not in seen:
                seen.add(key)
                examples.append(t)
            if len(examples) == EXAMPLES:
                break
        out.append({"label": texts[0], "count": len(g), "examples": examples})
    return out


def period(since: str | None, until: str | None, today: date | None = None) -> tuple[date, date]:
    """The inclusive day range from ISO dates (default: the 30 days up to today, UTC). Raises
    ValueError for a bad date, a reversed range, one longer than 366 days or one off the calendar's
    ends (``date.min``, ``date.max``)."""
    today = today or datetime.now(timezone.utc).date()
    try:
        end = date.fromisoformat(until) if until else today
        start = date.fromisoformat(since) if since else end - timedelta(days=29)
    except ValueError:
        raise ValueError("'from' and 'to' must be ISO dates (YYYY-MM-DD).") from None
    except OverflowError:  # 30 days before 0001-01-01
        raise ValueError("The period must lie between 0001-01-01 and 9999-12-30 (without 'from' it starts 29 "
                         "days before 'to').") from None
    if end >= date.max:  # compute() counts up to the day after 'to'
        raise ValueError("The period must lie between 0001-01-01 and 9999-12-30.")
    if start > end:
        raise ValueError("'from' must not be after 'to'.")
    if (end - start).days > 366:
        raise ValueError("The period can be at most 366 days.")
    return start, end


def compute(conn, course_id: str, start: date, end: date, embed: Callable[[list[str]], np.ndarray],
            threshold: float = THRESHOLD) -> dict:
    """The course's insights for the days ``start``..``end`` (inclusive, UTC) from ``answers`` and
    ``feedback`` (see the module docstring for what each field holds)."""
    lo = datetime.combine(start, time.min, tzinfo=timezone.utc)
    hi = datetime.combine(end + timedelta(days=1), time.min, tzinfo=timezone.utc)
    q = store.insight_rows(conn, course_id, (lo, hi), (start, end), max_questions=MAX_QUESTIONS,
                           not_moments=NOT_MOMENTS)
    totals, rows, down, moments, days = q["totals"], q["questions"], q["thumbs_down"], q["moments"], q["days"]
    answered = [r["question"] for r in rows if not r["declined"]]
    declined = [r["question"] for r in rows if r["declined"]]
    near = partial(store.neighbours, conn)  # (vectors, threshold) -> neighbour matrix: pgvector in SQL or numpy
    return {
        "course_id": course_id, "from": start.isoformat(), "to": end.isoformat(),
        "questions": totals["n"], "declined": totals["declined"], "students": totals["students"],
        "grouping": {"method": f"greedy cosine clustering; neighbours by {store.grouping_method(conn)}",
                     "threshold": threshold},
        "topics": grouped(answered, embed, threshold, neighbours=near),
        "uncovered": grouped(declined, embed, threshold, neighbours=near),
        "thumbs_down": [{"question": r["question"], "answer": r["answer"], "comment": r["comment"],
                         "created_at": r["created_at"].isoformat()} for r in down],
        "top_moments": [{"lecture_id": r["lecture_id"], "lecture_number": r["number"], "lecture_title": r["title"],
                         "t_s": float(r["t"]), "label": citation_label(r["number"], float(r["t"])), "count": r["n"]}
                        for r in moments],
        "per_day": [{"date": r["day"].isoformat(), "questions": r["n"], "declined": r["declined"]} for r in days],
    }


class _SafeWriter:
    """A csv writer that defuses spreadsheet formulas in student text (a cell starting with
    ``= + - @`` or a tab/CR gets a leading apostrophe)."""

    def __init__(self, buf):
        self.w = csv.writer(buf)

    def writerow(self, row):
        self.w.writerow([("'" + c) if isinstance(c, str) and c[:1] in ("=", "+", "-", "@", "\t", "\r") else c
                         for c in row])


def to_csv(ins: dict) -> str:
    """The insights as one CSV table: ``section,label,count,lecture_number,t_s,detail`` (a
    ``checkpoint`` row: the chapter, the answers given at it, its lecture and end, the wrong ones
    and the question)."""
    buf = io.StringIO()
    w = _SafeWriter(buf)
    w.writerow(["section", "label", "count", "lecture_number", "t_s", "detail"])
    w.writerow(["summary", "questions", ins["questions"], "", "", f"{ins['from']} to {ins['to']}"])
    w.writerow(["summary", "declined", ins["declined"], "", "", ""])
    w.writerow(["summary", "students", ins["students"], "", "", "distinct askers (keyed hash)"])
    for section in ("topics", "uncovered"):
        for t in ins[section]:
            w.writerow([section, t["label"], t["count"], "", "", " | ".join(t["examples"])])
    for m in ins["top_moments"]:
        w.writerow(["top_moment", m["label"], m["count"], m["lecture_number"], m["t_s"], m["lecture_title"]])
    for d in ins["thumbs_down"]:
        w.writerow(["thumbs_down", d["question"], 1, "", "", d["comment"] or ""])
    for d in ins["per_day"]:
        w.writerow(["per_day", d["date"], d["questions"], "", "", f"declined {d['declined']}"])
    for c in ins.get("checkpoints", []):  # count: answers given at it; detail: the wrong ones, the question
        w.writerow(["checkpoint", c["chapter_title"], c["answered"], c["lecture_number"], c["at_s"],
                    f"wrong {c['wrong']}: {c['question']}"])
    return buf.getvalue()
