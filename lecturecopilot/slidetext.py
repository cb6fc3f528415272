"""Slide text as a sentence, without OCR debris: shared by the slide reader and speech recognition's
vocabulary (transcribe) and the indexer."""

from __future__ import annotations

import re
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


_SHORT_WORDS = frozenset("""a i an as at be by do go he if in is it me my no of on or so to up us we am the and for are
but not you all any can had her was one our out get has him his how new now old see two way who did its let put say
she too use set key map sum max min log big end top row""".split())
RARE_SHORT_ZIPF = 3.5  # a 2-3 letter word rarer than this in English (wordfreq) is more likely OCR debris ("sse" 3.0)


def _suspect(tok: str) -> bool:
    """An OCR debris candidate: letters only, not an acronym in capitals ("BST", "LCP"), and either
    without a vowel ("ss", "zz") or short and rare in English ("sse", "ssn")."""
    import wordfreq

    w = tok.strip(".,:;!?()")
    if not w.isalpha() or len(w) < 2 or (w.isupper() and len(w) <= 5):
        return False
    low = w.lower()
    if low in _SHORT_WORDS:
        return False
    return not re.search(r"[aeiouy]", low) or (len(low) <= 3 and wordfreq.zipf_frequency(low, "en") < RARE_SHORT_ZIPF)


def denoise_slide(text: str) -> str:
    """Slide text without OCR debris. A run of two or more tokens that are debris candidates
    (:func:`_suspect`) or lone letters, holding at least one candidate ("y sse ssn h"), is dropped;
    a lone letter or candidate stays (the "u" of "log log u", an "SSE" acronym). "" when no letters are
    left. Judged on the text alone: OCR's own line confidence has already dropped unreadable lines
    (``services.transcribe.slides.ocr_lines``)."""
    toks = text.split()
    sus = [_suspect(t) for t in toks]
    weak = [s or (len(t.strip(".,:;!?()")) == 1 and t.strip(".,:;!?()").isalpha()) for s, t in zip(sus, toks)]
    drop = [False] * len(toks)
    i = 0
    while i < len(toks):
        j = i
        while j < len(toks) and weak[j]:
            j += 1
        if j - i >= 2 and any(sus[i:j]):
            for k in range(i, j):
                drop[k] = True
        i = max(j, i + 1)
    kept = [t for t, d in zip(toks, drop) if not d]
    out = re.sub(r"\s+([.,:;!?])", r"\1", " ".join(kept)).strip().rstrip(":").strip()
    return out if re.search(r"[A-Za-z]", out) else ""
