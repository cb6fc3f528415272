"""Misspelled words in a question, corrected towards the course's own vocabulary
("mrege sort" → "merge sort"), so a typo doesn't turn a covered question into a decline.

A word is corrected only when all of these hold: it is not in the course's vocabulary; it is
not an English word (Debian's word list, ``wamerican``: "print" stays "print"); it is
lower-case (capitalised words mid-sentence are names: "Dijkstra", "AVL"); it has at least 3
letters; a course word (one said once counts: a name a lecture says once, "Queloz", is what a
student misspells) starts with the same letter and is at
optimal-string-alignment distance 1 (2 from 8 letters on; a swap of two neighbours counts 1,
rapidfuzz's ``OSA``). Question words ("what", "how") are candidates too. The nearest wins, then one
with the same letters (a swap: "opne" → "open", not "one"), then the most frequent; everything else
is left as typed. A course word's plural is a target too when the course never says it ("tabels" →
"tables" in a lecture that says "table"; search stems it back), and a word of three letters that is
not English is corrected only to a question or function word ("wat" → "what", "teh" → "the").
Zero-width and bidi control characters are dropped first (:func:`fold`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

from rapidfuzz.distance import OSA

from lecturecopilot.vocabulary import SPELLING_KEEP as _KEEP

_WORD = re.compile(r"[A-Za-z]+|[^A-Za-z]+")
MIN_COUNT = 1  # 2 left "quelos", "housholder", "schwan" uncorrected (evals.gate_fields; docs/experiments.md)
DICTIONARY = Path("/usr/share/dict/words")  # Debian's wamerican: correct English words are left alone


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Lower-case words of the system word list (empty when it isn't installed)."""
    try:
        return frozenset(w.strip().lower() for w in DICTIONARY.read_text(errors="ignore").splitlines())
    except OSError:
        return frozenset()


def fold(question: str) -> str:
    """``question`` as the English-only search sees it: accents folded ("chaîning" → "chaining",
    NFKD without combining marks) and letters of other scripts and emoji left out ("what is
    chaining? 日本語" → "what is chaining?"), unless that would leave no Latin letter."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", question)
                    if not unicodedata.combining(c) and unicodedata.category(c) != "Cf")  # zero-width, bidi controls
    latin = " ".join("".join(" " if unicodedata.category(c) in ("Lo", "So") else c for c in plain).split())
    return latin if re.search(r"[A-Za-z]", latin) else question


def correct(question: str, vocabulary: dict[str, int], compounds: dict[str, str] | None = None) -> str:
    """``question`` folded (:func:`fold`), with out-of-vocabulary words replaced by their closest
    course word, and a word the course never says but says as two (``compounds``, joined form →
    the two words: :meth:`EmbeddedSearchIndex.course_compounds`) written as the course says it:
    "is lookup constant time?" → "is look up constant time?" in a lecture that says "look up". A
    compound is a correction target too ("is lookpu constant?" → "is look up constant?")."""
    question = fold(question)
    if compounds:
        question = re.sub(r"[A-Za-z]+", lambda m: _split(m.group(0), vocabulary, compounds), question)
    if not vocabulary:
        return question
    by_letter: dict[str, list[str]] = {}
    for w, n in vocabulary.items():
        if n >= MIN_COUNT and len(w) >= 3:
            by_letter.setdefault(w[0], []).append(w)
            if w + "s" not in vocabulary:  # a plural the course never says is a target too: "tabels" → "tables"
                by_letter[w[0]].append(w + "s")
    for w in (*_KEEP, *(compounds or ())):  # question words are targets too: "waht" → "what", not the course's
        if len(w) >= 3 and w not in vocabulary:  # "want"; so are compounds: "lookpu" → "look up"
            by_letter.setdefault(w[0], []).append(w)
    out = []
    first_word = True
    for tok in _WORD.findall(question):
        if not tok.isalpha():
            out.append(tok)
            continue
        is_first, first_word = first_word, False
        low = tok.lower()
        if (len(tok) < 3 or low in vocabulary or low in _KEEP or low in english_words()
                or (tok[0].isupper() and not is_first)
                or any(c.isupper() for c in tok[1:])):
            out.append(tok)
            continue
        limit = 2 if len(low) >= 8 else 1
        short = len(low) == 3  # "wat", "hwo", "teh": a question or function word only, never a course word
        cands = [w for w in by_letter.get(low[0], []) if abs(len(w) - len(low)) <= limit
                 and (not short or w in _KEEP) and OSA.distance(low, w, score_cutoff=limit) <= limit]
        if not cands:
            out.append(tok)
            continue
        # nearest first; then a swap of letters ("opne" → "open", not "one"); then the most said
        best = max(cands, key=lambda w: (-OSA.distance(low, w), sorted(w) == sorted(low), vocabulary.get(w, 0)))
        best = (compounds or {}).get(best, best) if best not in vocabulary else best
        out.append(best if tok.islower() else best.capitalize())
    return "".join(out)


def _split(word: str, vocabulary: dict[str, int], compounds: dict[str, str]) -> str:
    """``word`` as the course's two words when it says them and never ``word`` ("lookup" → "look
    up", "Lookup" → "Look up", and a plural: "lookups" → "look ups"); else ``word``."""
    low = word.lower()
    if low in vocabulary:
        return word
    if low in compounds:
        two = compounds[low]
    elif low.endswith("s") and low[:-1] in compounds and low[:-1] not in vocabulary:
        two = compounds[low[:-1]] + "s"
    else:
        return word
    return two.capitalize() if word[0].isupper() else two
