"""Cutting a transcript into sentences and segments (pure functions, times in seconds).

A *sentence* ends at a word ending in ``.``, ``?`` or ``!`` (or at a pause / length cap when
the transcript has no punctuation). A *segment* is a run of whole sentences of about
60–90 s: it closes at the first sentence end at or after ``target_s`` (60 s), and never
grows past ``max_s`` (90 s) unless one sentence alone is longer, which is then cut by words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence


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


def make_segments(sentences: Sequence[Sentence], *, target_s: float = 60.0, max_s: float = 90.0,
                  min_tail_s: float = 20.0) -> list[Segment]:
    """Groups sentences into segments of about ``target_s``..``max_s`` seconds (see module doc).

    A last segment shorter than ``min_tail_s`` joins the previous one when the result stays
    within ``max_s``. Every segment is at most ``max_s`` long.
    """
    flat: list[Sentence] = []
    for s in sentences:
        flat.extend(_cut_long(s, max_s) if s.end_s - s.start_s > max_s and s.words else [s])
    segments: list[Segment] = []
    cur: list[Sentence] = []
    for s in flat:
        if cur and s.end_s - cur[0].start_s > max_s:
            segments.append(Segment(cur[0].start_s, cur[-1].end_s, cur))
            cur = []
        cur.append(s)
        if cur[-1].end_s - cur[0].start_s >= target_s:
            segments.append(Segment(cur[0].start_s, cur[-1].end_s, cur))
            cur = []
    if cur:
        tail = Segment(cur[0].start_s, cur[-1].end_s, cur)
        if (segments and tail.end_s - tail.start_s < min_tail_s
                and tail.end_s - segments[-1].start_s <= max_s):
            prev = segments[-1]
            segments[-1] = Segment(prev.start_s, tail.end_s, prev.sentences + tail.sentences)
        else:
            segments.append(tail)
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
