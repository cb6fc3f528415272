"""Slide text as a sentence, without OCR debris: shared by the slide reader and speech recognition's
vocabulary (transcribe) and the indexer."""

from __future__ import annotations

import re
from typing import Sequence


# A list marker at the start of a slide line: layout, never a word (Unicode bullets; a hyphen, en/em
# dash or asterisk followed by a space, on a line with a word after it, so "– 3" keeps its minus sign; a
# number of a numbered list, "1." or "2)", before a word).
_BULLET = re.compile(r"^\s*(?:[\u2022\u2023\u2043\u2219\u25aa\u25ab\u25cf\u25cb\u25a0\u25a1\u25e6\u00b7\u27a2\u2794\u25b8\u25ba]\s*"
                     r"|[-\u2013\u2014*]\s+(?=.*[A-Za-z])|\d{1,2}[.)]\s+(?=[A-Za-z]))")


def strip_bullet(line: str) -> tuple[bool, str]:
    """``(True, "Insert: sift up")`` for ``"• Insert: sift up"`` (a list marker dropped);
    ``(False, line.strip())`` for a line without one."""
    m = _BULLET.match(line)
    return (True, line[m.end():].strip()) if m else (False, line.strip())


def slide_title(lines: Sequence[str]) -> str:
    """The slide's title: its first line when that is short (≤ 8 words), has no list marker and holds
    a word (a section slide of one such line is all title), without OCR debris (:func:`denoise_slide`)
    and a closing ":" or "."; "" when the slide has none: ``["Binary heaps", "• Max-heap property"]``
    → ``"Binary heaps"``; ``["T(n) = 2T(n/2) + n"]`` → ``""``."""
    marked = [strip_bullet(ln) for ln in lines if ln and ln.strip()]
    marked = [(bullet, text) for bullet, text in marked if re.search(r"[A-Za-z0-9]", text)]
    if marked and not marked[0][0] and len(marked[0][1].split()) <= 8:
        title = denoise_slide(marked[0][1]).rstrip(":. ").strip()
        return title if re.search(r"[A-Za-z]{3}", title) else ""
    return ""


# Words no phrase ends on: articles, prepositions, conjunctions, "as", "than" ("Banks keep a fraction of deposits as" /
# "reserves": a trial's slide line wrapped there was quoted cut off)
_NEVER_LAST = frozenset("a an the of to in on at by for from with into onto as than and or but nor that which whose "
                        "via per versus vs".split())


def _open_ended(line: str) -> bool:
    """Whether a slide line plainly goes on in the next: it ends on a comma, an operator, an open
    bracket or a word no phrase ends on (:data:`_NEVER_LAST`)."""
    return (line.endswith((",", "(", "-", "/", "+", "=")) or line.count("(") > line.count(")")
            or line.rsplit(None, 1)[-1].lower() in _NEVER_LAST)


def _continues(line: str) -> bool:
    """Whether a slide line goes on from the one above: it opens on a lower-case word no phrase
    starts a new line with ("and Orbits", "of the cell"): a conjunction, an article, a preposition."""
    words = line.split()
    return words[0].islower() and words[0] in _NEVER_LAST and len(words) > 1 and words[1][0].isalpha()  # not "a = …"


def slide_sentence(lines: Sequence[str]) -> str:
    """OCR'd lines of one slide (top to bottom) as one sentence-like string.

    ``["Radix Sort", "Sort digit by digit"]`` → ``"Radix Sort: Sort digit by digit."``: a short
    first line (≤ 8 words) followed by more lines is taken as the title; otherwise the lines are
    joined with spaces. List markers are dropped (:func:`strip_bullet`) and each bulleted item of
    the body ends at a "; " (on a slide with markers, a line without one continues the item above it,
    as a wrapped line does): ``["Heaps", "• Insert: sift up", "• Extract-max:", "sift down"]`` →
    ``"Heaps: Insert: sift up; Extract-max: sift down."``; on a slide without any, each line is an item
    (``["Dijkstra", "non-negative weights", "min-priority queue"]`` → ``"Dijkstra: non-negative weights;
    min-priority queue."``) unless the line above ends on a comma, an operator, an open bracket or a word
    no phrase ends on (:data:`_NEVER_LAST`: "… deposits as" / "reserves"), or the line opens on such a
    word in lower case ("and Orbits"): the title too goes on so. A ": " inside the title becomes " – "
    ("Measuring Distance: Parallax"), so that the sentence's first ": " is where the title ends
    (:func:`services.ask.slidequote.slide_excerpt` cuts there). Returns "" for no text.
    """
    marked = [strip_bullet(ln) for ln in lines if ln and ln.strip()]
    marked = [(bullet, text) for bullet, text in marked if re.search(r"[A-Za-z0-9]", text)]  # no "• ,"
    if not marked:
        return ""
    title = ""
    if len(marked) > 1 and not marked[0][0] and len(marked[0][1].split()) <= 8:
        title, marked = marked[0][1].rstrip(":."), marked[1:]
        while marked and not marked[0][0] and (_continues(marked[0][1]) or _open_ended(title)):
            title, marked = f"{title} {marked[0][1]}".rstrip(":."), marked[1:]  # "Kepler's Laws" / "and Orbits"
        title = title.replace(": ", " – ")  # "Measuring Distance: Parallax": the one ": " ends the title
    items: list[str] = []
    listed = any(bullet for bullet, _ in marked)  # no marker anywhere: every line is an item of its own,
    for bullet, text in marked:                    # unless the line above plainly goes on ("…digit,", "f(")
        goes_on = bool(items) and (_open_ended(items[-1]) or _continues(text))
        if bullet or not items or not (listed or goes_on):
            items.append(text)
        else:  # a wrapped line goes on with the item above it
            items[-1] = f"{items[-1]} {text}"
    body = "; ".join(i.rstrip(";,") for i in items)
    out = f"{title}: {body}" if title else body
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
    (``services.transcribe.ocr.ocr_lines``)."""
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


def _line_key(line: str) -> str:
    """A line as it recurs from slide to slide: lower case, list marker and punctuation dropped, every
    number alike ("BIO 101 · Cell Biology 3" and "… 4" are one footer)."""
    text = strip_bullet(line)[1].lower()
    return " ".join(re.sub(r"\d+", "#", re.sub(r"[^\w\s]", " ", text)).split())


def _alike(key: str, keys) -> bool:
    """Whether ``key`` is one of ``keys`` but for OCR's slips (rapidfuzz ratio ≥ 90: "lntroductory")."""
    from rapidfuzz import fuzz, process

    return bool(keys) and process.extractOne(key, list(keys), scorer=fuzz.ratio, score_cutoff=90) is not None


def recurring_lines(slides: Sequence[Sequence[str]], *, min_slides: int = 3, share: float = 0.5) -> frozenset[str]:
    """The keys (:func:`_line_key`) of the lines a lecture's slides repeat below their first line: a
    footer or running header (course code, university, author, date, page number) that would
    otherwise join every slide's text, be quoted in answers and blanked in practice questions.
    ``slides``: each slide's OCR'd lines, top to bottom. Slides are told apart by their first line
    (a build's steps share their title and count once). A line recurs when it is, give or take OCR's
    slips (:func:`_alike`), below the first line of at least ``min_slides`` slides and of at least
    ``share`` of the slides of two lines or more; a first line is never counted (a title repeated on
    every slide is still its title)."""
    rows = [(_line_key(lines[0]), {_line_key(ln) for ln in list(lines)[1:] if ln.strip()})
            for lines in slides if len([ln for ln in lines if ln.strip()]) >= 2]
    titles = {title for title, _ in rows}
    out = set()
    for key in {k for _, keys in rows for k in keys if re.search(r"[a-z#]", k)}:
        under = {title for title, keys in rows if key in keys or _alike(key, keys)}
        if len(under) >= min_slides and len(under) >= share * len(titles):
            out.add(key)
    return frozenset(out)


def without_recurring(lines: Sequence[str], recurring: frozenset[str]) -> tuple[str, ...]:
    """``lines`` (one slide's, top to bottom) without those :func:`recurring_lines` found, its first kept."""
    if not recurring:
        return tuple(lines)
    return tuple(ln for i, ln in enumerate(lines)
                 if i == 0 or not (_line_key(ln) in recurring or _alike(_line_key(ln), recurring)))
