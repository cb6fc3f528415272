"""The course's own vocabulary for speech recognition: how the slides and titles spell its terms.

Speech recognition mishears exactly the words a lecture is about ("binary heaps" → "minor
repeats", "max heap" → "max -keep"), while the slide on screen spells them right. Whisper decodes
each ~30 s window conditioned on a text prompt, and follows its spelling and vocabulary (OpenAI,
"Whisper prompting guide": the prompt helps with "words or acronyms the model may misrecognize";
faster-whisper's ``initial_prompt``). So every window is decoded with a prompt made of what the
course shows *around that moment*: the lecture's title, the text of the slides on screen during the
window (and the one just before), and, when there is room, distinctive terms of the course's other
lectures' slides. A window with nothing to say gets no prompt (plain decoding).

Only spelled text goes in (OCR'd slides, titles typed by the instructor), never an earlier
transcript: a misrecognition fed back as a prompt would be repeated everywhere. And a line of prose on a
slide (see :func:`prompt_text`) goes in only by its rare terms: Whisper takes its prompt as the text
spoken *before* the window, so a sentence the lecturer is about to read aloud from the slide, given
whole, is taken as already said and skipped (found on the demo lecture, whose slides quote its
narration: its first sentence was missing from the transcript).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import wordfreq

from lecturecopilot.slidetext import denoise_slide, strip_bullet

# Whisper's prompt holds at most 223 tokens (n_text_ctx // 2 - 1, openai/whisper decoding.py); English
# text runs at about 4 characters a token, and a prompt of a few sentences is what the model was
# trained to continue, so prompts are kept well under the cap.
MAX_PROMPT_CHARS = 480
RARE_ZIPF = 3.5  # wordfreq Zipf below this: under ~3 uses per million English words ("heap" 3.3, "trie" 1.9)
# A slide line is prose (a sentence one may read aloud), not a title, bullet or formula, when it has at least
# PROSE_MIN_WORDS words and most of them (PROSE_COMMON_SHARE) are everyday English (Zipf >= COMMON_ZIPF:
# "if", "have", "here", "these"). The benchmark's bullets ("Bloom filter (Burton Bloom, 1970): bit array of m
# bits + k hash functions", "Rolling hash: window as a number in some base, O(1) update per shift") stay whole.
PROSE_MIN_WORDS = 8
PROSE_COMMON_SHARE = 0.7
COMMON_ZIPF = 5.0


@dataclass(frozen=True)
class SlideText:
    """One slide's text on screen from ``start_s`` to ``end_s`` (seconds): its lines, newline-separated
    (:func:`prompt_text` judges each line on its own)."""

    start_s: float
    end_s: float
    text: str

    @classmethod
    def from_lines(cls, start_s: float, end_s: float, lines: Sequence[str]) -> "SlideText":
        """A slide from its OCR'd lines, each without OCR debris (:func:`denoise_slide`) and kept a line
        of its own: a prose line then gives only its rare terms while the slide's title and bullets
        go in whole (one joined sentence would be judged as one line)."""
        kept = [d for d in (denoise_slide(ln) for ln in lines) if d]
        return cls(start_s, end_s, "\n".join(kept))


@dataclass
class Vocabulary:
    """What the course spells, for prompting the recognizer window by window.

    ``titles``: the lecture's (and course's) titles; ``slides``: this lecture's slides in time
    order; ``course_terms``: distinctive words of the course's other lectures' slides, most
    frequent first (see :func:`course_terms`).
    """

    titles: list[str] = field(default_factory=list)
    slides: list[SlideText] = field(default_factory=list)
    course_terms: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.titles or self.slides or self.course_terms)

    def prompt(self, start_s: float, end_s: float, max_chars: int = MAX_PROMPT_CHARS) -> str | None:
        """The prompt for the window ``start_s``..``end_s`` (seconds): titles, then the slides on
        screen in the window (and the last one before it), then course terms, as short sentences,
        cut at ``max_chars``; None when there is nothing."""
        on_screen = [prompt_text(s.text) for s in self.slides if s.start_s < end_s and s.end_s > start_s]
        before = [prompt_text(s.text) for s in self.slides if s.end_s <= start_s][-1:]
        parts = _dedupe([*self.titles, *before, *on_screen])
        out = ". ".join(p.rstrip(".:;, ") for p in parts if p.strip())
        terms = [t for t in self.course_terms if t.lower() not in out.lower()]
        if terms and len(out) < max_chars - 20:
            out = (out + ". " if out else "") + ", ".join(terms)
        out = out[:max_chars].rsplit(" ", 1)[0] if len(out) > max_chars else out
        return (out.strip() + ".") if out.strip() else None


def is_prose(line: str) -> bool:
    """True for a slide line that reads as a sentence (see ``PROSE_MIN_WORDS``, ``PROSE_COMMON_SHARE``)."""
    words = _WORD.findall(line)
    if len(words) < PROSE_MIN_WORDS:
        return False
    common = sum(wordfreq.zipf_frequency(w.lower(), "en") >= COMMON_ZIPF for w in words)
    return common >= PROSE_COMMON_SHARE * len(words)


def prompt_text(slide_text: str) -> str:
    """What of a slide's text (lines separated by newlines) goes into a prompt: every line without
    its list marker (:func:`lecturecopilot.slidetext.strip_bullet`), except a line of prose
    (:func:`is_prose`), which gives only its rare terms (:func:`course_terms`); the lines that are
    left, newline-separated ("" when none)."""
    out: list[str] = []
    for raw in slide_text.splitlines():
        line = strip_bullet(raw)[1]  # a list marker is layout: Whisper copies a "•" of its prompt into the text
        if is_prose(line):
            out.extend(course_terms([line], limit=8))
        elif line:
            out.append(line)
    return "\n".join(out)


def _dedupe(items: Sequence[str]) -> list[str]:
    seen, out = set(), []
    for it in items:
        key = " ".join(it.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(" ".join(it.split()))
    return out


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")


def distinctive(word: str, rare_zipf: float = RARE_ZIPF) -> bool:
    """True for a word a slide spells that speech recognition may not know: at least 3 letters, and
    rare in English (wordfreq Zipf < ``rare_zipf``) or written with a capital or hyphen inside
    ("RuBisCO", "Bellman-Ford", "McCreight")."""
    if len(word) < 3:
        return False
    inner_caps = any(c.isupper() for c in word[1:]) or "-" in word
    return inner_caps or wordfreq.zipf_frequency(word.lower(), "en") < rare_zipf


def course_terms(texts: Sequence[str], *, limit: int = 30, rare_zipf: float = RARE_ZIPF) -> list[str]:
    """Distinctive words of ``texts`` (the course's other slides and lecture titles,
    :func:`distinctive`), most frequent first, at most ``limit``,
    in the spelling seen most often."""
    counts: dict[str, int] = {}
    spelled: dict[str, dict[str, int]] = {}
    for text in texts:
        for w in _WORD.findall(text or ""):
            key = w.lower()
            if not distinctive(w, rare_zipf):
                continue
            counts[key] = counts.get(key, 0) + 1
            spelled.setdefault(key, {})
            spelled[key][w] = spelled[key].get(w, 0) + 1
    best = sorted(counts, key=lambda k: (-counts[k], k))[:limit]
    return [max(spelled[k], key=lambda s: (spelled[k][s], s)) for k in best]
