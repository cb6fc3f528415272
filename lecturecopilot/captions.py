"""Captions (WebVTT or SRT, parsed with webvtt-py) as transcript words with times."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Word:
    """One transcript word: ``start_s``/``end_s`` in seconds from the start of the media."""

    start_s: float
    end_s: float
    word: str


def _decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


_TAG = re.compile(r"<[^>]+>")


def parse_captions(path: Path) -> list[Word]:
    """Words of a WebVTT or SRT file, each cue's duration spread over its words by length.

    Text encodings: UTF-8 (with or without BOM), UTF-16 with a BOM, else Windows-1252.
    Raises ``ValueError`` when the file can't be parsed or has no cue with text.
    """
    import webvtt

    raw = _decode(path.read_bytes()).replace("\r\n", "\n").replace("\x00", "")
    with tempfile.TemporaryDirectory() as tmp:
        is_vtt = raw.lstrip().startswith("WEBVTT")
        clean = Path(tmp) / ("captions.vtt" if is_vtt else "captions.srt")
        clean.write_text(raw, encoding="utf-8")
        try:
            captions = webvtt.read(str(clean)) if is_vtt else webvtt.from_srt(str(clean))
        except Exception as e:  # webvtt raises its own MalformedFileError / MalformedCaptionError
            raise ValueError(f"The captions file could not be read: {e}") from e
    words: list[Word] = []
    for cue in captions:
        text = _TAG.sub("", cue.text).replace("\n", " ").strip()
        tokens = text.split()
        if not tokens:
            continue
        # Timestamp.in_milliseconds keeps the fraction (start_in_seconds is floored to an int)
        start = cue.start_time.in_milliseconds() / 1000.0
        end = max(cue.end_time.in_milliseconds() / 1000.0, start)
        total = sum(len(t) + 1 for t in tokens)
        t = start
        for tok in tokens:
            span = (end - start) * (len(tok) + 1) / total
            words.append(Word(round(t, 3), round(t + span, 3), tok))
            t += span
    if not words:
        raise ValueError("The captions file has no text.")
    words.sort(key=lambda w: w.start_s)
    return words


