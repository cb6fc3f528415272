"""Exam-prep questions: what a question is, and the extractive writer (no key) that makes cloze
questions of a lecture's key sentences, in any field (see the package docstring)."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np


from ..definitions import defines
from ..disfluency import clean
from .terms import DistractorPicks, EmbedFn, Vocabulary, _content, contains, course_vocabulary, norm, quantities_in, \
    quantity_distractors, quantity_kind, rarity, term_distractors, term_key, terms_in, unit_of

BLANK = "____"
WORDS_PER_MINUTE = 150  # a narrated lecture's pace (speech rate of lectures, ~150 wpm), for a lecture with no times


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
    is correct; ``cite_t_s`` is the start (s) of the explaining sentence ``explaining``.
    ``kind``: term | quantity | model; ``subject``: for a quantity, the term it is stated of."""

    lecture_id: str
    stem: str
    statement: str
    options: list[str]
    answer_index: int
    explanation: str
    cite_lecture_id: str
    cite_t_s: float
    method: str = "extractive"
    kind: str = "term"
    subject: str = ""
    explaining: str = ""
    alternatives: tuple[str, ...] = ()  # more wrong options, nearest first, for a set to vary its options

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


# what a sentence that teaches says, in any field: a definition of a term (services.ask.definitions) ...
# ... or a cause, result, comparison, quantity or step of a process
_TEACHES = re.compile(r"\b(?:because|since|so that|therefore|thus|hence|that is why|which is why|this is why|"
                      r"cause[sd]?|"
                      r"lead[s]? to|result[s]? in|due to|produce[sd]?|depends? on|proportional|equals?|equal to|always|"
                      r"never|only|must|cannot|can't|increase[sd]?|decrease[sd]?|raise[sd]?|lower[sd]?|favou?r[sd]?|"
                      r"than|whereas|unlike|opposite|instead|compared|first|second|third|then|next|finally|after|"
                      r"before|step|stage|phase|begins?|starts?|called|known|percent|at least|at most|largest|smallest|"
                      r"main|most|important|responsible|determin\w*|measures?|allows?|uses?|requires?|needs?|takes?|"
                      r"runs?|costs?|gives?|makes?|converts?|turns?|breaks?|forms?|stores?|splits?|combines?|"
                      r"contains?|consists? of|made of|found in|takes place|happens|occurs?|works?|called)\b", re.I)
# A sentence that announces what the lecture covers ("Today's topic is entropy and the second law …", "Today we
# will look at RSA, the first practical public key cryptosystem") names its terms without teaching them; its
# ordinals and superlatives are no step or comparison. Such a sentence makes a question only of a term it defines.
_AGENDA = re.compile(r"^\W*(?:today(?:'s|’s)? (?:topic|lecture|class|subject)|today,? (?:is|we(?: will|'ll| are going to|'re going to)?"
                     r" (?:look|study|discuss|cover|talk|turn|see|learn|meet|begin|start|introduce))|in (?:this|today's|today’s)"
                     r" (?:lecture|class|session|video)|this (?:lecture|class|session|video) (?:is|covers|introduces|looks)|"
                     r"we(?: will|'ll| are going to|'re going to) (?:look at|study|discuss|cover|talk about|introduce)|"
                     r"let's (?:look at|talk about|start with|turn to)|welcome to|our (?:topic|subject) (?:today )?is)\b", re.I)
_ANAPHOR = re.compile(r"^(?:that|this|it|which|these|those|they|so that|so this|so it|here|there)\b", re.I)
_LEAD = re.compile(r"^(?:(?:so|and|but|now|ok|okay|well|right|all right|alright|then|again|remember|basically|um|uh)"
                   r"[,]?\s+)+", re.I)


def _blank(text: str, phrase: str) -> str | None:
    """``text`` with the one whole-word occurrence of ``phrase`` replaced by ``____`` (None if
    it occurs zero or several times); an occurrence glued to a power, index, product or quotient
    ("1 - e" in "Vs (1 - e^(-t/RC))") is part of a larger expression and is none."""
    pat = re.compile(r"(?<![\w'^_/*-])" + r"\s+".join(map(re.escape, phrase.split())) + r"(?:s|es)?(?![\w'^_/*(-])", re.I)
    found = pat.findall(text)
    if len(found) != 1:
        return None
    out = pat.sub(BLANK, text, count=1)
    return re.sub(r"\b([Aa])n? " + re.escape(BLANK), r"\1(n) " + BLANK, out)


_WHAT = {"term": "term", "quantity": "value", "formula": "expression"}


def _stem(kind: str, lecture_number: int, statement: str) -> str:
    return f"Which {_WHAT.get(kind, 'term')} completes this statement from Lecture {lecture_number}? “{statement}”"


def statement_of(stem: str) -> str:
    """The quoted statement of a stem written by :func:`_stem` (the stem itself otherwise)."""
    m = re.search(r"“(.+)”", stem)
    return m.group(1) if m else stem


def target_questions(duration_s: float) -> int:
    """How many questions a lecture of ``duration_s`` seconds should get: one per two minutes
    of lecture, at least 8 (a set short lectures can fill)."""
    return max(8, math.ceil(max(0.0, duration_s) / 120.0))


@dataclass
class _Course:
    """What the extractive writer knows of the course while writing one lecture's questions."""

    lecture_id: str
    lecture_number: int
    text: list[str]                 # every sentence of the course
    vocab: Vocabulary
    lecture_terms: Counter          # term key -> how often the lecture says it
    embed: EmbedFn | None


def extractive_questions(lecture_id: str, lecture_number: int, sentences: Sequence[LectureSentence],
                         course_text: Sequence[str], *, embed: EmbedFn | None = None, max_questions: int | None = None,
                         max_per_answer: int = 2) -> list[Question]:
    """Cloze questions from one lecture's key sentences, for a lecture of any field (see the
    package docstring).

    ``sentences``: the lecture's sentences in order (times in seconds); ``course_text``: every
    sentence of the course (this lecture included), the only source of options; ``embed``: the
    sentence embedder (texts → L2-normalised rows) that ranks term distractors by meaning (without
    it, by how much the lecture says them). Returns at most ``max_questions`` questions (default:
    1.5 × :func:`target_questions` of the lecture's span, so that the check may drop some) in
    lecture order, unchecked (run :func:`check`)."""
    course_text = list(course_text)
    if max_questions is None:
        span = sentences[-1].end_s - sentences[0].start_s if sentences else 0.0
        max_questions = math.ceil(1.5 * target_questions(span))
    vocab = course_vocabulary(course_text)
    c = _Course(lecture_id, lecture_number, course_text, vocab,
                Counter(term_key(t) for s in sentences for t in terms_in(s.text, vocab)),
                _memo(embed) if embed is not None else None)
    cands: list[tuple[float, Question]] = []
    prev = ""
    for s in sentences:
        text = _LEAD.sub("", clean(s.text)).strip()
        text = text[:1].upper() + text[1:]
        before, prev = prev, text
        for text in _slide_items(text):
            n_words = len(text.split())
            if not 5 <= n_words <= 45 or text.endswith("?"):
                continue
            # a sentence that starts with "that/this/it" is read with the one before it
            context = before + " " if _ANAPHOR.match(text) and 4 <= len(before.split()) <= 35 \
                and not before.endswith("?") else ""
            found = _quantity_question(c, s, text, context) or _term_question(c, s, text, context, n_words)
            if found:
                cands.append(found)
    return _picked(cands, max_questions, max_per_answer)


_SLIDE_ROW = re.compile(r"^(?P<title>[^.?!:;]{1,60}): (?P<body>.+?)\.?$")


def _slide_items(text: str) -> list[str]:
    """A slide's text ("Title: item; item; item.", :func:`lecturecopilot.slidetext.slide_sentence`) as one
    statement per item, each with its title ("Title: item."): a question blanks one thing the slide says,
    not a word of its whole list (a trial's stem was "…; ____: n at least 30; …"). Any other text as it is."""
    m = _SLIDE_ROW.match(text)
    if not m or "; " not in m.group("body"):
        return [text]
    return [f"{m.group('title')}: {item.strip()}." for item in m.group("body").split("; ") if item.strip()]


def _memo(embed: EmbedFn) -> EmbedFn:
    """``embed`` with each text embedded once (the course's terms are compared for every question)."""
    seen: dict[str, np.ndarray] = {}

    def cached(texts: list[str]) -> np.ndarray:
        new = list(dict.fromkeys(t for t in texts if t not in seen))
        if new:
            seen.update(zip(new, embed(new)))
        return np.stack([seen[t] for t in texts]) if texts else embed([])

    return cached


def _quantity_question(c: _Course, s: LectureSentence, text: str, context: str) -> tuple[float, Question] | None:
    """(rank, question) blanking the one quantity or formula of ``text`` (with its unit), stated
    of the sentence's first term (or the context's), or None."""
    qs = quantities_in(text, c.vocab.units)
    if len(qs) != 1:
        return None
    phrase = qs[0]
    if phrase.lower().startswith("minus ") and quantity_kind(phrase, c.vocab.units) == "formula":
        return None  # "index i minus 1": the end of a formula the sentence begins with a word
    here = terms_in(text, c.vocab) or (terms_in(context, c.vocab) if context else [])
    subject = here[0] if here else ""
    dis = quantity_distractors(phrase, subject, c.vocab, c.text)
    rest = _without(context + " " + text, phrase)  # "log n time" inside a said "n log n time" is not said
    if len(dis) != 3 or any(contains(rest, d) for d in dis):
        return None
    statement = _blank(text, phrase)
    if not statement or len(_content(statement)) < 2 or (context and contains(context, phrase)):
        return None
    if not subject and len(_content(statement)) < 6:
        return None  # "That's ____.": about nothing the student could tell
    statement = context + statement
    kind = "quantity" if quantity_kind(phrase, c.vocab.units) == "number" else "formula"
    opts, ai = _order(phrase.lower(), dis, f"{c.lecture_id}:{s.idx}:quantity")
    q = Question(c.lecture_id, _stem(kind, c.lecture_number, statement), statement, opts, ai,
                 f"The lecture says: “{text}”", c.lecture_id, s.start_s, kind="quantity",
                 subject=subject, explaining=s.text)
    return 1.0 + (0.8 if unit_of(phrase, c.vocab.units) else 0.0) + (0.4 if subject else 0.0) \
        + (0.2 if kind == "quantity" else 0.0), q


def _without(text: str, phrase: str) -> str:
    """``text`` (normalised) with the occurrences of ``phrase`` cut out."""
    return f" {norm(text)} ".replace(f" {norm(phrase)} ", " | ")


def _term_question(c: _Course, s: LectureSentence, text: str, context: str,
                   n_words: int) -> tuple[float, Question] | None:
    """(rank, question) blanking the term of ``text`` that it defines, else its most unusual term
    when the sentence teaches something (a cause, result, comparison, step), with 3 distractors
    of the same shape and nearest meaning; or None."""
    here = terms_in(text, c.vocab)
    if not here:
        return None
    cues = len(_TEACHES.findall(text))
    ranked = sorted(here, key=lambda t: (-defines(text, t), -rarity(t) - 0.5 * _local(c, t)))
    for t in ranked[:3]:
        defining = defines(text, t)
        if not defining and (n_words < 8 or cues == 0 or _AGENDA.match(text)):
            continue
        if context and contains(context, t):
            continue
        statement = _blank(text, t)
        if not statement:
            continue
        predicate = statement.replace(BLANK, " ")
        if len(_content(predicate)) < (2 if defining else 3):
            continue
        dis = term_distractors(t, predicate, c.vocab, c.text, c.embed,
                               picks=DistractorPicks(avoid=context + text, lecture_terms=c.lecture_terms, n=6))
        if len(dis) < 3:
            continue
        answer = _display(c, t)
        opts, ai = _order(answer, dis[:3], f"{c.lecture_id}:{s.idx}:term")
        q = Question(c.lecture_id, _stem("term", c.lecture_number, context + statement), context + statement, opts, ai,
                     f"The lecture says: “{text}”", c.lecture_id, s.start_s, kind="term",
                     explaining=s.text, alternatives=tuple(dis[3:]))
        return (1.5 if defining else 0.0) + 0.15 * min(cues, 4) + 0.1 * rarity(t) + 0.5 * _local(c, t) \
            - (0.3 if context else 0.0), q
    return None


def _local(c: _Course, term: str) -> float:
    """The share of the course's mentions of ``term`` that are in this lecture (0–1)."""
    k = term_key(term)
    return c.lecture_terms[k] / max(1, c.vocab.terms.get(k, 1))


def _display(c: _Course, said: str) -> str:
    """A term as an option: as the course spells it (capitals of names and acronyms kept), in
    the number said here ("thylakoids")."""
    surf = c.vocab.surface.get(term_key(said), said).split()
    words = said.split()
    if len(surf) != len(words):
        return said
    last, spelled = words[-1], surf[-1]
    if not (spelled.isupper() or last.isupper()):  # the course's capitals letter by letter, the number said here
        last = "".join(spelled[i] if i < len(spelled) and spelled[i].lower() == ch.lower() else ch.lower()
                       for i, ch in enumerate(last))  # "Stefan-Boltzmann", not "Stefan-boltzmann"
    surf[-1] = last
    return " ".join(surf)


MAX_PER_DISTRACTOR = 2  # a wrong option offered in more questions of one set is one a student learns to skip


def _varied(q: Question, offered: Counter) -> Question:
    """``q`` with each wrong option already offered in :data:`MAX_PER_DISTRACTOR` questions of the set
    (``offered``: lower-case option → questions) replaced by the nearest of its ``alternatives`` that is
    not, where one is left; the answer keeps its place."""
    spare = [a for a in q.alternatives if offered[a.lower()] < MAX_PER_DISTRACTOR]
    options = list(q.options)
    for i, o in enumerate(options):
        if i != q.answer_index and offered[o.lower()] >= MAX_PER_DISTRACTOR and spare:
            options[i] = spare.pop(0)
    return q if options == q.options or len(set(options)) != 4 else replace(q, options=options)


#: The share of the shorter stem's content words the other stem has from which two stems of one answer
#: ask the same: an astronomy trial's set asked the second law twice, from the narration and from its
#: slide (7 of 7 words shared; two questions on one term's two facts shared 1 of 4). Hand-set.
SAME_STEM = 0.8


def _asks_the_same(a: str, b: str) -> bool:
    """Whether stems ``a`` and ``b`` ask the same (:data:`SAME_STEM`)."""
    wa, wb = _content(a), _content(b)
    return bool(wa and wb) and len(wa & wb) >= SAME_STEM * min(len(wa), len(wb))


def _picked(cands: list[tuple[float, Question]], max_questions: int, max_per_answer: int) -> list[Question]:
    """The best ``max_questions`` candidates, at most ``max_per_answer`` with one answer (and no two
    stems of one answer that ask the same, :data:`SAME_STEM`) and one per cited moment, in lecture order, their wrong options varied across the set (:func:`_varied`: a
    trial's set offered "precise estimates" in four of five questions)."""
    cands.sort(key=lambda x: -x[0])
    picked: list[Question] = []
    per_answer: Counter = Counter()
    offered: Counter = Counter()
    for _, q in cands:
        key = q.answer.lower()
        if per_answer[key] >= max_per_answer or any(p.cite_t_s == q.cite_t_s or p.answer.lower() == key
                                                     and _asks_the_same(p.stem, q.stem) for p in picked):
            continue
        q = _varied(q, offered)
        picked.append(q)
        per_answer[key] += 1
        offered.update(o.lower() for i, o in enumerate(q.options) if i != q.answer_index)
        if len(picked) == max_questions:
            break
    return sorted(picked, key=lambda q: q.cite_t_s)
