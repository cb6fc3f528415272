"""Spoken sentences as written ones: disfluencies out, every other word as it was said.

Quoted speech is full of what listeners skip and readers trip over: fillers ("um", "uh"),
discourse markers ("you know", "I mean"), hedges ("it's kind of weird"), tag questions
("..., right?"), repeated words and restarts ("we, we can", "the the"). The categories are those of
disfluency annotation (Shriberg, "Preliminaries to a Theory of Speech Disfluencies", 1994; the
Switchboard disfluency guidelines, Meteer et al. 1995): filled pauses, discourse markers, edit terms
and repetitions. Each rule only *deletes* a marked span, so a cleaned sentence's words are always
a subsequence of the spoken ones (``evals/disfluency.py`` checks this on every transcript sentence
and shows a before/after table); no word is substituted, reordered or invented. What is ambiguous
stays ("what kind of tree", "you know the answer").
"""

from __future__ import annotations

import re

from lecturecopilot.vocabulary import MEANT_TWICE as _MEANT_TWICE

# filled pauses (Shriberg's "filled pauses"): never a word of content
_FILLED_BOTH = re.compile(r",\s*(?:u+[hm]+|e+rm*|hmm+|a+h+|mm+)\s*,\s*", re.IGNORECASE)
_FILLED = re.compile(r"(^|[\s,;])(?:u+[hm]+|e+rm*|hmm+|a+h+|mm+)[,;]?(?=[\s,.;!?]|$)", re.IGNORECASE)
# discourse markers set off by commas or opening a clause: "you know," / ", you know," / "I mean,"
_MARKER_BOTH = re.compile(r",\s*(?:you know|i mean|you see|right|okay|ok),\s*", re.IGNORECASE)
_MARKER_OPEN = re.compile(r"(^|[,;.]\s)(?:you know|i mean|you see|like)\s*,\s*", re.IGNORECASE)
_MARKER_CLOSE = re.compile(r",\s*(?:you know|i mean|you see)(?=\s*[,.;!?]|$)", re.IGNORECASE)
# hedges after a subject or auxiliary, or opening a clause ("it kind of wraps", "I'm sort of", "Kind of by
# definition"); after a determiner "kind of" is a noun and stays ("what kind of tree", "this sort of thing")
_HEDGE_AFTER = re.compile(r"\b(i|we|you|it|they|he|she|is|are|was|were|be|been|being|have|has|had|do|does|did|can|"
                          r"could|will|would|should|might|must|just|i'm|we're|you're|it's|they're|that's|i've|we've|"
                          r"you've|i'll|we'll)\s+(?:kind of|sort of|kinda|sorta)\s+", re.IGNORECASE)
_HEDGE_OPEN = re.compile(r"(^|[,;]\s)(?:kind of|sort of|kinda|sorta)\s+", re.IGNORECASE)
# tag questions closing a statement: ", right?" ", okay?" ", yeah?" → the statement's full stop
_TAG = re.compile(r",?\s+(?:right|okay|ok|yeah|yes|no|correct|huh|see)\s*\?+\s*$", re.IGNORECASE)
# repetitions and restarts: the same one to three words said twice in a row ("we, we can", "the the")
_REPEAT = re.compile(r"\b((?:[\w']+\s+){0,2}[\w']+)(?:\s*,)?\s+\1\b", re.IGNORECASE)
# what opens a spoken sentence but not a written answer: "So,", "And so", "OK, so", "All right."
_OPENER = re.compile(r"^(?:(?:so|and|but|okay|ok|all right|alright|well|yeah|yes|right)\b[,.]?\s+|now,\s+)+",
                     re.IGNORECASE)


def _unrepeat(m: re.Match) -> str:
    phrase = m.group(1)
    if " " not in phrase and phrase.lower() in _MEANT_TWICE:
        return m.group(0)
    return phrase


def clean(text: str, *, opening: bool = False) -> str:
    """``text`` without disfluencies (see the module docstring), its first letter capitalised.

    ``opening``: the sentence opens an answer, so a spoken opener ("So,", "And", "OK, so") goes too.
    A tag question becomes a full stop ("It kind of makes sense, right?" → "It makes sense.").
    """
    t = _FILLED_BOTH.sub(" ", text)
    t = _FILLED.sub(r"\1", t)
    t = _MARKER_BOTH.sub(" ", t)
    t = _MARKER_OPEN.sub(r"\1", t)
    t = _MARKER_CLOSE.sub("", t)
    t = _HEDGE_AFTER.sub(r"\1 ", t)
    t = _HEDGE_OPEN.sub(r"\1", t)
    if re.search(r"\w", _TAG.sub("", t)):
        t = _TAG.sub(".", t)
    prev = None
    while prev != t:  # "we, we, we can" takes two passes
        prev, t = t, _REPEAT.sub(_unrepeat, t)
    t = re.sub(r"^[,;\s]+", "", t)
    if opening:
        rest = _OPENER.sub("", t)
        t = rest if re.search(r"[A-Za-z]{2,}", rest) else t
    t = re.sub(r"\s+([,.?!;:])", r"\1", re.sub(r"\s{2,}", " ", t)).strip()
    t = re.sub(r"^[,;.!?\s]+", "", t)
    t = re.sub(r",\s*([.?!])", r"\1", t)
    t = re.sub(r"([,;])\s*\1+", r"\1", t)
    if not re.search(r"\w", t):
        return ""
    return t[:1].upper() + t[1:]


def words(text: str) -> list[str]:
    """The lower-case words of ``text`` (letters, digits, apostrophes), for the subsequence check."""
    return re.findall(r"[a-z0-9']+", text.lower())


def only_deletes(before: str, after: str) -> bool:
    """True when ``after``'s words are a subsequence of ``before``'s: nothing substituted or added."""
    it = iter(words(before))
    return all(w in it for w in words(after))
