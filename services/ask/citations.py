"""Citations in model-written answers: parsing every variant models produce, validating them
against the retrieved passages, in code. Pure functions (table-driven tests in
``tests/unit/test_citations.py``).

The format we ask for is ``[S<n> @ M:SS]`` (``n`` = passage number in the prompt). Also
accepted: ``[S2@12:34]``, ``[S2, 12:34]``, ``(S2 12:34)``, ``[Source 2 at 1:02:03]``,
``[S2 @ 754s]``, ``[S2 @ 754.5]``, several in one bracket (``[S1 @ 0:10; S2 @ 1:05]``),
``【S2 @ 12:34】``, and lecture labels ``[L4 · 31:32]`` / ``[Lecture 4, 31:32]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GROUP = re.compile(r"[\[\(【]([^\[\]\(\)【】]{1,120})[\]\)】]")
_ITEM = re.compile(
    r"(?:(?P<s>S(?:ource)?\s*#?\s*(?P<sn>\d+))|(?P<l>L(?:ecture)?\s*(?P<ln>\d+)))"
    r"\s*(?:@|at|·|,|-|–|:)?\s*"
    r"(?P<t>\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?|\d+(?:\.\d+)?\s*s\b|\d+(?:\.\d+)?(?=\s*$|\s*[;,]))?",
    re.IGNORECASE,
)
_SENT_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\[\(【]?[A-Z0-9\"'])")  # a closing quote stays


@dataclass(frozen=True)
class RawCitation:
    """A citation as written: passage number (``source``) or lecture number, and seconds."""

    source: int | None
    lecture_number: int | None
    t_s: float | None


@dataclass(frozen=True)
class PassageRef:
    """What a citation may point at: a retrieved passage (1-based ``n`` in the prompt)."""

    n: int
    lecture_id: str
    lecture_number: int
    start_s: float
    end_s: float


@dataclass(frozen=True)
class ValidCitation:
    passage: PassageRef
    t_s: float


def parse_time(text: str) -> float:
    """``"1:02:03"`` → 3723.0, ``"12:34"`` → 754.0, ``"754s"`` / ``"754.5"`` → seconds."""
    text = text.strip().rstrip("sS").strip()
    if ":" in text:
        parts = [float(p) for p in text.split(":")]
        total = 0.0
        for p in parts:
            total = total * 60 + p
        return total
    return float(text)


def extract(sentence: str) -> tuple[str, list[RawCitation]]:
    """Removes citation groups from ``sentence``; returns (clean text, citations in order)."""
    cites: list[RawCitation] = []

    def repl(m: re.Match) -> str:
        inner = m.group(1)
        items = list(_ITEM.finditer(inner))
        if not items or not re.fullmatch(r"[\sSsLlOoUuRrCcEeTtAa#@·,;:\-–\d.]*", inner):
            return m.group(0)
        for it in items:
            t = parse_time(it.group("t")) if it.group("t") else None
            if it.group("s"):
                cites.append(RawCitation(int(it.group("sn")), None, t))
            else:
                cites.append(RawCitation(None, int(it.group("ln")), t))
        return ""

    clean = _GROUP.sub(repl, sentence)
    clean = re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s{2,}", " ", clean)).strip()
    return clean, cites


def _cites_before_stop(text: str) -> str:
    """``"… keys. [S1 @ 0:01] Next"`` → ``"… keys [S1 @ 0:01]. Next"``: a citation group after the
    full stop belongs to the sentence before it."""
    return re.sub(r"([.!?])\s*((?:[\[\(【][^\]\)】]{1,120}[\]\)】]\s*)+)", r"\2\1 ", text)


def split_sentences(text: str) -> list[str]:
    """Splits model text into sentences; a citation group after the full stop stays with its sentence."""
    return [p.strip() for p in _SENT_END.split(_cites_before_stop(text)) if p.strip()]


_OPEN_GROUP = re.compile(r"\s*[\[\(【][^\]\)】]*$")
LOOK_BACK = 400  # characters before new text a sentence end that new text completes can lie (three citation groups)


def take_sentences(buffer: str, since: int = 0) -> tuple[list[str], str]:
    """The sentences of a streamed ``buffer`` that are complete, and the text after them, kept as it
    came (its spaces too: a stream's pieces may end in the space before the next word). A sentence
    is complete once the next one has begun; a citation group still open after its full stop
    (``"… keys. [S1 @ 0:0"``) may belong to it, so it waits for the group to close. The stream's
    end gives the rest to :func:`split_sentences`. ``since``: the length of the buffer an earlier
    call found no sentence end in; only its last :data:`LOOK_BACK` characters and the new text are
    looked at again, so a stream cut into pieces costs time linear in its length."""
    start = max(0, since - LOOK_BACK)
    moved = _cites_before_stop(buffer[start:])
    cut = None
    for m in _SENT_END.finditer(moved):
        if not _OPEN_GROUP.match(moved, m.end()):
            cut = m
    if cut is None:
        return [], buffer
    return split_sentences(buffer[:start] + moved[:cut.start()]), moved[cut.end():]


def validate(cites: list[RawCitation], passages: list[PassageRef], tolerance_s: float = 2.0
             ) -> tuple[list[ValidCitation], str | None]:
    """Checks each citation names a retrieved passage and a time inside it.

    Returns (valid citations, None) or ([], reason) — the reason is fed back to the model.
    """
    if not cites:
        return [], "a sentence has no citation"
    out: list[ValidCitation] = []
    for c in cites:
        if c.t_s is None:
            return [], "a citation has no time; write [S<n> @ M:SS]"
        if c.source is not None:
            if not 1 <= c.source <= len(passages):
                return [], f"S{c.source} is not one of the passages S1..S{len(passages)}"
            p = passages[c.source - 1]
            if not p.start_s - tolerance_s <= c.t_s <= p.end_s + tolerance_s:
                return [], (f"{_fmt(c.t_s)} is outside S{p.n}, which spans {_fmt(p.start_s)}–{_fmt(p.end_s)}")
        else:
            cands = [p for p in passages if p.lecture_number == c.lecture_number
                     and p.start_s - tolerance_s <= c.t_s <= p.end_s + tolerance_s]
            if not cands:
                return [], f"L{c.lecture_number} at {_fmt(c.t_s)} is not inside any passage"
            p = cands[0]
        out.append(ValidCitation(p, min(max(c.t_s, p.start_s), p.end_s)))
    return out, None


def _fmt(t: float) -> str:
    t = int(t)
    return f"{t // 3600}:{t % 3600 // 60:02d}:{t % 60:02d}" if t >= 3600 else f"{t // 60}:{t % 60:02d}"
