"""Cutting a transcript into sentences and segments (pure functions, times in seconds).

A *sentence* ends at a word ending in ``.``, ``?`` or ``!`` (or at a pause / length cap when
the transcript has no punctuation). A *segment* is a run of whole sentences of at most
``max_s`` (90 s; a longer sentence is cut by words). The index passes the sentences' embeddings:
a segment then closes, when the next sentence would take it past 90 s, at the gap between 40 and
90 s where the topic shifts most (:func:`gap_similarity`); without them (tests, tools) it closes at
the first sentence end at or after ``target_s`` (60 s). A new slide is a topic shift too: it closes
the segment before it once that segment is at least ``min_tail_s`` (20 s) long, so a passage is
about one slide rather than the end of one and the start of the next (slide transitions as topic
boundaries, as in lecture video segmentation by slide transition detection, e.g. Haubold & Kender,
ICME 2005). A slide that appears while a sentence is under way leaves that sentence in the segment
before it, so two segments may overlap by up to one sentence. ``python -m evals.robustness`` with and
without the slide rule (``evals/README.md``): search recall@1 0.966 → 0.983 with both voices, covered
questions answered in their part 0.915 → 0.966 (espeak-ng) and 0.949 → 0.932 (Piper).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from lecturecopilot.slidetext import denoise_slide
from lecturecopilot.vocabulary import TITLE_STOP as _TITLE_STOP


@dataclass(frozen=True)
class TimedWord:
    start_s: float
    end_s: float
    word: str


@dataclass
class Sentence:
    start_s: float
    end_s: float
    text: str
    words: list[TimedWord] = field(default_factory=list, repr=False)
    kind: str = "speech"  # or "slide": a slide's text, shown at the second the slide appears


@dataclass
class Segment:
    start_s: float
    end_s: float
    sentences: list[Sentence]

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)


_END = (".", "?", "!")


def split_sentences(words: Sequence[TimedWord], *, max_sentence_s: float = 30.0,
                    pause_s: float = 1.5) -> list[Sentence]:
    """Groups words into sentences. Without punctuation, a pause of ``pause_s`` or a length of
    ``max_sentence_s`` ends a sentence (caption files often lack punctuation)."""
    sentences: list[Sentence] = []
    cur: list[TimedWord] = []

    def close() -> None:
        if cur:
            sentences.append(Sentence(cur[0].start_s, cur[-1].end_s, " ".join(w.word for w in cur), list(cur)))
            cur.clear()

    for i, w in enumerate(words):
        if cur:
            gap = w.start_s - cur[-1].end_s
            if gap >= pause_s and not cur[-1].word.endswith((",",)) or w.end_s - cur[0].start_s > max_sentence_s:
                close()
        cur.append(w)
        if w.word.endswith(_END) or w.word.endswith(tuple(p + '"' for p in _END)):
            close()
    close()
    return sentences


def _cut_long(sentence: Sentence, max_s: float) -> list[Sentence]:
    parts: list[Sentence] = []
    cur: list[TimedWord] = []
    for w in sentence.words:
        if cur and w.end_s - cur[0].start_s > max_s:
            parts.append(Sentence(cur[0].start_s, cur[-1].end_s, " ".join(x.word for x in cur), list(cur)))
            cur = []
        cur.append(w)
    if cur:
        parts.append(Sentence(cur[0].start_s, cur[-1].end_s, " ".join(x.word for x in cur), list(cur)))
    return parts


def _end(sentences: Sequence[Sentence]) -> float:
    return max(s.end_s for s in sentences)


def merge_slides(sentences: Sequence[Sentence], slides: Sequence[tuple[float, str]], *,
                 span_s: float = 1.0, near_s: float = 60.0) -> list[Sentence]:
    """Spoken sentences plus one sentence per slide, in time order.

    ``slides`` are ``(start_s, text)`` of slides as they appear; each becomes a sentence from
    ``start_s`` to ``start_s + span_s`` (it has no words, so a citation of it lands on the
    second the slide appears). OCR noise is removed from the slide's text (:func:`denoise_slide`,
    which judges the text itself, never by what the lecture is heard to say: the words speech
    recognition gets wrong are the very ones the slide spells right); an empty slide is dropped, and
    so is a slide the lecturer reads aloud within ``near_s`` seconds (its words are already in the
    transcript, with better times). A slide starting at the same second as a spoken sentence comes
    after it.
    """
    cleaned = [(float(t), denoise_slide(text or "")) for t, text in slides]
    extra = [Sentence(t, t + span_s, text, kind="slide") for t, text in cleaned
             if text and not _said_nearby(text, t, sentences, near_s)]
    return sorted([*sentences, *extra], key=lambda s: (s.start_s, not s.words))


def _said_nearby(slide: str, t_s: float, sentences: Sequence[Sentence], near_s: float) -> bool:
    """True when the slide's text is spoken almost word for word within ``near_s`` seconds (a
    lecturer reading the slide aloud): rapidfuzz ``partial_ratio`` ≥ 90 of the body (the text after
    a "Title:" prefix) against one spoken sentence or two consecutive ones."""
    from rapidfuzz import fuzz

    body = slide.split(": ", 1)[-1].strip().lower()
    if len(body.split()) < 4:
        return False
    near = [s.text.lower() for s in sentences if abs(s.start_s - t_s) <= near_s]
    pairs = near + [a + " " + b for a, b in zip(near, near[1:])]
    return any(fuzz.partial_ratio(body, p) >= 90 for p in pairs if len(p) >= 0.8 * len(body))


def gap_similarity(vecs, block: int = 3) -> list[float]:
    """``sim[p]``: cosine between the mean of the ``block`` sentence vectors ending at sentence ``p``
    and the mean of the ``block`` starting at ``p + 1`` — TextTiling's block comparison (Hearst,
    Computational Linguistics 23(1), 1997) on sentence embeddings; low means the topic shifts after
    ``p``. ``vecs``: (sentences × dim); the last gap is 1.0."""
    import numpy as np

    v = np.asarray(vecs, dtype="float64")
    out = []
    for p in range(len(v)):
        if p + 1 >= len(v):
            out.append(1.0)
            continue
        a, b = v[max(0, p - block + 1):p + 1].mean(axis=0), v[p + 1:p + 1 + block].mean(axis=0)
        out.append(float(a @ b / ((np.linalg.norm(a) * np.linalg.norm(b)) or 1.0)))
    return out


def make_segments(sentences: Sequence[Sentence], *, target_s: float = 60.0, max_s: float = 90.0,
                  min_tail_s: float = 20.0, vecs=None, min_s: float = 40.0) -> list[Segment]:
    """Groups sentences into segments of about ``target_s``..``max_s`` seconds (see module doc).

    A slide sentence (``kind == "slide"``: a new slide appears) starts a new segment when the
    current one already spans ``min_tail_s``. With ``vecs`` (one embedding per sentence), a
    segment is not closed at ``target_s`` but when it would pass ``max_s``, at the gap between
    ``min_s`` and ``max_s`` where the topic shifts most (:func:`gap_similarity` lowest; of equal
    ones, the cut nearest ``target_s``). A last segment shorter than ``min_tail_s`` joins the
    previous one when the result stays within ``max_s``. Every segment is at most ``max_s`` long
    unless a single word is (a sentence longer than ``max_s`` is cut by words).
    """
    flat: list[Sentence] = []
    owner: list[int] = []
    for k, s in enumerate(sentences):
        parts = _cut_long(s, max_s) if s.end_s - s.start_s > max_s and s.words else [s]
        flat.extend(parts)
        owner.extend([k] * len(parts))
    sims = None if vecs is None or not len(flat) else gap_similarity([vecs[k] for k in owner])
    segments: list[Segment] = []
    cur: list[int] = []  # indices into flat

    def emit(ids: list[int]) -> None:
        sents = [flat[i] for i in ids]
        segments.append(Segment(sents[0].start_s, _end(sents), sents))

    for idx, s in enumerate(flat):
        if cur and s.kind == "slide" and s.start_s - flat[cur[0]].start_s >= min_tail_s:
            keep = len(cur)  # speech starting at the slide's second belongs with the slide
            while keep > 1 and flat[cur[keep - 1]].start_s >= s.start_s:
                keep -= 1
            emit(cur[:keep])
            cur = cur[keep:]
        while cur and s.end_s - flat[cur[0]].start_s > max_s:
            cut = len(cur)
            if sims is not None:
                ok = [m for m in range(1, len(cur) + 1) if flat[cur[m - 1]].end_s - flat[cur[0]].start_s >= min_s]
                cut = min(ok, default=cut, key=lambda m: (
                    sims[cur[m - 1]], abs(flat[cur[m - 1]].end_s - flat[cur[0]].start_s - target_s)))
            emit(cur[:cut])
            cur = cur[cut:]
        cur.append(idx)
        if sims is None and flat[cur[-1]].end_s - flat[cur[0]].start_s >= target_s:
            emit(cur)
            cur = []
    if cur:
        tail = [flat[i] for i in cur]
        if (segments and _end(tail) - tail[0].start_s < min_tail_s
                and _end(tail) - segments[-1].start_s <= max_s):
            prev = segments[-1]
            segments[-1] = Segment(prev.start_s, max(prev.end_s, _end(tail)), prev.sentences + tail)
        else:
            segments.append(Segment(tail[0].start_s, _end(tail), tail))
    return segments


@dataclass
class SubChunk:
    """About ``target_s`` seconds of whole sentences inside one segment."""

    segment_idx: int
    start_s: float
    end_s: float
    text: str


def make_subchunks(segments: Sequence[Segment], *, target_s: float = 20.0) -> list[SubChunk]:
    """Cuts every segment into runs of whole sentences of about ``target_s`` seconds: a run
    closes at the first sentence end at or after ``target_s``; a short last run (under half
    of ``target_s``) joins the previous run of the same segment."""
    out: list[SubChunk] = []
    for si, seg in enumerate(segments):
        runs: list[list[Sentence]] = []
        cur: list[Sentence] = []
        for s in seg.sentences:
            cur.append(s)
            if cur[-1].end_s - cur[0].start_s >= target_s:
                runs.append(cur)
                cur = []
        if cur:
            if runs and cur[-1].end_s - cur[0].start_s < target_s / 2:
                runs[-1] = runs[-1] + cur
            else:
                runs.append(cur)
        out.extend(SubChunk(si, r[0].start_s, r[-1].end_s, " ".join(x.text for x in r)) for r in runs)
    return out


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


def chapter_boundaries(seg_vecs, *, min_segments: int = 3, depth_threshold: float = 0.1) -> list[int]:
    """Indices of the segments that start a new chapter (0 always), TextTiling-style
    (Hearst, "TextTiling", Computational Linguistics 23(1), 1997): the gap score between
    segment i-1 and i is the cosine of the mean embedding of up to 2 segments before and 2 after;
    a gap whose depth (how far it dips below the highest scores on both sides) is at least
    ``depth_threshold`` starts a chapter, keeping chapters at least ``min_segments`` long.

    ``seg_vecs``: array (n_segments, dim) of L2-normalised embeddings.
    """
    n = len(seg_vecs)
    if n < 2 * min_segments:
        return [0]
    depths = gap_depths(seg_vecs)
    starts = [0]
    for j in sorted(range(len(depths)), key=lambda j: -depths[j]):
        i = j + 1
        if depths[j] < depth_threshold:
            break
        cand = sorted(starts + [i])
        bounds = cand + [n]
        if all(b - a >= min_segments for a, b in zip(bounds, bounds[1:])):
            starts = cand
    return starts


def gap_depths(seg_vecs) -> list[float]:
    """TextTiling depth (Hearst 1997) of each gap between segments: ``[j]`` for the gap before
    segment ``j + 1``, from the cosine of the mean embedding of up to 2 segments before and 2 after;
    deeper = a sharper topic shift. ``seg_vecs``: array (n_segments, dim)."""
    import numpy as np

    gaps = []
    for i in range(1, len(seg_vecs)):
        a = seg_vecs[max(0, i - 2):i].mean(axis=0)
        b = seg_vecs[i:i + 2].mean(axis=0)
        gaps.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-9)))
    return [(max(gaps[:j + 1]) - g) + (max(gaps[j:]) - g) for j, g in enumerate(gaps)]


def slide_boundaries(segments: Sequence[Segment], seg_vecs, starts: list[int],
                     slide_titles: Sequence[tuple[float, str]], *, per_s: float = 120.0,
                     min_s: float = 30.0) -> list[int]:
    """``starts`` (chapter starts, segment indices) plus segments where a slide of a new title
    comes up — the lecturer's own sections, which a short lecture's few passages cannot show
    TextTiling — the sharpest topic shifts (:func:`gap_depths`) first, up to one chapter per
    ``per_s`` seconds of lecture (a product choice, not fitted), no chapter under ``min_s``."""
    import math

    def title_at(t: float) -> str:
        shown = [title for at, title in slide_titles if title and at <= t + 1.0]
        return shown[-1] if shown else ""

    cands = [i for i in range(1, len(segments))
             if title_at(segments[i].start_s) and title_at(segments[i].start_s) != title_at(segments[i - 1].start_s)]
    if not cands:
        return starts
    room = math.ceil((segments[-1].end_s - segments[0].start_s) / per_s) - len(starts)
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


def slide_chapter_title(slide_titles: Sequence[tuple[float, str]], start_s: float, end_s: float) -> str:
    """The title of the slide on screen longest between ``start_s`` and ``end_s`` (seconds), ""
    when no titled slide is. ``slide_titles``: ``(second it appears, title)`` in time order; a slide
    stays up until the next one appears (one already up at ``start_s`` counts from there). The
    lecturer's own name for the stretch, spelt as on the slide: speech recognition may mishear it."""
    shown: dict[str, float] = {}
    for i, (t, title) in enumerate(slide_titles):
        until = slide_titles[i + 1][0] if i + 1 < len(slide_titles) else end_s
        seen = min(until, end_s) - max(t, start_s)
        if title and seen > 0:
            shown[title] = shown.get(title, 0.0) + seen
    return max(shown, key=lambda k: shown[k]) if shown else ""


def make_chapters(segments: Sequence[Segment], seg_vecs, sent_vecs_by_segment: list, *, bullets: int = 3,
                  slide_titles: Sequence[tuple[float, str]] = ()) -> list[Chapter]:
    """Chapters of a lecture: topic boundaries (:func:`chapter_boundaries`, and where slides change
    title, :func:`slide_boundaries`), a title — the slide
    on screen longest in the chapter (:func:`slide_chapter_title`), else an extractive one
    (:func:`chapter_title`) — and the ``bullets`` sentences closest to the chapter's centroid (at
    least 6 words each), in lecture order. ``slide_titles``: ``(start_s, title)`` of the slides."""
    import re as _re

    if not segments:
        return []
    starts = slide_boundaries(segments, seg_vecs, chapter_boundaries(seg_vecs), slide_titles)
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
        cands.sort(key=lambda x: -x[0])
        chosen = sorted((s for _, s in cands[:bullets]), key=lambda s: s.start_s)
        title = (slide_chapter_title(slide_titles, segments[a].start_s, segments[b - 1].end_s)
                 or chapter_title(text, df, len(segments)))
        out.append(Chapter(segments[a].start_s, segments[b - 1].end_s, a, b - 1, title, [s.text for s in chosen]))
    return out
