"""Questions about a moment of a lecture ("Ask about this moment", issue 33 item 1).

The page sends the player's position with a question (``at``: a lecture of the course and a second
of it). Two things follow from it:

- a question that points at the screen ("what does this mean?", "why is that?", "explain this
  slide", "what did he just say about X?": :func:`points_at_screen`), or any question asked with
  "about this moment" on, is answered from what is shown and said around that second: the passages
  of the moment's window (:func:`window`: the time the slide shown then stays on screen, else
  ``NEAR_S`` either side) come first, clipped to that window (:func:`moment_passages`), and the rest
  of the course after; the extractive writer quotes only the window, so the answer cites at or near
  the moment;
- a question that names its own topic ("what is a red-black tree?") is answered as without the
  moment, which only breaks ties between equally scored passages (:func:`tie_break`).

The pointing detector is general: it reads how a question refers (deictic words, "this slide", "on
the screen", "just said"), never a subject's words; its tables (matching and non-matching phrasings
from many fields) are in ``tests/unit/test_intents_fields.py``.

Times are seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .retrieve import Passage
from .search_index import Hit

NEAR_S = 30.0  # without a slide, the moment is what is said this close to the second (issue 33: ±30 s)
# a slide stays on screen for minutes at times; the window is the part of its time within this of the
# second (a passage is at most 90 s: services.index.core.make_segments' max_s), so what is quoted is near
SLIDE_HALF_S = 90.0
CONTEXT_S = 15.0  # what is said this close to the second (and the slide) is what "this" stands for

# references to the screen or to what was just said: "explain this slide", "what's on the board?",
# "what did he just say about X?", "what is she writing?"
_SPEAKER = r"(?:he|she|they|you|the (?:professor|lecturer|instructor|teacher|speaker|prof))"
_SCREEN = re.compile(
    r"\b(?:this|that|the current|these|those) (?:slides?|screen|board|diagram|figure|picture|image|graph|chart|plot|"
    r"table|equation|formula|drawing|sketch|example|code|derivation|proof|animation|demo|moment)\b"
    r"|\bon (?:the |this |that )?(?:slide|screen|board|whiteboard|blackboard)\b"
    r"|\bjust (?:now|say|said|says|mention(?:ed)?|write|wrote|written|show(?:ed|n)?|draw|drew|drawn|do|did|"
    r"explain(?:ed)?|mean|meant|happen(?:ed)?)\b"
    rf"|\bwhat (?:did|does|do) {_SPEAKER} (?:just )?(?:say|mean|write|draw|do)\b"
    rf"|\bwhat (?:is|was|are|were|'s) {_SPEAKER} (?:saying|doing|talking about|writing|drawing|pointing (?:at|to)|showing)\b"
    r"|\bat this (?:second|timestamp|time in the video)\b",
    re.IGNORECASE)
_DEICTIC = re.compile(r"\b(?:this|that|these|those|here|it)\b", re.IGNORECASE)
# the words of a question that asks about something without naming it: question and request words,
# pronouns, auxiliaries ("what does this mean?", "can you explain that again?", "I don't get this part")
_GENERAL = frozenset("""a an the this that these those here there it its is are was were be been being am do does did
done doing don't doesn't didn't isn't aren't wasn't what what's whats why how how's when where which who whom so and but
or wait ok okay sorry hmm um uh please can could would will should you me i we he she they him her them my our your
mean means meant meaning explain explained explaining work works working happen happens happened happening going go goes
on get got understand understood say says said saying talk talking tell show shows showing showed again more exactly
just really part bit step thing things stuff about point come there's that's it's this's one ones in of to for with
from by up out all why's anyway actually like""".split())


def points_at_screen(question: str) -> bool:
    """True when ``question`` points at what is on screen or being said rather than naming a topic:
    it refers to the screen ("explain this slide", "what's on the board?"), to what was just said
    ("what did he just say about X?"), or is only a deictic question (:func:`deictic`: "what does
    this mean?", "why is that?")."""
    return bool(_SCREEN.search(question)) or deictic(question)


def screen_reference(question: str) -> bool:
    """True when ``question`` names the screen or what was just said ("this slide", "on the board",
    "just said"): it points at the moment even in a conversation (where a bare "why is that?" asks
    about the previous answer)."""
    return bool(_SCREEN.search(question))


def deictic(question: str) -> bool:
    """True when ``question`` refers with "this", "that", "here" or "it" and has no word of its own
    beyond question and request words: "what does this mean?", "why is that?", "explain this",
    "how does it work?"; not "what is this algorithm's running time?"."""
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", question.lower())
    return bool(words) and bool(_DEICTIC.search(question)) and all(w in _GENERAL for w in words)


@dataclass(frozen=True)
class Moment:
    """The player's position: ``t_s`` seconds into lecture ``lecture_id``; ``focus``: the asker turned
    "about this moment" on (answer from the moment whatever the wording)."""

    lecture_id: str
    t_s: float
    focus: bool = False


@dataclass(frozen=True)
class Window:
    """What "this" is at a moment: ``lo``..``hi`` seconds of the lecture (a slide's time on screen near
    the second, else ``NEAR_S`` either side) and ``slide``, the text of the slide shown then ("" without)."""

    lecture_id: str
    lo: float
    hi: float
    slide: str = ""


def window(index, moment: Moment) -> Window:
    """The moment's window in ``index`` (a :class:`services.ask.ports.SearchIndex` with ``lecture_slides``):
    the slide on screen at ``moment.t_s`` (``start_s <= t_s < end_s``) limited to ``SLIDE_HALF_S`` either
    side of it, else ``NEAR_S`` either side (never before 0)."""
    t = moment.t_s
    for start, end, text in index.lecture_slides(moment.lecture_id):
        if start <= t < max(end, start + 1.0):
            return Window(moment.lecture_id, max(start, t - SLIDE_HALF_S), min(end, t + SLIDE_HALF_S), text)
    return Window(moment.lecture_id, max(0.0, t - NEAR_S), t + NEAR_S)


def moment_passages(index, moment: Moment, win: Window) -> list[Passage]:
    """The lecture's segments that overlap ``win``, each clipped to the sentences starting inside it, the
    one holding ``moment.t_s`` first, then the others by their distance to it. Their scores are 1 (first)
    down to 1/n: rank order only. Empty when nothing is said or shown in the window."""
    entry = index.lecture_sentences.get(win.lecture_id)
    sents = entry[0] if entry else []
    out = []
    for seg in index.lecture_segments(win.lecture_id):
        inside = [s for s in sents if win.lo <= s.start_s <= win.hi and seg.start_s - 0.05 <= s.start_s <= seg.end_s + 0.05]
        if not inside:
            continue
        start, end = inside[0].start_s, min(max(s.end_s for s in inside), win.hi)
        out.append(Hit(seg.point_id, seg.lecture_id, seg.lecture_number, seg.segment_idx, start, max(end, start),
                       " ".join(s.text for s in inside), 0.0))
    out.sort(key=lambda h: 0.0 if h.start_s <= moment.t_s <= h.end_s else min(abs(h.start_s - moment.t_s),
                                                                               abs(h.end_s - moment.t_s)))
    return [Passage(h, 1.0 / (rank + 1)) for rank, h in enumerate(out)]


def context_text(index, moment: Moment, win: Window) -> str:
    """What "this" stands for: the slide's text and what is said within ``CONTEXT_S`` of the second
    (inside the window), in time order; the text the rest of the course is searched with."""
    entry = index.lecture_sentences.get(win.lecture_id)
    said = [s.text for s in (entry[0] if entry else [])
            if win.lo <= s.start_s <= win.hi and abs(s.start_s - moment.t_s) <= CONTEXT_S]
    return " ".join(([win.slide] if win.slide else []) + said)


def _overlaps(a: Hit, b: Hit) -> bool:
    return a.lecture_id == b.lecture_id and min(a.end_s, b.end_s) > max(a.start_s, b.start_s)


def first_the_moment(moment_first: list[Passage], rest: list[Passage], k: int) -> list[Passage]:
    """The moment's passages, then the rest of the course (``rest``, best first, without what overlaps
    them), ``k`` in all (at least the moment's)."""
    others = [p for p in rest if not any(_overlaps(p.hit, m.hit) for m in moment_first)]
    return moment_first + others[:max(0, k - len(moment_first))]


def tie_break(passages: list[Passage], moment: Moment) -> list[Passage]:
    """``passages`` in their order, those of equal score ordered by closeness to the moment (a passage of
    its lecture nearer its second first; another lecture's after)."""
    def distance(p: Passage) -> float:
        if p.hit.lecture_id != moment.lecture_id:
            return float("inf")
        return max(0.0, p.hit.start_s - moment.t_s, moment.t_s - p.hit.end_s)

    return sorted(passages, key=lambda p: (-p.score, distance(p)))


def focus_of(question: str) -> str:
    """``question`` without its pointing words: "what did he just say about hashing?" → "hashing?";
    "" for a question that is only pointing ("what does this mean?")."""
    if deictic(question):
        return ""
    rest = _SCREEN.sub(" ", question)
    words = [w for w in re.findall(r"[A-Za-z0-9'-]+", rest) if w.lower() not in _GENERAL]
    return " ".join(words)
