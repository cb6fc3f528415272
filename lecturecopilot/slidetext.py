"""Slide text as a sentence: shared by the slide reader (transcribe) and the indexer."""

from __future__ import annotations

from typing import Sequence


def slide_sentence(lines: Sequence[str]) -> str:
    """OCR'd lines of one slide (top to bottom) as one sentence-like string.

    ``["Radix Sort", "Sort digit by digit"]`` → ``"Radix Sort: Sort digit by digit."``: a short
    first line (≤ 8 words) followed by more lines is taken as the title; otherwise the lines are
    joined with spaces. Returns "" for no text.
    """
    lines = [ln.strip() for ln in lines if ln and ln.strip()]
    if not lines:
        return ""
    if len(lines) > 1 and len(lines[0].split()) <= 8:
        out = f"{lines[0].rstrip(':.')}: {' '.join(lines[1:])}"
    else:
        out = " ".join(lines)
    return out if out.endswith((".", "?", "!")) else out + "."
