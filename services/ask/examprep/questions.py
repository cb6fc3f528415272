"""Exam-prep questions: what a question is, and the extractive writer (no key) that makes cloze
questions of a lecture's key sentences (see the package docstring)."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from lecturecopilot.labels import citation_label

from ..write import clean
from .terms import _content, course_terms, known_terms, running_times, term_distractors, time_distractors, \
    time_vocabulary

BLANK = "____"
EmbedFn = Callable[[list[str]], np.ndarray]  # texts -> L2-normalised (n, d) float32


@dataclass(frozen=True)
class LectureSentence:
    """One transcript sentence of a lecture (``sentences`` row); times in seconds."""

    idx: int
    start_s: float
    end_s: float
    text: str


@dataclass
class Question:
    """A multiple-choice question. ``statement`` is the cloze (with ``____``) or, for model
    questions, the question itself; ``options`` has 4 distinct strings, ``options[answer_index]``
    is correct; ``cite_t_s`` is the start (s) of the explaining sentence ``explaining``."""

    lecture_id: str
    stem: str
    statement: str
    options: list[str]
    answer_index: int
    explanation: str
    cite_lecture_id: str
    cite_t_s: float
    method: str = "extractive"
    kind: str = "term"          # term | time | model
    subject: str = ""           # time questions: the term whose running time is asked
    explaining: str = ""

    @property
    def answer(self) -> str:
        return self.options[self.answer_index]


def _order(answer: str, distractors: list[str], key: str) -> tuple[list[str], int]:
    """The 4 options in a stable pseudo-random order (seeded by ``key``) and the answer's index."""
    opts = [answer] + distractors
    seed = int(hashlib.sha1(key.encode()).hexdigest()[:8], 16)
    rng = np.random.default_rng(seed)
    perm = list(rng.permutation(len(opts)))
    ordered = [opts[i] for i in perm]
    return ordered, perm.index(0)


_DEFINES = (r"(?:is|are|was)\s+(?:a|an|the|called|just|basically|really|going to be|what|how|something)\b",
            r"(?:takes|runs|costs|gives|lets|stores|maps|uses|sorts|requires|supports|works)\b")
# a sentence that states a result (not only one that mentions a term)
_RESULT = re.compile(r"\b(?:stable|in place|worst case|expected|lower bound|upper bound|faster|slower|at least|at most|"
                     r"running time|runs? in|takes?|costs?|linear|constant|logarithmic|quadratic|minimum|maximum|"
                     r"height|comparisons|collisions?|guarantee[sd]?|always|never|only if|if and only if|because)\b",
                     re.I)
_ANAPHOR = re.compile(r"^(?:that|this|it|which|these|those|so that|so this|so it)\b", re.I)
_LEAD = re.compile(r"^(?:(?:so|and|but|now|ok|okay|well|right|all right|alright|then|again|remember|basically)[,]?\s+)+",
                   re.I)


def _blank(text: str, phrase: str) -> str | None:
    """``text`` with the one whole-word occurrence of ``phrase`` replaced by ``____`` (None if
    it occurs zero or several times)."""
    pat = re.compile(r"\b" + r"\s+".join(map(re.escape, phrase.split())) + r"s?\b", re.I)
    found = pat.findall(text)
    if len(found) != 1:
        return None
    out = pat.sub(BLANK, text, count=1)
    return re.sub(r"\b([Aa])n? " + re.escape(BLANK), r"\1(n) " + BLANK, out)


def _stem(kind: str, lecture_number: int, statement: str) -> str:
    what = "running time" if kind == "time" else "term"
    return f"Which {what} completes this statement from Lecture {lecture_number}? “{statement}”"


def statement_of(stem: str) -> str:
    """The quoted statement of a stem written by :func:`_stem` (the stem itself otherwise)."""
    m = re.search(r"“(.+)”", stem)
    return m.group(1) if m else stem


@dataclass
class _Course:
    """What the extractive writer knows of the course while writing one lecture's questions."""

    lecture_id: str
    lecture_number: int
    text: list[str]                 # every sentence of the course
    terms: Counter                  # course terms said at least twice
    lecture_terms: Counter          # how often the lecture says each
    ranked_terms: list[str]         # course terms, most said first
    vocab: dict[str, str]           # running-time class -> the course's phrase for it


def extractive_questions(lecture_id: str, lecture_number: int, sentences: Sequence[LectureSentence],
                         course_text: Sequence[str], *, max_questions: int = 8,
                         max_per_answer: int = 2) -> list[Question]:
    """Cloze questions from one lecture's key sentences (see the package docstring).

    ``sentences``: the lecture's sentences in order; ``course_text``: every sentence of the
    course (this lecture included), the only source of options. Returns at most
    ``max_questions`` questions in lecture order, unchecked (run :func:`check`)."""
    course_text = list(course_text)
    cterms = course_terms(course_text)
    c = _Course(lecture_id, lecture_number, course_text, cterms,
                Counter(t for s in sentences for t in known_terms(s.text, cterms)),
                [t for t, _ in cterms.most_common()], time_vocabulary(course_text))
    cands: list[tuple[float, Question]] = []
    prev = ""
    for s in sentences:
        text = _LEAD.sub("", clean(s.text)).strip()
        text = text[:1].upper() + text[1:]
        before, prev = prev, text
        n_words = len(text.split())
        if not 5 <= n_words <= 45 or text.endswith("?"):
            continue
        here = known_terms(text, cterms)
        times = running_times(text)
        # time question: one running time, one named subject (in the sentence, or in the one
        # before when this one starts with "that/this/it/which")
        context = ""
        if len(times) == 1 and not here and _ANAPHOR.match(text) and 5 <= len(before.split()) <= 35 \
                and not running_times(before) and not before.endswith("?"):
            here_before = known_terms(before, cterms)
            if len(here_before) == 1:
                here, context = here_before, before + " "
        if len(times) == 1 and here and (context or n_words >= 7):
            found = _time_question(c, s, text, here[0], times[0], context)
            if found:
                cands.append(found)
                continue
        # term question: a defining sentence about a distinctive term
        if context or n_words < 7:
            continue
        found = _term_question(c, s, text, here, n_words)
        if found:
            cands.append(found)
    return _picked(cands, max_questions, max_per_answer)


def _time_question(c: _Course, s: LectureSentence, text: str, subject: str, time: tuple[str, str],
                   context: str) -> tuple[float, Question] | None:
    """(rank, question) blanking the one running time ``time`` (class, phrase) of ``text`` about
    ``subject`` (the first term named: most often the sentence's subject), or None."""
    cls, phrase = time
    dis = time_distractors(cls, subject, c.vocab, c.text)
    statement = _blank(text, phrase)
    statement = context + statement if statement else None
    if not statement or len(dis) != 3:
        return None
    opts, ai = _order(phrase.lower(), dis, f"{c.lecture_id}:{s.idx}:time")
    label = citation_label(c.lecture_number, s.start_s)
    q = Question(c.lecture_id, _stem("time", c.lecture_number, statement), statement, opts, ai,
                 f"The lecture says: “{text}” ({label})", c.lecture_id, s.start_s, kind="time",
                 subject=subject, explaining=s.text)
    return 2.0 + 0.1 * c.lecture_terms[subject], q


def _term_question(c: _Course, s: LectureSentence, text: str, here: list[str],
                   n_words: int) -> tuple[float, Question] | None:
    """(rank, question) blanking the most distinctive term of ``here`` that ``text`` defines or
    states a result of, with 3 distractors of the same role, or None."""
    for t in sorted(here, key=lambda t: -c.lecture_terms[t] / c.terms[t]):
        m = re.search(r"\b" + re.escape(t) + r"s?\s+(?:" + "|".join(_DEFINES) + r")", text, re.I)
        called = re.search(r"\b(?:(?:called|known as)\s+(?:an?\s+|the\s+)?|(?:i|we)\s+(?:like to |'m going to |am "
                           r"going to |will |would )?call(?:\s+it|\s+this|\s+that)?\s+(?:an?\s+)?)" + re.escape(t)
                           + r"|\b" + re.escape(t) + r"s?\s+means\b", text, re.I)
        defining = bool(m or called)
        distinct = c.lecture_terms[t] / c.terms[t]
        if not defining and (n_words < 10 or distinct < 0.6 or not _RESULT.search(text)):
            continue
        statement = _blank(text, t)
        if not statement:
            continue
        predicate = statement.replace(BLANK, " ")
        if len(_content(predicate)) < (3 if defining else 5):
            continue
        dis = term_distractors(t, predicate, c.ranked_terms, c.text)
        if len(dis) < 3:
            continue
        opts, ai = _order(t, dis, f"{c.lecture_id}:{s.idx}:term")
        label = citation_label(c.lecture_number, s.start_s)
        q = Question(c.lecture_id, _stem("term", c.lecture_number, statement), statement, opts, ai,
                     f"The lecture says: “{text}” ({label})", c.lecture_id, s.start_s, kind="term",
                     explaining=s.text)
        return (1.0 if defining else 0.0) + distinct + (0.5 if m else 0.0), q
    return None


def _picked(cands: list[tuple[float, Question]], max_questions: int, max_per_answer: int) -> list[Question]:
    """The best ``max_questions`` candidates, at most ``max_per_answer`` with one answer and one
    per cited moment, in lecture order."""
    cands.sort(key=lambda x: -x[0])
    picked: list[Question] = []
    per_answer: Counter = Counter()
    for _, q in cands:
        if per_answer[q.answer] >= max_per_answer or any(p.cite_t_s == q.cite_t_s for p in picked):
            continue
        picked.append(q)
        per_answer[q.answer] += 1
        if len(picked) == max_questions:
            break
    return sorted(picked, key=lambda q: q.cite_t_s)
