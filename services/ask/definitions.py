"""Definitions, in any field: which question asks for one, and which sentence gives it.

A lecture usually defines a term once, where it introduces it ("The point of closest approach is
called perihelion."), and names it again later ("at perihelion the planet moves fastest"). A later
mention can share more of a short question's words and meaning than the definition does, so "What
is perihelion?" was answered with it (issue 30's astronomy trial). The patterns are the language's
ways of defining (a copula, "called", "means", a slide's "Term: …" line), no subject's words; the
practice-question writer (:mod:`services.ask.examprep.questions`) uses the same test to pick the
term a sentence teaches.
"""

from __future__ import annotations

import re

# "<the> X is/are a|an|the|called|…": a definition of X in speech
DEFINES = re.compile(r"^\W*(?:the\s+|a\s+|an\s+)?(?P<t>.{2,60}?)\s+(?:is|are|was|were)\s+(?:a|an|the|called|defined|"
                     r"known|what|how|when|where|one|just|basically|really|essentially|simply|going to be)\b", re.I)
CALLED = r"(?:called|known as|referred to as|named|termed|we call(?: it| this| that)?|i call(?: it| this| that)?|" \
         r"is the name for)\s+(?:an?\s+|the\s+)?"
# "X means …", "X, which measures …" (not ", which stands for": that is what an acronym before X stands for)
MEANS = r"s?(?:\s+(?:means|refers to|stands for|is defined as|describes|measures)|,\s+which\s+(?:means|refers to|" \
        r"is defined as|describes|measures))\b"
# a slide's "Perihelion: closest point to the Sun", "Keystone species – one whose …", "tau = RC"
_SLIDE_LINE = r"(?:^|\n|[.;]\s)\W*(?:the\s+|an?\s+)?{t}s?\s*(?::|–|—|\s-\s|=)\s*\S"

# "What is perihelion?", "what's a keystone species", "define entropy", "what is meant by elasticity",
# "what does RC mean" (the gate's framing of "stand for" questions is its own)
_ASKS = re.compile(
    r"^\W*(?:(?:so|and|ok(?:ay)?|then)[\s,]+)?(?:(?:please|can you|could you)\s+)?"
    r"(?:(?:what\s+is\s+)?the\s+(?:definition|meaning)\s+of|define|definition\s+of|"
    r"whats|what(?:'s|\s+is|\s+are|\s+was|\s+were)(?:\s+(?:meant\s+by|an?|the))?|what\s+do\s+(?:we|you)\s+mean\s+by)\s+"
    r"(?:an?\s+|the\s+)?(?P<t>[^?!.,;:]{2,60}?)\s*[?!.]*\s*$"
    r"|^\W*what\s+(?:does|do)\s+(?:the\s+(?:term|word)\s+)?(?P<m>[^?!.,;:]{2,60}?)\s+(?:mean|refer\s+to)\s*[?!.]*\s*$",
    re.IGNORECASE)
# what follows "what is" without naming a thing to define: "the difference between …", "the running time of …"
_NOT_A_TERM = re.compile(r"^(?:the\s+)?(?:difference|differences|relationship|relation|link|connection|"
                         r"running time|complexity|cost|value|number|formula|equation|unit|units|"
                         r"reason|purpose|role|point|goal|idea|example|advantage|disadvantage|problem|components?|parts?|steps?|"
                         r"stages?|types?|kinds?|properties|features?|causes?|effects?|consequences?|uses?|"
                         r"applications?|assumptions?|limits?|limitations?|main|key|first|second|third|last)\b"
                         r"|\b(?:of|between|for|in|on|at|by|with|from|to|into|after|before|during|about|when|if|why|"
                         r"how|does|do|did|happens?|can|will|would|should)\b", re.IGNORECASE)
MAX_TERM_WORDS = 4


def asked_term(question: str) -> str | None:
    """The term ``question`` asks to have defined ("What is perihelion?" → "perihelion", "what's a
    keystone species" → "keystone species", "what does RC mean" → "RC"), or None for any other
    question, for a term of more than ``MAX_TERM_WORDS`` words, and for what names a relation or a
    quantity of something rather than a term ("what is the difference between …", "what is the
    running time of …"); "X of Y" asks for X ("What is the epicenter of an earthquake?" → "epicenter")."""
    m = _ASKS.match(question.strip())
    if not m:
        return None
    term = (m.group("t") or m.group("m") or "").strip()
    term = re.split(r"\s+of\s+", term, maxsplit=1)[0] if not _NOT_A_TERM.match(term) else term  # "the epicenter of an earthquake"
    if not term or len(term.split()) > MAX_TERM_WORDS or _NOT_A_TERM.search(term):
        return None
    return term


def _pattern(term: str) -> str:
    return r"\s+".join(map(re.escape, term.split()))


def defines(text: str, term: str, *, slide: bool = False) -> bool:
    """True when ``text`` defines ``term`` (case and an ending "s" ignored): "<term> is a/the/called
    …" (up to two words before the term: "a main sequence star is …"), "called <term>", "<term>
    means …"; for a slide's text (``slide``) also a line "<term>: …", "<term> – …", "<term> = …"."""
    t = _pattern(term)
    m = DEFINES.match(text)
    if m and re.fullmatch(r"(?:[\w'-]+\s+){0,2}" + t + r"s?", m.group("t").strip(), re.I):
        return True
    if re.search(r"\b" + CALLED + t + r"s?\b", text, re.I) or re.search(r"\b" + t + MEANS, text, re.I):
        return True
    return slide and bool(re.search(_SLIDE_LINE.format(t=t), text, re.I))
