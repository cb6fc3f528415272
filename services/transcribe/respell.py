"""Respelling from the slide on screen: a misheard word becomes the term the slide spells.

Prompting speech recognition with the slide's text (:mod:`.vocabulary`) helps, but a synthetic or
accented voice still gets "thylakoid" as "phylocoid", "Faraday's law" as "Ferreta's law", "Carnot"
as "car not". The slide on screen while it is said spells the term right. This is the
post-recognition half of contextual biasing: a span of the transcript said while a slide is on
screen (± :data:`MARGIN_S`) whose letters and sound are close to a distinctive term of that slide
is replaced by the term as the slide spells it (error correction against a given vocabulary, as in
NeMo's SpellMapper, Antonova et al., Interspeech 2023, here with the slide as the vocabulary and
its time on screen as the context).

What counts as a term: an n-gram (1–3 words) of one phrase of a slide (a line up to its commas,
colons, brackets, arrows) that holds a distinctive word (rare in English, wordfreq Zipf <
:func:`.vocabulary.distinctive`, the test the vocabulary prompts use), neither starts nor ends with a very common word and has no
one-letter part (OCR debris: "Cram r-Rao"). What counts as close: see :func:`similarity` (letters
and Metaphone keys, Lawrence Philips 1990, of the parts the span and the term do not share). Never
replaced: a span the term already spells, another form of the same word ("depolarizes" /
"Depolarization"), one everyday word, or a word that some slide of the lecture spells itself
("polymerase" is not respelled "telomerase").

The cut-off is chosen with whole fields held out (``python -m evals.slide_terms``).
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from dataclasses import dataclass
from typing import Iterator, Sequence

import jellyfish
import wordfreq
from rapidfuzz import fuzz

from lecturecopilot.captions import Word

from .vocabulary import SlideText, distinctive

CUTOFF = 0.70     # similarity at which a span is respelled: every leave-one-field-out fold chose it (evals.slide_terms)
MARGIN_S = 3.0    # a term may be said this long before its slide appears or after it goes (seconds)
MIN_LETTERS = 4   # a differing part shorter than this is too short to judge by its sound
COMMON_ZIPF = 5.5  # a term does not start or end with a word this common ("the", "of", "is"; "process" 5.2 may)
MAX_TERM_WORDS = 3
EVERYDAY_ZIPF = 3.0  # a word this common in English (wordfreq Zipf; "fuse" 3.3, "called" 6.1) is a real word
INSIDE_SHARE = 0.7
MIN_LENGTH_RATIO = 0.6  # the differing parts' lengths in letters, shorter over longer, at least this

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
_PHRASE_BREAK = re.compile(r"[\n,:;()\[\]=+/<>|•·–—]|\.\s|->")  # a term does not run across these
_EDGE = re.compile(r"^(\W*)(.*?)(\W*)$", re.S)


@dataclass(frozen=True)
class Term:
    """A term a slide spells: ``words`` as written, shown ``start_s``..``end_s`` (seconds)."""

    words: tuple[str, ...]
    start_s: float
    end_s: float


def _letters(text: str) -> str:
    """Lower-case ASCII letters of ``text``, accents folded ("Cramér" → "cramer")."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z]", "", folded.lower())


def _parts(words: Sequence[str]) -> list[str]:
    """The letters of each word's hyphen-separated parts ("single-strand" → "single", "strand")."""
    return [x for w in words for x in (_letters(p) for p in re.split(r"[-‐–]", w)) if x]


@functools.lru_cache(maxsize=100_000)
def _zipf(word: str) -> float:
    return wordfreq.zipf_frequency(word.lower(), "en")


def slide_terms(slides: Sequence[SlideText]) -> list[Term]:
    """The terms of ``slides`` (see the module docstring), each with its slide's time on screen."""
    out: dict[tuple, Term] = {}
    for s in slides:
        for phrase in _PHRASE_BREAK.split(s.text):
            for gram in _term_grams(_WORD.findall(phrase)):
                key = (tuple(w.lower() for w in gram), s.start_s)
                out.setdefault(key, Term(gram, s.start_s, s.end_s))
    return list(out.values())


def _term_grams(words: list[str]) -> Iterator[tuple[str, ...]]:
    """The runs of 1 to :data:`MAX_TERM_WORDS` of a phrase's ``words`` that may be terms, shortest
    first: neither end a common word (:data:`COMMON_ZIPF`), one word distinctive, every part of
    two letters or more."""
    for n in range(1, MAX_TERM_WORDS + 1):
        for i in range(len(words) - n + 1):
            gram = tuple(words[i:i + n])
            if _zipf(gram[0]) >= COMMON_ZIPF or _zipf(gram[-1]) >= COMMON_ZIPF:
                continue
            if not any(distinctive(w.replace("’", "'").split("'")[0]) for w in gram) or any(len(x) < 2 for x in _parts(gram)):
                continue
            yield gram


def _stem(w: str) -> str:
    """A word's letters without a plural ending, for telling shared words apart."""
    return w[:-2] if w.endswith("es") else w[:-1] if w.endswith("s") else w


def _forms_of_one_word(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` (letters) look like forms of one word or one inside the other:
    "depolarizes" / "depolarization", "lens" / "lensing", "variance" / "invariance"."""
    if a in b or b in a:
        return True
    prefix = len(os.path.commonprefix([a, b]))
    return prefix >= 5 and prefix >= min(len(a), len(b)) - 4


def _one_inside_other(x: str, y: str) -> bool:
    """True when one word's letters make up most (:data:`INSIDE_SHARE`) of the other word, as a form of
    it ("winding" / "unwinding"); "match" / "mismatch" is not (a compound misheard as two words)."""
    short, long_ = sorted((x, y), key=len)
    return len(short) >= MIN_LETTERS and len(short) >= INSIDE_SHARE * len(long_) and _forms_of_one_word(short, long_)


def _may_be_a_form(span: Sequence[str], term: Sequence[str], differing: Sequence[str], ra: str, rb: str) -> bool:
    """False when the span can only be the term misheard, not another form of it: as many words as
    the term, each differing word a non-word (wordfreq Zipf 0: "telomerane" / "telomerase",
    "generacy" / "degeneracy") and the span not spelling the whole term inside it ("Mohorovičić" /
    an OCR-broken "Mohorovi"). A recognizer writes a real word when it hears one ("depolarizes",
    "lensing"), so a known word stays another form of the term. Leave-one-field-out on the fields
    dev lectures (``python -m evals.slide_terms --cached``): slide terms heard 0.902 → 0.906, term
    error rate 0.125 → 0.120, no respelling made wrong."""
    if len(span) != len(term) or rb in ra:
        return True
    return any(_zipf(w) > 0 for w in differing)


def similarity(span: Sequence[str], term: Sequence[str]) -> float:
    """How close the words ``span`` (as transcribed) sound and look to ``term`` (as the slide spells
    it), 0–1: the mean of the letters' and the Metaphone keys' normalised Indel ratios over the
    word parts they do not share (1.0 when only the spacing differs, "car not" / "Carnot").

    0.0 — no respelling — when the span already spells the term up to case, accents and plurals;
    when what differs is shorter than :data:`MIN_LETTERS` letters on either side ("new strand" /
    "single-strand" differ by "new" / "single"), less than :data:`MIN_LENGTH_RATIO` as long as the
    other ("square root" / "sqrt"), or looks like another form of the same word
    (:func:`_forms_of_one_word`), whole or word by word, unless the span is a non-word that can
    only be the term misheard (:func:`_may_be_a_form`); and when the span is one everyday English
    word (Zipf ≥ :data:`EVERYDAY_ZIPF`) sharing no word with the term ("called" / "collide"): a
    recognizer that hears an unknown term writes a non-word or several words ("phylocoid",
    "put water" / "pituitary") more often than one clear everyday word."""
    a, b = _parts(span), _parts(term)
    if [_stem(w) for w in a] == [_stem(w) for w in b]:
        return 0.0
    if "".join(a) == "".join(b):
        return 1.0
    shared = {_stem(w) for w in a} & {_stem(w) for w in b}
    ra = "".join(w for w in a if _stem(w) not in shared)
    rb = "".join(w for w in b if _stem(w) not in shared)
    if min(len(ra), len(rb)) < MIN_LETTERS or min(len(ra), len(rb)) < MIN_LENGTH_RATIO * max(len(ra), len(rb)):
        return 0.0
    da = [w for w in a if _stem(w) not in shared]
    db = [w for w in b if _stem(w) not in shared]
    form = _may_be_a_form(span, term, da, ra, rb)
    if form and (_forms_of_one_word(ra, rb) or _forms_of_one_word(_stem(ra), _stem(rb))):
        return 0.0
    if form and any(_one_inside_other(x, y) for x in da for y in db):
        return 0.0  # "winding over" / "Unwinding", "value decomposition" / "eigendecomposition"
    words = [w for w in da if len(w) >= 2]
    if not shared and len(words) == 1 and _zipf(words[0]) >= EVERYDAY_ZIPF:
        return 0.0  # one everyday word, heard clearly, is likelier right than a sound-alike: "square" / "sqrt"
    letters = fuzz.ratio(ra, rb) / 100
    ka, kb = jellyfish.metaphone(ra), jellyfish.metaphone(rb)
    sound = fuzz.ratio(ka, kb) / 100 if ka and kb else 0.0
    return (letters + sound) / 2


def respell(words: Sequence[Word], slides: Sequence[SlideText], *, cutoff: float = CUTOFF,
            margin_s: float = MARGIN_S) -> list[Word]:
    """``words`` (a transcript, times in seconds) with each span that is close to a term of the slide
    on screen (:func:`similarity` ≥ ``cutoff``, said within ``margin_s`` of the slide's time) replaced
    by the term as the slide spells it; the span's punctuation around it is kept and its time is
    shared among the term's words. Left to right, the best match at each word first (the longer
    term on a tie). Words and slides are not changed in place."""
    terms = slide_terms(slides)
    if not terms:
        return list(words)
    shown = {_stem(x) for s in slides for x in _parts(_WORD.findall(s.text))}
    out: list[Word] = []
    i = 0
    while i < len(words):
        t = words[i].start_s
        best: tuple[float, int, int, Term] | None = None
        for term in terms:
            if not (term.start_s - margin_s <= t <= term.end_s + margin_s):
                continue
            k = len(term.words)
            for m in {max(1, k - 1), k, k + 1}:
                span = [w.word for w in words[i:i + m]]
                if len(span) < m:
                    continue
                differing = {_stem(x) for x in _parts(span)} - {_stem(x) for x in _parts(term.words)}
                if differing & shown:  # a word some slide spells is heard right as it is
                    continue
                score = similarity(span, term.words)
                if score >= cutoff and m > 1 and max(similarity(span[1:], term.words),
                                                     similarity(span[:-1], term.words)) >= cutoff:
                    continue  # a word at the span's edge adds nothing ("the phylocoid"): the shorter span is taken
                if score >= cutoff and (best is None or (score, k) > (best[0], best[1])):
                    best = (score, k, m, term)
        if best is None:
            out.append(words[i])
            i += 1
            continue
        _score, k, m, term = best
        span = words[i:i + m]
        lead = _EDGE.match(span[0].word).group(1)
        trail = _EDGE.match(span[-1].word).group(3)
        a, b = span[0].start_s, span[-1].end_s
        step = (b - a) / k
        for j, w in enumerate(term.words):
            text = (lead if j == 0 else "") + w + (trail if j == k - 1 else "")
            out.append(Word(a + j * step, a + (j + 1) * step, text))
        i += m
    return out
