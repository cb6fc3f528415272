"""Exam prep's spoken quantities and formulas: a number or formula the course says with its unit
("twenty five degrees celsius", "n log n time"), a unit being a word the course says after numbers or
formulas; its canonical form, unit and kind (see :mod:`.terms` for how questions use them)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

from lecturecopilot.vocabulary import MATH_WORDS as _MATH_WORDS
from lecturecopilot.vocabulary import NUMBER_WORDS as _NUMBER_WORDS
from lecturecopilot.vocabulary import SPOKEN_MATH_SAME as _SAME
from lecturecopilot.vocabulary import TERM_STOP as _STOP
from lecturecopilot.vocabulary import TITLE_FILLERS as _FILLERS

from .words import _NUMBERS, _TOKEN, _boundary, _tokens, norm

_VARIABLE = re.compile(r"^[a-z]$|^\d")
_GLUE = frozenset("of the to by and".split())  # inside a formula: "square root of", "to the minus seven", "divided by"
_BINARY = frozenset("plus times over divided by to of the and equals".split())  # never at either end of a formula


def _mathy(low: str) -> bool:
    return low in _NUMBERS or low in _MATH_WORDS or bool(_VARIABLE.match(low)) and low not in ("a", "i")


def _math_runs(text: str) -> list[tuple[int, int, list[str]]]:
    """(start, end, tokens) of each run of spoken math: numbers, variables, operators and the
    words that join them ("ten to the minus twelve"), trimmed of operators at either end."""
    toks = _tokens(text)
    out, i = [], 0
    while i < len(toks):
        if _mathy(toks[i].lower()) and toks[i].lower() not in _GLUE:
            j = i
            while j + 1 < len(toks):
                k = j + 1
                while k < len(toks) and toks[k].lower() in _GLUE:
                    k += 1
                if k < len(toks) and _mathy(toks[k].lower()) and toks[k].lower() not in _GLUE:
                    j = k
                else:
                    break
            a, b = i, j + 1
            while a < b and toks[a].lower() in _BINARY:
                a += 1
            while b > a and (toks[b - 1].lower() in _BINARY or toks[b - 1].lower() in ("minus", "point")):
                b -= 1
            if a < b:
                out.append((a, b, toks[a:b]))
            i = j + 1
        else:
            i += 1
    return out


def _number_only(words: Sequence[str]) -> bool:
    return all(w.lower() in _NUMBERS or w[0].isdigit() or w.lower() in ("point", "and", "minus", "percent")
               for w in words)


def _worth_asking(words: Sequence[str]) -> bool:
    """A number worth a question: of two number words or more ("twenty five", "six hundred"), in
    digits, or ten and over ("fifty"); not a count like "two students"."""
    low = [w.lower() for w in words if w.lower() in _NUMBERS or w[0].isdigit()]
    return len(low) >= 2 or any(w[0].isdigit() for w in low) or any(
        w in _NUMBERS and _NUMBER_WORDS.get(w, 99) >= 10 for w in low)


def _is_quantity(words: list[str]) -> bool:
    """A number of two words or more ("twenty five"), or a formula: an operator with a number or
    a variable ("p minus one", "n log n", "one over the square root of mu naught")."""
    low = [w.lower() for w in words]
    has_num = any(w in _NUMBERS or w[0].isdigit() for w in low)
    has_var = any(len(w) == 1 and w.isalpha() and w not in ("a", "i") or _MATH_WORDS.get(w) == "variable"
                  for w in low)
    has_op = any(_MATH_WORDS.get(w) == "operator" for w in low)
    return bool(has_op and (has_num or has_var) or has_num and len(low) >= 2 and _number_only(words) or
                has_var and len([w for w in low if w not in _GLUE]) >= 2)


def _units(sentences: Sequence[str]) -> frozenset[str]:
    """Units: content words said right after a number ("twenty five degrees", "fifty percent"), or
    words said at least twice after a formula or an order of growth ("n log n time", "linear time")."""
    after_number, after_formula = Counter(), Counter()
    for s in sentences:
        toks = _tokens(s)
        for i, j, words in _math_runs(s):
            if j >= len(toks) or not toks[j].isalpha() or len(toks[j]) < 2 or toks[j].lower() in _MATH_WORDS:
                continue
            w = toks[j].lower()
            if _number_only(words):
                if not _boundary(w):
                    after_number[w] += 1
            elif (_is_quantity(words) or all(_MATH_WORDS.get(x.lower()) == "growth" for x in words)) \
                    and w not in _STOP and w not in _FILLERS:
                after_formula[w] += 1
    return frozenset(after_number) | frozenset(w for w, n in after_formula.items() if n >= 2)


def quantities_in(text: str, units: frozenset[str]) -> list[str]:
    """The spoken quantities and formulas of ``text`` as written there (``text``'s own characters), each with its unit when the next
    words are course units ("theta of n time", "twenty five degrees Celsius", "p minus one times
    q minus one", "three times ten to the eight meters per second"). A growth word ("linear",
    "constant") counts only before a unit."""
    toks = _tokens(text)
    spans = [m.span() for m in _TOKEN.finditer(text)]  # each token's place, so a phrase is quoted as written
    out = []
    for i, j, words in _math_runs(text):
        k = j
        if k < len(toks) and toks[k].lower() in units:
            k += 1
            if k < len(toks) and (toks[k].lower() in units or toks[k][:1].isupper() and toks[k].isalpha()):
                k += 1  # "degrees Celsius"
            if k + 1 < len(toks) and toks[k].lower() == "per" and toks[k + 1].isalpha():
                k += 2  # "meters per second"
        unit = toks[j:k]
        growth = all(_MATH_WORDS.get(w.lower()) == "growth" for w in words)
        if growth and not unit:
            continue  # "constant", "linear" alone: an adjective, not a quantity
        numeric = any(w.lower() in _NUMBERS or w[0].isdigit() for w in words)
        if not (_is_quantity(words) or unit and (growth or numeric)):
            continue
        if _number_only(words) and not _worth_asking(words):
            continue
        out.append(text[spans[i][0]:spans[k - 1][1]] if k > i else " ".join(words + unit))
    return out


def canonical(quantity: str) -> str:
    """A quantity's meaning as words, for telling two spellings of one value apart from two
    values: the spoken-math equivalents of :data:`lecturecopilot.vocabulary.SPOKEN_MATH_SAME`
    applied ("theta of n time", "order n time" and "linear time" → "n time")."""
    t = f" {norm(quantity)} "
    for a, b in _SAME:
        t = t.replace(f" {a} ", f" {b} ")
    return " ".join(t.split())


def unit_of(quantity: str, units: frozenset[str]) -> str:
    """The unit words at the end of a quantity as :func:`quantities_in` gives it ("" for none)."""
    words = norm(quantity).split()
    i = len(words)
    while i > 0 and not _mathy(words[i - 1]):
        i -= 1
    return " ".join(words[i:])


def quantity_kind(quantity: str, units: frozenset[str]) -> str:
    """number (a value: "twenty five degrees celsius", "nineteen seventy seven") or formula."""
    words = norm(quantity).split()
    body = words[:len(words) - len(unit_of(quantity, units).split())] if unit_of(quantity, units) else words
    return "number" if _number_only(body) else "formula"


def math_distance(a: str, b: str) -> float:
    """1 − Jaccard overlap of the words of two quantities (0 the same words, 1 none shared)."""
    x, y = set(norm(a).split()), set(norm(b).split())
    return 1.0 - len(x & y) / max(1, len(x | y))
