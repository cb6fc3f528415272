"""Chapters of a lecture (pure functions, times in seconds): where the topic shifts (TextTiling on the
segments' embeddings) and where slides change title, each chapter titled by its slide or its most
distinctive phrase and summarised by its most central sentences. ``python -m evals.chapters``
measures the boundaries against the lecturers' own chapters (Pk, WindowDiff, boundary F1)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from lecturecopilot.vocabulary import TITLE_STOP as _TITLE_STOP

from .core import Segment


@dataclass
class Chapter:
    """A stretch of the lecture on one topic: ``start_s``/``end_s`` in seconds, an extractive
    ``title`` and up to ``bullets`` summary sentences (lecture order)."""

    start_s: float
    end_s: float
    first_segment: int
    last_segment: int
    title: str
    bullets: list[str]


PER_CHAPTER_S = 600.0   # about one chapter per 10 minutes of a long lecture
SHORT_CHAPTERS = 3      # what a lecture under 30 minutes may have …
MIN_PER_CHAPTER_S = 120.0  # … never more than one per 2 minutes
BLOCK = 3               # segments (about 60 s each) on each side of a gap, TextTiling's block


def chapter_budget(duration_s: float) -> int:
    """How many chapters a lecture of ``duration_s`` seconds may have: about one per
    ``PER_CHAPTER_S`` (10 min), at least ``SHORT_CHAPTERS`` (3), never more than one per
    ``MIN_PER_CHAPTER_S`` (2 min): 1 for a 1-minute lecture, 2 for 4 minutes, 3 for 5 to 30, 6 for 53.
    A product choice, checked by ``python -m evals.chapters`` (MIT 6.006's lecturers cut their 53-minute
    lectures in 5–6); without a budget the gaps' depths alone gave 12 a lecture and a worse Pk than one chapter."""
    import math

    return max(1, min(math.ceil(duration_s / MIN_PER_CHAPTER_S), max(SHORT_CHAPTERS, math.ceil(duration_s / PER_CHAPTER_S))))


def chapter_boundaries(seg_vecs, *, min_segments: int = 3, depth_threshold: float = 0.1,
                       max_chapters: int | None = None, block: int = BLOCK) -> list[int]:
    """Indices of the segments that start a new chapter (0 always), TextTiling-style
    (Hearst, "TextTiling", Computational Linguistics 23(1), 1997): the gaps of :func:`gap_depths`,
    deepest first; a gap whose depth is at least ``depth_threshold`` starts a chapter, keeping
    chapters at least ``min_segments`` long, until there are ``max_chapters`` (no limit: None).

    ``seg_vecs``: array (n_segments, dim) of L2-normalised embeddings.
    """
    n = len(seg_vecs)
    if n < 2 * min_segments:
        return [0]
    depths = gap_depths(seg_vecs, block)
    starts = [0]
    for j in sorted(range(len(depths)), key=lambda j: -depths[j]):
        i = j + 1
        if depths[j] < depth_threshold or (max_chapters is not None and len(starts) >= max_chapters):
            break
        cand = sorted(starts + [i])
        bounds = cand + [n]
        if all(b - a >= min_segments for a, b in zip(bounds, bounds[1:])):
            starts = cand
    return starts


def gap_depths(seg_vecs, block: int = BLOCK) -> list[float]:
    """TextTiling depth (Hearst 1997) of each gap between segments: ``[j]`` for the gap before
    segment ``j + 1``, from the cosine of the mean embedding of up to ``block`` segments before and
    ``block`` after; deeper (how far the score dips below the highest on both sides) = a sharper topic
    shift. ``seg_vecs``: array (n_segments, dim). ``python -m evals.chapters``: blocks of 3 segments
    (about 3 minutes) found more of the lecturers' boundaries than 2 or 4 at every budget tried."""

    gaps = []
    for i in range(1, len(seg_vecs)):
        a = seg_vecs[max(0, i - block):i].mean(axis=0)
        b = seg_vecs[i:i + block].mean(axis=0)
        gaps.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-9)))
    return [(max(gaps[:j + 1]) - g) + (max(gaps[j:]) - g) for j, g in enumerate(gaps)]


def slide_boundaries(segments: Sequence[Segment], seg_vecs, starts: list[int],
                     slide_titles: Sequence[tuple[float, str]], *, budget: int, min_s: float = 30.0) -> list[int]:
    """``starts`` (chapter starts, segment indices) plus segments where a slide of a new title
    comes up — the lecturer's own sections, which a short lecture's few passages cannot show
    TextTiling — the sharpest topic shifts (:func:`gap_depths`) first, until the lecture has
    ``budget`` chapters (:func:`chapter_budget`), no chapter under ``min_s`` seconds."""
    def title_at(t: float) -> str:
        shown = [title for at, title in slide_titles if title and at <= t + 1.0]
        return shown[-1] if shown else ""

    cands = [i for i in range(1, len(segments))
             if title_at(segments[i].start_s) and title_at(segments[i].start_s) != title_at(segments[i - 1].start_s)]
    if not cands:
        return starts
    room = budget - len(starts)
    depths = gap_depths(seg_vecs)
    out = list(starts)
    for i in sorted(cands, key=lambda i: -depths[i - 1]):
        cand = sorted(set(out) | {i})
        times = [segments[k].start_s for k in cand] + [segments[-1].end_s]
        if room > 0 and i not in out and all(b - a >= min_s for a, b in zip(times, times[1:])):
            out, room = cand, room - 1
    return out


def chapter_title(text: str, course_df: dict[str, int], n_docs: int) -> str:
    """The chapter's most distinctive one- or two-word phrase (TF·IDF over the lecture's
    segments; a bigram counts 1.5× a single word), title-cased; a possessive counts as its owner
    ("Dijkstra's" as "Dijkstra"); contractions ("I'll", "we're") and classroom words never name a chapter. "Untitled" when nothing is left."""
    import math
    import re as _re

    # a possessive names its owner ("Dijkstra's algorithm" → "dijkstra"); other contractions stay out
    words = [_re.sub(r"'s$", "", w) for w in _re.findall(r"[a-z][a-z'-]+", text.lower())]
    scores: dict[str, float] = {}
    for i, w in enumerate(words):
        if w in _TITLE_STOP or len(w) < 3 or "'" in w:
            continue
        idf = math.log((n_docs + 1) / (course_df.get(w, 0) + 0.5))
        scores[w] = scores.get(w, 0.0) + idf
        if i + 1 < len(words) and words[i + 1] not in _TITLE_STOP and len(words[i + 1]) >= 3 and "'" not in words[i + 1]:
            bg = f"{w} {words[i + 1]}"
            idf2 = math.log((n_docs + 1) / (course_df.get(words[i + 1], 0) + 0.5))
            scores[bg] = scores.get(bg, 0.0) + 0.75 * (idf + idf2)
    if not scores:
        return "Untitled"
    best = max(scores, key=lambda k: scores[k])
    return " ".join(w[:1].upper() + w[1:] for w in best.split())


def slide_chapter_title(slide_titles: Sequence[tuple[float, str]], start_s: float, end_s: float,
                        said: str | None = None) -> str:
    """The title of the slide on screen for at least half of the stretch from ``start_s`` to ``end_s``
    (seconds); when none is, the first titled slide on screen in it (a lecture's or a section's first
    slide names what follows: an 85-second statistics lecture of five slides was titled by its last, the
    one up longest), passing over a title slide that names the lecture ("ECON 102 — Lecture 1"); "" when
    no titled slide is. ``slide_titles``: ``(second it appears, title)`` in time
    order; a slide stays up until the next one appears (one already up at ``start_s`` counts from there).
    The lecturer's own name for the stretch, spelt as on the slide: speech recognition may mishear it.
    With ``said`` (what is spoken in the stretch), a title none of whose words is said there is passed
    over (:func:`_title_said`): a name card left up for half a lecture ("Dr. Ada Okafor", a genetics and
    chemistry trial) names the lecturer, not what the stretch is about."""
    shown: dict[str, float] = {}  # in the order first shown
    for i, (t, title) in enumerate(slide_titles):
        until = slide_titles[i + 1][0] if i + 1 < len(slide_titles) else end_s
        seen = min(until, end_s) - max(t, start_s)
        if title and seen > 0 and (said is None or _title_said(title, said)):
            shown[title] = shown.get(title, 0.0) + seen
    if not shown:
        return ""
    longest = max(shown, key=lambda k: shown[k])
    if shown[longest] >= 0.5 * (end_s - start_s):
        return longest
    return next((t for t in shown if not _NAMES_A_LECTURE.search(t)), next(iter(shown)))


def _title_said(title: str, said: str) -> bool:
    """True when a word of ``title`` (3+ letters, not a very common English word) or a word of the same
    first five letters ("cascades" / "cascade") is in ``said``; True for a title of no such word."""
    words = [w for w in re.findall(r"[a-z][a-z'-]+", title.lower()) if len(w) >= 3 and w not in _TITLE_STOP]
    spoken = {w[:5] for w in re.findall(r"[a-z][a-z'-]+", said.lower())}
    return not words or any(w[:5] in spoken for w in words)


# A title slide's "ECON 102 — Lecture 1", "Week 3": it names the lecture, not a stretch of it (a trial's first
# chapter, five slides long, was titled so)
_NAMES_A_LECTURE = re.compile(r"\b(?:lecture|lec|week|session|class|module|unit|part)\s*(?:#|no\.?)?\s*\d+\b", re.I)


def make_chapters(segments: Sequence[Segment], seg_vecs, sent_vecs_by_segment: list, *, bullets: int = 3,
                  slide_titles: Sequence[tuple[float, str]] = ()) -> list[Chapter]:
    """Chapters of a lecture: topic boundaries (:func:`chapter_boundaries`, and where slides change
    title, :func:`slide_boundaries`), a title — the slide
    on screen longest in the chapter (:func:`slide_chapter_title`), else an extractive one
    (:func:`chapter_title`) — and the ``bullets`` sentences closest to the chapter's centroid (at
    least 6 words each, spoken ones: a slide's text only when nothing spoken qualifies), in lecture order. ``slide_titles``: ``(start_s, title)`` of the slides. A
    chapter ends where the next begins (two passages may share a sentence, two chapters share no second)."""
    import re as _re

    if not segments:
        return []
    budget = chapter_budget(segments[-1].end_s - segments[0].start_s)
    starts = slide_boundaries(segments, seg_vecs, chapter_boundaries(seg_vecs, max_chapters=budget), slide_titles,
                              budget=budget)
    df: dict[str, int] = {}
    for seg in segments:
        for w in set(_re.findall(r"[a-z][a-z'-]+", seg.text.lower())):
            df[w] = df.get(w, 0) + 1
    out = []
    bounds = starts + [len(segments)]
    for a, b in zip(bounds, bounds[1:]):
        text = " ".join(s.text for s in segments[a:b])
        centroid = seg_vecs[a:b].mean(axis=0)
        cands = []
        for si in range(a, b):
            for sent, vec in zip(segments[si].sentences, sent_vecs_by_segment[si]):
                if len(sent.text.split()) >= 6 and not sent.text.endswith("?"):
                    cands.append((float(vec @ centroid), sent))
        # what was said sums a chapter up; a slide's "Title: item; item" only when nothing was
        cands = [c for c in cands if c[1].kind != "slide"] or cands
        cands.sort(key=lambda x: -x[0])
        chosen = sorted((s for _, s in cands[:bullets]), key=lambda s: s.start_s)
        end_s = min(segments[b - 1].end_s, segments[b].start_s) if b < len(segments) else segments[b - 1].end_s
        said = " ".join(s.text for seg in segments[a:b] for s in seg.sentences if s.kind != "slide")
        title = (slide_chapter_title(slide_titles, segments[a].start_s, end_s, said)
                 or chapter_title(text, df, len(segments)))
        out.append(Chapter(segments[a].start_s, end_s, a, b - 1, title, [s.text for s in chosen]))
    return out
