"""Exam prep's text helpers: containment, course terms and their roles, running times, and the
distractors a question may offer (every option is a phrase the course itself says)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

from lecturecopilot.vocabulary import NEAR_TIME_CLASSES as _NEAR
from lecturecopilot.vocabulary import TERM_HEADS as _HEADS
from lecturecopilot.vocabulary import TERM_STOP as _STOP

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


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
    return any(sa[i:i + n] == sb for i in range(len(sa) - n + 1)) or any(
        sb[i:i + n] == sa for i in range(len(sb) - n + 1))



_TERM = re.compile(r"\b((?:[a-z][a-z'-]* ){1,4})(" + "|".join(_HEADS) + r")s?\b")


def role_of(term: str) -> str:
    """The role of a term, from its head noun: algorithm | structure | function | model."""
    return _HEADS.get(term.split()[-1], "other")


def terms_in(text: str) -> list[str]:
    """Candidate course terms in ``text``: a head noun (sort, search, array, table, list, tree,
    function, model, ...) with the content words just before it ("direct access array",
    "merge sort"); leading function words are cut, a bare head is not a term."""
    out = []
    for m in _TERM.finditer(text.lower()):
        mods = m.group(1).split()
        keep: list[str] = []
        for w in reversed(mods):
            if w in _STOP or not w.isalpha() or len(w) < 3:
                break
            keep.insert(0, w)
        if keep:
            out.append(" ".join(keep[-3:] + [m.group(2)]))
    return out


def _suffixes(term: str) -> list[str]:
    """"supports binary search" → ["supports binary search", "binary search"] (two words at least)."""
    w = term.split()
    return [" ".join(w[i:]) for i in range(len(w) - 1)]


def course_terms(sentences: Iterable[str], min_count: int = 2) -> Counter:
    """Terms (see :func:`terms_in`, and their endings of two words or more: "supports binary
    search" counts for "binary search") said at least ``min_count`` times in the given text."""
    c = Counter(x for s in sentences for t in terms_in(s) for x in _suffixes(t))
    return Counter({t: n for t, n in c.items() if n >= min_count})


def known_terms(text: str, vocabulary: Counter | dict) -> list[str]:
    """The terms of ``text`` found in ``vocabulary`` (longest known ending of each), in order."""
    out = []
    for t in terms_in(text):
        hit = next((x for x in _suffixes(t) if x in vocabulary), None)
        if hit and hit not in out:
            out.append(hit)
    return out


# running-time classes, longest forms first so "n log n time" is not read as "log n time"
_TIME_CLASSES: list[tuple[str, str]] = [
    ("n factorial", r"n factorial"),
    ("n log n", r"(?:order |theta of |big o of )?n log n"),
    ("n squared", r"(?:order |theta of )?(?:n squared|quadratic)"),
    ("n plus u", r"(?:order |theta of )?n plus u"),
    ("log n", r"(?:order |theta of )?(?:log n|logarithmic)"),
    ("constant", r"(?:order one|order 1|theta of 1|constant)"),
    ("linear", r"(?:order n|theta of n|big o of n|linear)"),
]
_TIME = re.compile(r"\b(?:" + "|".join(f"(?P<c{i}>{p})" for i, (_, p) in enumerate(_TIME_CLASSES)) + r") time\b",
                   re.I)


def running_times(text: str) -> list[tuple[str, str]]:
    """(class, phrase as said) of each running time in ``text``: "takes theta of n time" →
    [("linear", "theta of n time")]. Classes: n factorial, n log n, n squared, n plus u,
    log n, constant, linear."""
    out = []
    for m in _TIME.finditer(text):
        for i, (cls, _) in enumerate(_TIME_CLASSES):
            if m.group(f"c{i}"):
                out.append((cls, m.group(0)))
                break
    return out


def time_vocabulary(sentences: Iterable[str]) -> dict[str, str]:
    """For each running-time class said in the course, its most frequent phrase (lower case)."""
    by: dict[str, Counter] = {}
    for s in sentences:
        for cls, phrase in running_times(s):
            by.setdefault(cls, Counter())[phrase.lower()] += 1
    return {cls: c.most_common(1)[0][0] for cls, c in by.items()}




def time_distractors(answer_cls: str, subject: str, vocab: dict[str, str], course: Sequence[str],
                     n: int = 3) -> list[str]:
    """Up to ``n`` running-time phrases of other classes (as the course says them) that the
    course never states for ``subject``; nearest confusions first."""
    stated = {cls for s in course if contains(s, subject) for cls, _ in running_times(s)}
    out = []
    for cls in _NEAR.get(answer_cls, []) + [c for c, _ in _TIME_CLASSES]:
        if cls != answer_cls and cls in vocab and cls not in stated and vocab[cls] not in out:
            out.append(vocab[cls])
    return out[:n]


def _content(text: str) -> set[str]:
    return {w for w in norm(text).split() if w not in _STOP and len(w) > 2}


def term_distractors(answer: str, predicate: str, terms: Sequence[str], course: Sequence[str],
                     n: int = 3, overlap: float = 0.34) -> list[str]:
    """Up to ``n`` course terms of the same role as ``answer`` (most said first), excluding
    terms nested in / containing the answer or each other, and any term the course says the
    same thing of (a sentence with the term sharing ``overlap`` of ``predicate``'s content words).
    Kinds of one thing ("fixed hash function" / "deterministic hash function") are not
    offered against each other: they are too often synonyms. A function with too few other
    functions to stand against gets data structures (hash function / hash table is the classic
    confusion)."""
    role = role_of(answer)
    pred = _content(predicate) - set(answer.split())
    out: list[str] = []
    roles = [role] + (["structure"] if role == "function" else [])
    for t in sorted(terms, key=lambda t: roles.index(role_of(t)) if role_of(t) in roles else len(roles)):
        if t == answer or role_of(t) not in roles or any(same_term(t, o) for o in out + [answer]) \
                or any(len(x.split()) > 2 and t.split()[-2:] == x.split()[-2:] for x in out + [answer]):  # kinds of one thing
            continue
        if pred and any(contains(s, t) and len(pred & _content(s)) >= max(1, int(overlap * len(pred))) for s in course):
            continue
        out.append(t)
        if len(out) == n:
            break
    return out
