"""Exam prep's word helpers: containment, tokens, English word frequency and the words no term
starts or ends with (shared by :mod:`.terms` and :mod:`.quantities`)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

import numpy as np
import wordfreq

from lecturecopilot.vocabulary import MATH_WORDS as _MATH_WORDS
from lecturecopilot.vocabulary import NUMBER_WORDS as _NUMBER_WORDS
from lecturecopilot.vocabulary import TERM_STOP as _STOP
from lecturecopilot.vocabulary import TITLE_FILLERS as _FILLERS
from lecturecopilot.vocabulary import common_english

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
EmbedFn = Callable[[list[str]], np.ndarray]  # texts -> L2-normalised (n, d) float32


def norm(text: str) -> str:
    """Lower case, words only, single spaces (for containment tests)."""
    return " ".join(_WORD.findall(text.lower()))


def contains(text: str, phrase: str) -> bool:
    """True when ``phrase`` occurs in ``text`` as whole words (case and punctuation ignored)."""
    p, t = norm(phrase), f" {norm(text)} "
    return bool(p) and (f" {p} " in t or f" {p}s " in t or f" {p}es " in t)


def _stemmed(term: str) -> tuple[str, ...]:
    return tuple(re.sub(r"(?:ed|es|e|d|s)$", "", w) for w in norm(term).split())


def same_term(a: str, b: str) -> bool:
    """True for two spellings of one term ("merge sort" / "merged sort"), or one nested in the other."""
    sa, sb = _stemmed(a), _stemmed(b)
    n = min(len(sa), len(sb))
    if n == 0:
        return False
    return any(sa[i:i + n] == sb for i in range(len(sa) - n + 1)) or any(
        sb[i:i + n] == sa for i in range(len(sb) - n + 1))


# -- tokens ---------------------------------------------------------------------------------------
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]|\d+(?:[.,]\d+)*|[,;:.!?()\"“”]")
_NUMBERS = frozenset(_NUMBER_WORDS) | frozenset(
    "thirty forty fifty sixty seventy eighty ninety hundred thousand million billion trillion half quarter".split())
# a word that cannot start or end a term: function words, classroom fillers, very common English
# (wordfreq Zipf >= 6.0: "people", "time", "way") and number words. "sort" is a filler only in
# "sort of", which :func:`_runs` cuts first ("merge sort" is a term).
_BOUNDARY = (_STOP | _FILLERS | common_english(6.0) | _NUMBERS) - {"sort"}
_HEDGE = re.compile(r"\b(?:sort|kind|type) of\b", re.I)
# words after which the next word is a verb ("it absorbs", "we use", "to fix")
_VERB_BEFORE = frozenset("i we you they he she it can could will would should may might must to does did don't "
                         "doesn't cannot also just".split())
# words after which the next word is a noun ("the stroma", "of rubisco")
_NOUN_BEFORE = frozenset("the a an this these those its their our your his her of called named each every".split())


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def zipf(word: str) -> float:
    """wordfreq's Zipf frequency of ``word`` in English (0.0 for a word it does not know):
    log10 of its frequency per billion words; 6.0 ≈ once per 1,000 words."""
    return _zipf(word.lower())


@lru_cache(maxsize=65536)
def _zipf(word: str) -> float:
    return wordfreq.zipf_frequency(word, "en")


def _content(text: str) -> set[str]:
    return {w for w in norm(text).split() if w not in _BOUNDARY and len(w) > 2}


def _singular(w: str) -> str:
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "os")):
        return w[:-1]
    return w


def _boundary(low: str) -> bool:
    """A word no term starts or ends with: a boundary word or a form of one ("uses", "taking")."""
    b = _BOUNDARY
    if "'" in low:  # "i'll", "that'll", "n's": a contraction of a boundary word, or a variable's
        base = low.split("'")[0]
        return len(base) < 2 or base in b
    return low in b or _singular(low) in b or low.endswith("ed") and (low[:-2] in b or low[:-1] in b) or \
        low.endswith("ing") and (low[:-3] in b or low[:-3] + "e" in b) or \
        _MATH_WORDS.get(low) in ("operator", "variable")
