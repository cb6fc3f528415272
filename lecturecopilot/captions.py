"""Captions (WebVTT or SRT, parsed with webvtt-py) as transcript words with times."""

from __future__ import annotations

import html
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .labels import clock
from .text import refused


#: how a cue of a slide's text starts in the captions this product exports (the gateway's
#: ``caption_export``): such a cue read back is no speech, and is left out
SLIDE_MARK = "[Slide]"


@dataclass(frozen=True)
class Word:
    """One transcript word: ``start_s``/``end_s`` in seconds from the start of the media."""

    start_s: float
    end_s: float
    word: str


def _decode(data: bytes) -> str:
    """The file's text: UTF-16 after its byte-order mark, else UTF-8 (a BOM or not), else Windows-1252.
    Raises ``ValueError`` for a UTF-16 byte-order mark before bytes that do not read as UTF-16 captions
    (undecodable, or no cue timing in them: other bytes of an even length decode to junk), and for a
    UTF-8 byte-order mark before bytes that are not UTF-8."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            text = ""
        if "-->" not in text:  # not UTF-16, or UTF-16 of no cue timing: bytes of another encoding after the mark
            raise ValueError("The captions file starts with a UTF-16 byte-order mark, but what follows is not "
                             "UTF-16 captions; save it as UTF-8.")
        return text
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if data.startswith(b"\xef\xbb\xbf"):  # it says it is UTF-8, so Windows-1252 would be a guess against it
            raise ValueError(f"The captions file starts with a UTF-8 byte-order mark, but byte {e.start} is not "
                             "UTF-8; save it as UTF-8.") from None
        return data.decode("cp1252", errors="replace")


_TAG = re.compile(r"<[^>]+>")
# a cue timing line of WebVTT (``.``) or SRT (``,``): [hh:]mm:ss.mmm --> [hh:]mm:ss.mmm [settings]; hours of
# 1-9 digits (webvtt-py drops a cue of 11 without a word; the length limit refuses any of these clearly)
_STAMP = r"(?:\d{1,9}:)?([0-5]\d):([0-5]\d)[.,]\d{3}"
_TIMING = re.compile(rf"^\s*{_STAMP}\s*-->\s*{_STAMP}(?:\s|$)")
_COMMA_MS = re.compile(r"(\d{2}:\d{2}),(\d{3})\b")
# the most words a cue may hold: WORDS_PER_S a second of its time plus SPARE_WORDS (a cue with no
# time at all still holds a line). Fast speech is about 4 words a second (auctioneers reach 6-7):
# a cue far past this is not a caption of speech, and stretching it would invent hours of lecture.
WORDS_PER_S, SPARE_WORDS = 10, 50
MAX_WORD_CHARS = 500  # longer than any word or URL a lecture says; a longer run of letters is not speech


class TooLong(ValueError):
    """Captions whose words run past the limit given to :func:`parse_captions`; ``end_s``: where the
    words had got to (seconds) when it stopped."""

    def __init__(self, end_s: float, message: str | None = None):
        super().__init__(message or f"The captions run past {clock(end_s)}.")
        self.end_s = end_s


def _bad_timing(raw: str) -> str | None:
    """The first cue timing line that is not valid (webvtt-py skips such a cue without a word), as
    "line N: ..."; None when all are valid. A timing line is a line holding ``-->`` that opens a
    block (after a blank line) or follows the block's first line (an SRT number, a WebVTT cue id);
    further down a block it is cue text ("the edge u --> v relaxes" in an SRT file)."""
    at = 0  # the line's place in its block of non-blank lines
    for n, line in enumerate(raw.split("\n"), 1):
        if not line.strip():
            at = 0
            continue
        if at <= 1 and "-->" in line and not _TIMING.match(line):
            return f"line {n}: {line.strip()[:80]!r}"
        at += 1
    return None


def _check_cue(start: float, end: float, tokens: list[str]) -> None:
    """``ValueError`` for a cue (``start``–``end`` seconds) of ``tokens`` no speech could be: more
    words than :data:`WORDS_PER_S` a second (+ :data:`SPARE_WORDS`), or one over
    :data:`MAX_WORD_CHARS` characters."""
    if len(tokens) > WORDS_PER_S * (end - start) + SPARE_WORDS:
        raise ValueError(f"The cue at {clock(start)} holds {len(tokens)} words in {end - start:g} s; speech "
                         f"is never more than {WORDS_PER_S} words a second, so these are not captions of it.")
    longest = max(tokens, key=len)
    if len(longest) > MAX_WORD_CHARS:
        raise ValueError(f"The cue at {clock(start)} holds a 'word' of {len(longest)} characters "
                         f"({longest[:20]!r}…); a caption's words are at most {MAX_WORD_CHARS}.")


CUES_PER_S = 5  # word-by-word captions show about 3 cues a second of speech; more is not captions


def _read_cues(path: Path, max_cues: int | None = None) -> list[tuple[float, float, str]]:
    """The cues of a WebVTT or SRT file as ``(start_s, end_s, text)`` in start order, its refused
    characters removed. Raises ``ValueError`` (see :func:`parse_captions`), and :class:`TooLong`
    (at 0 s) when the file has more than ``max_cues`` timing lines, counted before any is parsed."""
    import webvtt

    raw = _decode(path.read_bytes()).replace("\r\n", "\n")
    if max_cues is not None and raw.count("-->") > max_cues:
        raise TooLong(0.0, f"The captions hold more than {max_cues} cues, more than {CUES_PER_S} a second "
                           "of the longest lecture allowed; these are not captions of a lecture.")
    # control and text-direction characters never reach a transcript (lecturecopilot.text's rule:
    # "\u202egnp.exe" would show as "exe.png" in answers and exports); line breaks and tabs stay
    raw = "".join(c for c in raw if not refused(c, multiline=True))
    if bad := _bad_timing(raw):
        raise ValueError(f"A cue's timing is not valid ({bad}); expected HH:MM:SS.mmm --> HH:MM:SS.mmm.")
    with tempfile.TemporaryDirectory() as tmp:
        is_vtt = raw.lstrip().startswith("WEBVTT")
        if is_vtt:  # SRT's "00:00:01,000" in a WebVTT file (many tools write it): webvtt-py would drop the cue
            raw = "\n".join(_COMMA_MS.sub(r"\1.\2", ln) if "-->" in ln else ln for ln in raw.split("\n"))
        clean = Path(tmp) / ("captions.vtt" if is_vtt else "captions.srt")
        clean.write_text(raw, encoding="utf-8")
        try:
            captions = webvtt.read(str(clean)) if is_vtt else webvtt.from_srt(str(clean))
        except Exception as e:  # webvtt raises its own MalformedFileError / MalformedCaptionError
            raise ValueError(f"The captions file could not be read: {e}") from e
    return sorted(((c.start_time.in_milliseconds() / 1000.0, c.end_time.in_milliseconds() / 1000.0, c.text)
                   for c in captions), key=lambda c: (c[0], c[1]))


def parse_captions(path: Path, *, max_end_s: float | None = None) -> list[Word]:
    """Words of a WebVTT or SRT file, each cue's duration spread over its words by length.

    Cues are taken in start order. Overlapping cues are laid end to end (a cue starts no earlier
    than the previous cue's last word), so words never interleave; lines a cue repeats from the
    cue before (roll-up captions, as auto-captioning produces) are dropped, and so are the cues of a
    slide's text that this product's caption export writes (:data:`SLIDE_MARK`: uploading an exported
    file again must not make the slides speech). Times in seconds.

    Text encodings: UTF-8 (with or without BOM), UTF-16 with a BOM, else Windows-1252.
    Raises ``ValueError`` when the file can't be parsed, has a timing line that is not valid
    (``00:00:99,000 --> xx``: webvtt-py would drop that cue silently), has no cue with text, has a
    cue that ends before it starts, or one holding more words than its time could
    (:data:`WORDS_PER_S`, :data:`SPARE_WORDS`) or a word over :data:`MAX_WORD_CHARS` characters, and
    (:class:`TooLong`) as soon as the words placed run past ``max_end_s`` seconds, or before parsing when
    the file holds more than :data:`CUES_PER_S` cues a second of ``max_end_s``: a file of hundreds of
    thousands of empty-timed cues is refused before it is turned into millions of words.
    """
    cues = _read_cues(path, None if max_end_s is None else int(CUES_PER_S * max_end_s) + SPARE_WORDS)
    words: list[Word] = []
    prev_lines: list[str] = []
    cursor = 0.0  # end of the last word placed: later cues never go back before it
    for start, end, raw_text in cues:
        if end < start:
            raise ValueError(f"A cue ends before it starts ({clock(start)} → {clock(end)}); fix the captions' times.")
        # Timestamp.in_milliseconds keeps the fraction (start_in_seconds is floored to an int)
        # tags out, then character references ("&amp;" → "&"; WebVTT escapes & < > this way)
        lines = [" ".join(html.unescape(_TAG.sub("", ln)).split()) for ln in raw_text.split("\n")]
        lines = [ln for ln in lines if ln]
        if lines and lines[0].startswith(SLIDE_MARK):  # a slide's cue of our own export: not speech
            continue
        # roll-up captions repeat the previous cue's lines before adding one: keep only the new ones
        fresh = [ln for ln in lines if ln not in prev_lines]
        prev_lines = lines or prev_lines
        tokens = " ".join(fresh).split()
        if not tokens:
            continue
        _check_cue(start, end, tokens)
        start = max(start, cursor)  # overlapping cues: speech order, never interleaved words
        end = max(end, start + 0.05 * len(tokens))
        total = sum(len(t) + 1 for t in tokens)
        t = start
        for tok in tokens:
            span = (end - start) * (len(tok) + 1) / total
            words.append(Word(round(t, 3), round(t + span, 3), tok))
            t += span
        cursor = words[-1].end_s
        if max_end_s is not None and cursor > max_end_s:
            raise TooLong(cursor)
    if not words:
        raise ValueError("The captions file has no text.")
    return words


