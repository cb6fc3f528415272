"""Captions out: a lecture's stored sentences (and words) as WebVTT or SRT, written by webvtt-py.

Pure functions, times in seconds. :func:`build_cues` turns sentences into cues, :func:`to_vtt` and
:func:`to_srt` write them, :func:`download_name` names the file.

- **Speech**: one cue per sentence; a sentence longer than two lines of :data:`LINE_CHARS`
  characters or :data:`MAX_CUE_S` seconds is cut into several cues between words, at the words'
  own times when the transcript's words are given (else its duration is spread over its words by
  length, as for uploaded captions). A sentence's cues follow each other without a gap.
- **Slides**: a slide's text becomes a cue of its own, ``[Slide] Title: text``, from the second the
  slide appears for :data:`SLIDE_CUE_S` seconds (less when the next slide comes sooner), at most
  two lines (cut with "…": the slide itself is on screen). In WebVTT it sits at the top of the
  picture (``line:0``), so a player shows it above the speech cue at the bottom; SRT has no
  positions, so players stack both at the bottom.
- **Text**: whitespace (line breaks, blank lines, runs of spaces, control characters) becomes one
  space and the ends are trimmed. WebVTT escapes ``&``, ``<`` and ``>`` as character references
  (``-->`` is written ``--&gt;``), as the format requires, and players show the characters. SRT has
  no escapes, so its text is plain ("Q&A", "a --> b", "i < n" as they are: ffmpeg, hence mpv, shows
  them so), except what a reader would take for markup or a cue start: ``<`` on a line with a later
  ``>`` (a tag, which webvtt-py drops and players format) becomes ``&lt;``, and ``-->`` after a line of
  only digits or in a line that starts like a time (``00:00:09,000 --> …``, which ffmpeg takes for a
  timing line) becomes ``--&gt;`` (ffmpeg shows these two references as written).
  A word joiner (U+2060, invisible) follows a backslash before ``N``, ``n`` or ``h`` in both formats and,
  in SRT, a ``{`` that opens ``{\\…}`` or ``{c:…}``: ffmpeg (hence mpv) would show a line break or a
  hard space, apply an ASS override (``{\\an8}`` moves the cue) or drop the text in the braces.
"""

from __future__ import annotations

import bisect
import html
import io
import re
import textwrap
import unicodedata
from dataclasses import dataclass
from typing import Callable, Sequence

from lecturecopilot.captions import SLIDE_MARK, Word  # SLIDE_MARK: a slide cue, read back as no speech

LINE_CHARS = 42  # characters per caption line (the usual broadcast and streaming limit)
MAX_LINES = 2
MAX_CUE_S = 7.0  # longest a speech cue stays up
MIN_CUE_S = 0.5  # shortest a speech cue is shown, unless the next cue starts sooner
SLIDE_CUE_S = 4.0  # how long a slide's cue is shown
SLIDE_SETTINGS = "line:0"  # WebVTT: the top of the picture


@dataclass(frozen=True)
class Line:
    """A stored sentence: ``start_s``/``end_s`` in seconds, its ``text``, ``kind`` "speech" or "slide"."""

    start_s: float
    end_s: float
    text: str
    kind: str = "speech"


@dataclass(frozen=True)
class Cue:
    """One caption cue: times in seconds (rounded to milliseconds), the ``lines`` shown (plain
    text, at most :data:`MAX_LINES`), ``slide`` True for a slide's cue."""

    start_s: float
    end_s: float
    lines: tuple[str, ...]
    slide: bool = False


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def clean_text(text: str) -> str:
    """``text`` with control characters and runs of whitespace as one space, the ends trimmed."""
    return " ".join(_CONTROL.sub(" ", text).split())


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, LINE_CHARS, break_long_words=False, break_on_hyphens=False)


def _spread(line: Line, tokens: list[str]) -> list[Word]:
    """The sentence's duration spread over its tokens by length (no word times known)."""
    total = sum(len(t) + 1 for t in tokens)
    span = max(line.end_s - line.start_s, 0.0)
    out, t = [], line.start_s
    for tok in tokens:
        d = span * (len(tok) + 1) / total
        out.append(Word(t, t + d, tok))
        t += d
    return out


def _timed_words(lines: Sequence[Line], words: Sequence[Word]) -> list[list[Word] | None]:
    """For each speech line, its words with their times: the next words of ``words`` when they
    spell the line's text (the index builds sentences from them in order), else the words that
    start at the line's start and spell it; None when none do (and for slides)."""
    starts = [w.start_s for w in words]
    out: list[list[Word] | None] = []
    i = 0
    for ln in lines:
        toks = clean_text(ln.text).split()
        if ln.kind == "slide" or not toks:
            out.append(None)
            continue
        found = None
        for j in (i, bisect.bisect_left(starts, ln.start_s - 0.0005)):
            chunk = list(words[j:j + len(toks)])
            if [w.word for w in chunk] == toks:
                found, i = chunk, j + len(toks)
                break
        out.append(found)
    return out


def _speech_cues(line: Line, timed: list[Word]) -> list[Cue]:
    """One sentence as cues of at most two lines and :data:`MAX_CUE_S` seconds, cut between words."""
    groups: list[list[Word]] = []
    cur: list[Word] = []
    for w in timed:
        if cur and (len(_wrap(" ".join(x.word for x in cur + [w]))) > MAX_LINES
                    or w.end_s - cur[0].start_s > MAX_CUE_S):
            groups.append(cur)
            cur = []
        cur.append(w)
    if cur:
        groups.append(cur)
    cues = []
    for k, g in enumerate(groups):
        end = groups[k + 1][0].start_s if k + 1 < len(groups) else g[-1].end_s  # no gap inside a sentence
        cues.append(Cue(g[0].start_s, end, tuple(_wrap(" ".join(x.word for x in g)))))
    return cues


def _slide_lines(text: str) -> tuple[str, ...]:
    lines = _wrap(f"{SLIDE_MARK} {text}")
    if len(lines) <= MAX_LINES:
        return tuple(lines)
    last = textwrap.shorten(" ".join(lines[MAX_LINES - 1:]), LINE_CHARS, placeholder=" …")
    return (*lines[:MAX_LINES - 1], last)


def _ms(t: float) -> float:
    return round(max(float(t), 0.0), 3)


def build_cues(lines: Sequence[Line], words: Sequence[Word] = ()) -> list[Cue]:
    """The cues of a lecture from its stored sentences in order (``words``: the transcript's words
    in order, optional, to cut long sentences at their real times). See the module doc for the rules.

    Returns cues sorted by start (then speech before slides), each with ``end_s > start_s``; lines
    with no text are skipped. Times are rounded to milliseconds.
    """
    timed = _timed_words(lines, words)
    speech: list[Cue] = []
    slides: list[Line] = []
    for ln, tw in zip(lines, timed):
        text = clean_text(ln.text)
        if not text:
            continue
        if ln.kind == "slide":
            slides.append(Line(ln.start_s, ln.end_s, text, "slide"))
        else:
            speech.extend(_speech_cues(ln, tw or _spread(ln, text.split())))
    speech.sort(key=lambda c: c.start_s)
    out: list[Cue] = []
    for k, c in enumerate(speech):
        start = _ms(c.start_s)
        nxt = _ms(speech[k + 1].start_s) if k + 1 < len(speech) else float("inf")
        end = _ms(max(c.end_s, min(c.start_s + MIN_CUE_S, nxt)))
        out.append(Cue(start, end if end > start else round(start + 0.001, 3), c.lines))
    for k, s in enumerate(slides):
        start = _ms(s.start_s)
        nxt = _ms(slides[k + 1].start_s) if k + 1 < len(slides) else float("inf")
        end = _ms(min(s.start_s + SLIDE_CUE_S, nxt))
        out.append(Cue(start, end if end > start else round(start + 1.0, 3), _slide_lines(s.text), slide=True))
    return sorted(out, key=lambda c: (c.start_s, c.slide))


def _captions(cues: Sequence[Cue], escape: Callable[[str, str], str]) -> list:
    from webvtt import Caption
    from webvtt.models import Timestamp

    out = []
    for c in cues:
        text = [escape(x, before) for x, before in zip(c.lines, ("", *c.lines))]
        cap = Caption(text=text, settings=SLIDE_SETTINGS if c.slide else None)
        cap.start_time, cap.end_time = Timestamp.from_seconds(c.start_s), Timestamp.from_seconds(c.end_s)
        out.append(cap)
    return out


WORD_JOINER = "\u2060"  # invisible; breaks up what ffmpeg would read as markup
# "\N", "\n", "\h" in the text: a line break or hard space once ffmpeg turns either format into ASS (mpv)
_ASS_ESCAPE = re.compile(r"\\(?=[Nnh])")
# "{\an8}", "{\b1}", "{c: 3}" (ASS overrides, MicroDVD styles): ffmpeg's SRT reader applies or drops them
_SRT_BRACE = re.compile(r"\{(?=\\|[CcFfoPSsYy]:)")


def _joined(pattern: re.Pattern, line: str) -> str:
    return pattern.sub(lambda m: m.group(0) + WORD_JOINER, line)


def vtt_escape(line: str, after: str = "") -> str:
    """A line of cue text for WebVTT: ``&``, ``<``, ``>`` as ``&amp;``, ``&lt;``, ``&gt;``, and a
    word joiner (U+2060) after a backslash before ``N``, ``n`` or ``h`` (``after``: the cue's line
    before, unused)."""
    return html.escape(_joined(_ASS_ESCAPE, line), quote=False)


# a line that starts like a timing line ("1:2:3,4 --> ..."), which ffmpeg's SRT reader takes for one
# (the cue's own timing or the next cue's) wherever it stands in the cue's text
_SRT_TIMING_LIKE = re.compile(r"\s*[+-]?\d+:")


def srt_escape(line: str, after: str = "") -> str:
    """A line of cue text for SRT, following the line ``after`` of the same cue: plain, but when
    a ``>`` follows a ``<`` (which readers take for a tag) every ``<`` is ``&lt;``, and ``-->`` is
    ``--&gt;`` after a line of only digits (which, followed by ``-->``, readers take for the next
    cue's number) and in a line that starts like a time (``00:00:09,000 --> ...``, which ffmpeg
    reads as a timing line, dropping or moving the cue); a word joiner (U+2060) follows a ``{`` that
    opens ``{\\...}`` or ``{c:...}`` (which ffmpeg applies as styling or drops) and a backslash
    before ``N``, ``n`` or ``h`` (a line break or hard space to ffmpeg)."""
    if after.strip().isdigit() or _SRT_TIMING_LIKE.match(line):
        line = line.replace("-->", "--&gt;")
    line = _joined(_SRT_BRACE, _joined(_ASS_ESCAPE, line))
    lt = line.find("<")
    return line.replace("<", "&lt;") if lt >= 0 and ">" in line[lt:] else line


def to_vtt(cues: Sequence[Cue]) -> str:
    """The cues as a WebVTT file (text, ``\\n`` line ends). Raises ``ValueError`` (webvtt-py) if a
    cue could not be read back, which the escaping rules out."""
    import webvtt

    return webvtt.WebVTT(captions=_captions(cues, vtt_escape)).content


def to_srt(cues: Sequence[Cue]) -> str:
    """The cues as an SRT file (text, numbered from 1, ``HH:MM:SS,mmm`` times, ``\\n`` line ends)."""
    import webvtt

    buf = io.StringIO()
    webvtt.WebVTT(captions=_captions(cues, srt_escape)).write(buf, format="srt")
    return buf.getvalue() + "\n" if cues else ""


def download_name(number: int | None, title: str, ext: str) -> str:
    """A file name for a lecture's captions of only ``A-Za-z0-9._-``: ``L3-Week-1-Hashing.vtt``.

    The title is folded to ASCII (accents dropped), other characters become ``-``; at most 80
    characters before the extension; "lecture" when nothing is left.
    """
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9_]+", "-", ascii_title).strip("-_")[:80].strip("-_") or "lecture"
    prefix = f"L{number}-" if number is not None else ""
    return f"{prefix}{slug}.{ext}"
