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
without the slide rule (``docs/experiments.md``): search recall@1 0.966 → 0.983 with both voices, covered
questions answered in their part 0.915 → 0.966 (espeak-ng) and 0.949 → 0.932 (Piper).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from lecturecopilot.slidetext import denoise_slide


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
    transcript, with better times); when it is the first under its title ("Title: …", another title
    than the slide before's) its title stays, as a slide of that title alone: it marks where the
    lecturer's section starts, where a passage is cut (a genetics trial's build slide "Punnett
    squares: …" was read aloud and dropped, so its section began 8 s late, on its second bullet). A
    slide starting at the same second as a spoken sentence comes after it.
    """
    cleaned = [(float(t), denoise_slide(text or "")) for t, text in slides]
    titles = [text.split(": ", 1)[0] if ": " in text else "" for _, text in cleaned]
    extra = []
    for k, (t, text) in enumerate(cleaned):
        if text and not _said_nearby(text, t, sentences, near_s):
            extra.append(Sentence(t, t + span_s, text, kind="slide"))
        elif text and titles[k] and titles[k] != (titles[k - 1] if k else ""):
            extra.append(Sentence(t, t + span_s, titles[k] + ".", kind="slide"))
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
    current one already spans ``min_tail_s``; a sentence said mostly after the slide appears (its
    midpoint at or after the slide's time) goes with the slide: the slide's second is a frame sample
    and a recogniser's first word time is often a few tenths early, so "The second rule is
    Kirchhoff's voltage law" said from 24.8 s under a slide found at 25.0 s was the end of the
    passage before (a circuits trial). With ``vecs`` (one embedding per sentence), a
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
            keep = len(cur)  # speech said mostly after the slide appears belongs with the slide
            while keep > 1 and flat[cur[keep - 1]].start_s + flat[cur[keep - 1]].end_s >= 2 * s.start_s:
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
