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
A word the course never says but says in full is written as it says it: a compound ("lookup" → "look
up") or an acronym ("CLT" → "central limit theorem"; :func:`compounds`).
Zero-width and bidi control characters are dropped first (:func:`fold`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path

import wordfreq
from rapidfuzz.distance import OSA

from lecturecopilot.vocabulary import NUMBER_WORDS, NUMBER_WORDS_LARGE, TERM_STOP, TERM_ZIPF
from lecturecopilot.vocabulary import SPELLING_KEEP as _KEEP

_WORD = re.compile(r"[A-Za-z]+|[^A-Za-z]+")
MIN_COUNT = 1  # 2 left "quelos", "housholder", "schwan" uncorrected (evals.gate_fields; docs/experiments.md)
DICTIONARY = Path("/usr/share/dict/words")  # Debian's wamerican: correct English words are left alone


@lru_cache(maxsize=1)
def _dictionary() -> tuple[str, ...]:
    """The system word list's words as written there (empty when it isn't installed)."""
    try:
        return tuple(w.strip() for w in DICTIONARY.read_text(errors="ignore").splitlines() if w.strip())
    except OSError:
        return ()


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Lower-case words of the system word list (empty when it isn't installed)."""
    return frozenset(w.lower() for w in _dictionary())


@lru_cache(maxsize=1)
def lower_case_words() -> frozenset[str]:
    """The words of the system word list written in lower case there (not names or abbreviations:
    "cat", not "Ci" or "CNS"); empty when it isn't installed."""
    return frozenset(w for w in _dictionary() if w.islower())


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


# Words left out of an acronym's letters, as in "law of large numbers" (LLN) or "degrees of freedom" (DF)
_ACRONYM_SKIPS = frozenset("of the a an and to in for on".split())


def _names(word: str) -> bool:
    """Whether ``word`` can be a word of a thing's name: 3 letters or more, not a function, filler or
    number word (:data:`lecturecopilot.vocabulary.TERM_STOP`, :data:`~lecturecopilot.vocabulary.NUMBER_WORDS`)."""
    return len(word) >= 3 and word not in TERM_STOP and word not in NUMBER_WORDS and word not in NUMBER_WORDS_LARGE


def compounds(segments: list[list[str]], vocabulary: dict[str, int]) -> dict[str, str]:
    """The words a course never says but says in full, keyed by that word, for :func:`correct`.

    ``segments``: each segment's lower-case words in order; ``vocabulary``: the course's words with
    counts. Two kinds:

    - a compound: two words said side by side at least twice (at least 2 letters each, 6 together)
      whose joined word the course never says: {"lookup": "look up", "maxheap": "max heap"};
    - an acronym: the initials of a phrase of 2–4 words that can name a thing (:func:`_names`; "of",
      "and" … inside it skipped: :data:`_ACRONYM_SKIPS`), one of them less common in English than
      :data:`lecturecopilot.vocabulary.TERM_ZIPF`, said at least twice: {"clt": "central limit
      theorem", "lln": "law of large numbers"}. A student writes the acronym of what the lecture
      says in full. When the initials are a lower-case English word (:func:`lower_case_words`: "etc",
      not "ci" or "cns") or the course says them too (a slide's "ETC"), the key is in capitals,
      {"ETC": "electron transport chain"}, and of three letters or more ("ID", "AT" are words and
      abbreviations of every course): only an acronym typed in capitals stands for it, and the phrase
      is added beside it. When two phrases give the same letters, the one said more than twice as
      often as the other wins, or the one phrase that skips no word if no other is said more often
      ("consumer price index" over "change in a price index"); else neither is taken.
    """
    pairs = Counter(f"{a} {b}" for words in segments for a, b in zip(words, words[1:])
                    if len(a) >= 2 and len(b) >= 2 and len(a) + len(b) >= 6 and a + b not in vocabulary)
    out = {p.replace(" ", ""): p for p, n in pairs.items() if n >= 2}
    phrases: Counter = Counter()
    for words in segments:
        for i, w in enumerate(words):
            if not _names(w):
                continue
            content = [w]
            for j in range(i + 1, min(len(words), i + 7)):
                if words[j] in _ACRONYM_SKIPS:
                    continue
                if not _names(words[j]) or len(content) == 4:
                    break
                content.append(words[j])
                phrases[(" ".join(words[i:j + 1]), "".join(c[0] for c in content))] += 1
    by_letters: dict[str, list[tuple[int, str]]] = {}
    for (phrase, letters), n in phrases.items():
        if n >= 2 and min(wordfreq.zipf_frequency(w, "en") for w in phrase.split() if w not in _ACRONYM_SKIPS) < TERM_ZIPF:
            by_letters.setdefault(letters, []).append((n, phrase))
    for letters, found in by_letters.items():
        found.sort(reverse=True)
        whole = [(n, p) for n, p in found if len(p.split()) == len(letters)]  # no word skipped
        if len(found) == 1 or found[0][0] > 2 * found[1][0]:
            phrase = found[0][1]
        elif len(whole) == 1 and whole[0][0] == found[0][0]:
            phrase = whole[0][1]  # "consumer price index", not "(percentage) change in a price index"
        else:
            continue
        if letters not in vocabulary and letters not in lower_case_words():
            out.setdefault(letters, phrase)
        elif len(letters) >= 3:  # "ETC"; never "ID", "AT", "IN": words and abbreviations of every course
            out.setdefault(letters.upper(), phrase)
    return out


def _split(word: str, vocabulary: dict[str, int], compounds: dict[str, str]) -> str:
    """``word`` as the course's two words when it says them and never ``word`` ("lookup" → "look
    up", "Lookup" → "Look up", and a plural: "lookups" → "look ups"), an acronym of what it says as
    the phrase ("CLT" → "central limit theorem"; one of two letters only typed in capitals: "CI", not
    "ci"), an acronym typed in capitals that the course also says, followed by its phrase ("ETC" →
    "ETC electron transport chain"); else ``word``."""
    low = word.lower()
    typed = word[:-1] if word.endswith("s") and word[:-1].isupper() else word  # "ETCs": the plural of "ETC"
    if typed.isupper() and typed in compounds:  # an acronym the course also says, or an English word's letters
        return f"{word} {compounds[typed]}{'s' if typed != word else ''}"
    if low in vocabulary or (len(low.removesuffix("s")) < 3 and not word[:2].isupper()):
        return word
    if low in compounds:
        two = compounds[low]
    elif low.endswith("s") and low[:-1] in compounds and low[:-1] not in vocabulary:
        two = compounds[low[:-1]] + "s"
    else:
        return word
    return two.capitalize() if word[0].isupper() and not word[:2].isupper() else two  # "CLT": an acronym, not a capital
