"""Exam prep's text helpers: containment, the course's own terms (found statistically, for any
field), spoken quantities and formulas, and the distractors a question may offer (every option
is a phrase the course itself says).

Nothing here names a subject. A *term* is a run of content words that the course uses as a
name: a phrase it says at least twice ("calvin cycle", "hash table", "price elasticity of
demand"), or one word that is rare in general English yet said in the course ("chlorophyll",
"rubisco", "eigenvector"): rarity is wordfreq's Zipf frequency (log10 of occurrences per billion
words, Speer et al., wordfreq 3). A *quantity* is a spoken number or formula with its unit
("twenty five degrees celsius", "n log n time", "one over the square root of mu naught times
epsilon naught"); a unit is a word the course says after numbers or formulas. Options of one
question are of one kind: terms of similar meaning (embedding cosine) and shape, or quantities
with the same unit.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from lecturecopilot.vocabulary import TERM_ZIPF

from .quantities import _units, canonical, math_distance, quantities_in, quantity_kind, unit_of
from .words import _HEDGE, _NOUN_BEFORE, _VERB_BEFORE, EmbedFn, _boundary, _content, _singular, _tokens, contains, \
    norm, same_term, zipf

# -- the course's terms ---------------------------------------------------------------------------
RARE_ZIPF = 4.3      # one word below this (≈ 20 per million words: "array" 4.1, "stimulus" 3.8) can be a term alone


@dataclass
class Vocabulary:
    """What the course calls things: ``terms`` (term → times said), ``surface`` (term → the
    spelling said most, capitals kept), ``quantities`` (canonical quantity → its most said phrase),
    ``units`` (words said after numbers or formulas), ``classes`` (noun, adjective or verb, from the
    course's word order)."""

    def word_class(self, term: str) -> str:
        """noun | adjective: the class of a term's last word in this course."""
        last = norm(term).split()[-1] if norm(term) else ""
        return self.classes.of(last) if self.classes else "noun"


    terms: Counter = field(default_factory=Counter)
    surface: dict[str, str] = field(default_factory=dict)
    units: frozenset[str] = frozenset()
    classes: _Classes | None = None
    quantities: dict[str, str] = field(default_factory=dict)

    def __contains__(self, term: str) -> bool:
        return term in self.terms


def _key(words: Sequence[str]) -> str:
    """A term's key: lower case, its last word singular ("light reactions" → "light reaction")."""
    w = [x.lower() for x in words]
    return " ".join(w[:-1] + [_singular(w[-1])])


def _runs(text: str) -> list[list[str]]:
    """Runs of content tokens (letters, not boundary words), "of" kept inside a run."""
    runs, cur = [], []
    for tok in _tokens(_HEDGE.sub(" , ", text)) + ["."]:
        low = tok.lower()
        if tok[0].isalpha() and (len(tok) > 2 or tok.isupper() and len(tok) == 2) and not _boundary(low):
            cur.append(tok)
        elif low == "of" and cur:
            cur.append(tok)
        else:
            while cur and cur[-1].lower() == "of":
                cur.pop()
            if cur:
                runs.append(cur)
            cur = []
    return runs


def _grams(run: list[str], max_n: int = 4) -> Iterable[list[str]]:
    for n in range(1, max_n + 1):
        for i in range(len(run) - n + 1):
            g = run[i:i + n]
            if g[0].lower() == "of" or g[-1].lower() == "of" or sum(w.lower() == "of" for w in g) > 1:
                continue
            yield g


_BE = frozenset("is are was were be been being very more less too so quite most".split())
_DET_AFTER = frozenset("the a an its their his her our your this these those it them".split())


@dataclass(frozen=True)
class _Classes:
    """What the course's own word order says of its words: ``verbs`` (said after a subject
    pronoun, a modal or "to", or right before a determiner: "it absorbs", "to fix", "favours the",
    and their -s/-es/-ed/-ing forms), ``adjectives`` (said after "is", "very", "more": "demand is
    inelastic") and ``nouns`` (said after a determiner or "of": "the stroma")."""

    verbs: frozenset[str]
    adjectives: frozenset[str]
    nouns: frozenset[str]

    def of(self, word: str) -> str:
        """noun | adjective | verb for one lower-case word (verb also for an -ed/-ing/-ly/-est
        word never said as a noun)."""
        if word.endswith("ly") and len(word) > 4:  # an adverb ("terribly") is no name
            return "verb"
        for cut in (3, 4, 2):  # "smallest", "biggest", "shorter": a comparison, not a name
            if word.endswith(("est", "er")) and len(word) > 5 and zipf(word[:-cut]) > zipf(word) + 0.5 \
                    and word[-cut:] in ("est", "gest", "er", "test", "ter"):
                return "verb"
        if word in self.nouns:
            return "noun"
        if word in self.verbs or word.endswith(("ed", "ing", "ly", "est")) and len(word) > 5:
            return "verb"
        if word in self.adjectives:
            return "adjective"
        return "noun"


def _classes(sentences: Sequence[str]) -> _Classes:
    verb, noun, adj = Counter(), Counter(), Counter()
    for s in sentences:
        w = [t.lower() for t in _tokens(s)]
        for i, b in enumerate(w):
            a = w[i - 1] if i else "."
            c = w[i + 1] if i + 1 < len(w) else "."
            if a in _VERB_BEFORE:
                verb[b] += 1
            elif a in _NOUN_BEFORE:
                noun[b] += 1
            elif a in _BE:
                adj[b] += 1
            if c in _DET_AFTER and a not in _NOUN_BEFORE:
                verb[b] += 1
    verbs = set()
    for v in verb:
        if v in noun:
            continue
        verbs |= {v, v + "s", v + "es", v + "ed", v + "d", v + "ing", v[:-1] + "ing" if v.endswith("e") else v}
        if v.endswith("y"):
            verbs |= {v[:-1] + "ies", v[:-1] + "ied"}
        if v.endswith(("s", "es", "ed", "ing")):  # "absorbs" → "absorb", "absorbing"
            stem = re.sub(r"(?:es|s|ed|ing)$", "", v)
            verbs |= {stem, stem + "s", stem + "es", stem + "ed", stem + "ing"}
    nouns = frozenset(noun)
    verbs_f = frozenset(v for v in verbs if v not in nouns)
    return _Classes(verbs_f, frozenset(a for a in adj if a not in nouns and a not in verbs_f), nouns)


def course_vocabulary(sentences: Iterable[str]) -> Vocabulary:
    """The course's terms, units and quantities from all its sentences (see the module docstring).

    A phrase of 2–4 content words is a term when said at least twice and one of its words has a
    Zipf frequency below ``TERM_ZIPF``; a single word when its Zipf frequency is below
    ``RARE_ZIPF`` (or it is said capitalised, a name, or in capitals, an acronym) and the course
    never uses it as a verb; a word English does not know (Zipf 0) only when said twice (said once it is
    more often a mishearing: a trial's marked answer "humbers"). Nested terms said as often are dropped."""
    sentences = list(sentences)
    classes = _classes(sentences)
    grams: Counter = Counter()
    surfaces: dict[str, Counter] = {}
    cased: dict[str, Counter] = defaultdict(Counter)  # a word capitalised inside a sentence: its spellings
    lower: Counter = Counter()
    for s in sentences:
        for run in _runs(s):
            for g in _grams(run):
                k = _key(g)
                grams[k] += 1
                surfaces.setdefault(k, Counter())[" ".join(w.lower() for w in g)] += 1
        toks = _tokens(s)
        for i, tok in enumerate(toks):
            if tok[:1].isupper() and i and toks[i - 1] not in ".!?:\"“":
                cased[tok.lower()][tok] += 1  # "Stefan-Boltzmann", capitals kept
            elif tok[:1].islower():
                lower[tok] += 1
    caps = {}
    for s in sentences:
        for tok in _tokens(s):
            if len(tok) >= 2 and tok.isupper() and tok.isalpha():
                caps[tok.lower()] = tok  # an acronym: "ATP", "RSA"
    terms: Counter = Counter()
    for k, n in grams.items():
        words = k.split()
        said = surfaces[k].most_common(1)[0][0].split()
        if classes.of(said[-1]) == "verb" or said[0] in classes.verbs or said[-1].endswith("'s") or \
                len(words) > 1 and classes.of(said[-1]) == "adjective":
            continue
        if len(words) == 1:
            w = words[0]
            if zipf(w) < RARE_ZIPF and (n >= 2 or zipf(w) > 0) or cased[w].total() > lower[w] or w in caps:
                terms[k] = n
        elif n >= 2 and min(zipf(x) for x in words if x != "of") < TERM_ZIPF:
            terms[k] = n
    # a word or phrase said only inside one longer term is that term ("calvin" in "calvin cycle")
    for k in list(terms):
        if any(k != o and terms[o] >= terms[k] and f" {k} " in f" {o} " for o in terms):
            del terms[k]
    def shown(w: str) -> str:
        if w in caps:
            return caps[w]
        return cased[w].most_common(1)[0][0] if cased[w].total() > lower[w] else w

    surface = {k: " ".join(shown(w) for w in surfaces[k].most_common(1)[0][0].split()) for k in terms}
    units = _units(sentences)
    quantities: dict[str, Counter] = {}
    for s in sentences:
        for q in quantities_in(s, units):
            quantities.setdefault(canonical(q), Counter())[q.lower()] += 1
    return Vocabulary(terms, surface, units, classes, {c: n.most_common(1)[0][0] for c, n in quantities.items()})


def course_terms(sentences: Iterable[str]) -> Counter:
    """The course's terms (see :func:`course_vocabulary`) → times said."""
    return course_vocabulary(sentences).terms


def _run_terms(run: list[str], vocab: Vocabulary) -> list[str]:
    """The course terms in one run of content tokens (see :func:`_runs`), longest first where
    they overlap, in order of occurrence."""
    n = len(run)
    used = [False] * n
    found = []
    for size in range(min(4, n), 0, -1):
        for i in range(n - size + 1):
            g = run[i:i + size]
            if any(used[i:i + size]) or _key(g) not in vocab.terms:
                continue
            found.append((i, " ".join(g)))
            used[i:i + size] = [True] * size
    return [t for _, t in sorted(found)]


def terms_in(text: str, vocab: Vocabulary) -> list[str]:
    """The course terms said in ``text``, longest first where they overlap, in order of
    occurrence; as the text spells them ("Calvin cycle")."""
    out, taken = [], []
    for run in _runs(text):
        taken += _run_terms(run, vocab)
    for t in taken:
        if _key(t.split()) not in [_key(o.split()) for o in out]:
            out.append(t)
    return out


known_terms = terms_in


def term_key(term: str) -> str:
    """The vocabulary key of a term as said ("Light reactions" → "light reaction")."""
    return _key(term.split())


# -- quantities and formulas ------------------------------------------------------------------------
def quantity_distractors(answer: str, subject: str, vocab: Vocabulary, course: Sequence[str],
                         n: int = 3) -> list[str]:
    """Up to ``n`` quantities the course says (as it says them) of the answer's kind (number or
    formula) and unit, with a different value, never one the course states for ``subject`` (in a
    sentence naming it); those sharing most words with the answer first (the nearest confusion:
    "log n time" for "n log n time")."""
    unit, kind = unit_of(answer, vocab.units), quantity_kind(answer, vocab.units)
    mine = canonical(answer)
    stated = {canonical(q) for s in course if contains(s, subject)
              for q in quantities_in(s, vocab.units)} if subject else set()
    aw = set(norm(answer).split())
    cands = []
    for c, phrase in vocab.quantities.items():
        if c == mine or c in stated or contains(answer, phrase) or contains(phrase, answer) or \
                unit_of(phrase, vocab.units) != unit or \
                quantity_kind(phrase, vocab.units) != kind:
            continue
        w = set(norm(phrase).split())
        cands.append((-len(aw & w) / max(1, len(aw | w)), phrase))
    out: list[str] = []
    for _, p in sorted(cands):
        if all(canonical(p) != canonical(o) and not contains(o, p) and not contains(p, o) for o in out):
            out.append(p)
        if len(out) == n:
            break
    return out


# -- distractors for a term ---------------------------------------------------------------------------
def _shape(term: str) -> str:
    """name (capitalised words), acronym (capitals), or word."""
    words = term.split()
    if any(len(w) >= 2 and w.isupper() for w in words):
        return "acronym"
    if words[0][:1].isupper():
        return "name"
    return "word"


@dataclass(frozen=True)
class DistractorPicks:
    """How :func:`term_distractors` picks its terms.

    ``avoid``: text whose terms are never offered (the explaining sentence); ``lecture_terms``:
    the lecture's term keys → times said (when no ``embed`` is given they rank the candidates,
    and a term said in the lecture gets a small bonus); ``n``: the most terms offered;
    ``overlap``: the share (0–1) of the predicate's content words that a course sentence naming
    a term must share for the course to say the same thing of that term; ``too_close``: the
    embedding cosine at or above which a term is a near-synonym of the answer. ``overlap`` and
    ``too_close`` are values set by hand with the extractive writer; ``python -m evals.examprep``
    measures their effect."""

    avoid: str = ""
    lecture_terms: Counter | None = None
    n: int = 3
    overlap: float = 0.34
    too_close: float = 0.86


def _term_candidates(answer: str, vocab: Vocabulary, avoid: str) -> list[str]:
    """The course's terms (as it spells them) of the answer's shape, length ±1 word and word class,
    other than the answer and the terms said in ``avoid``."""
    akey = term_key(answer)
    shape, cls = _shape(vocab.surface.get(akey, answer)), vocab.word_class(answer)
    cands = []
    for k in vocab.terms:
        t = vocab.surface.get(k, k)
        if k == akey or same_term(t, answer) or (avoid and contains(avoid, t)):
            continue
        if abs(len(t.split()) - len(answer.split())) > 1 or _shape(t) != shape or vocab.word_class(t) != cls:
            continue
        cands.append(t)
    return cands


def _nearest_first(answer: str, cands: list[str], embed: EmbedFn | None, picks: DistractorPicks) -> list[str]:
    """``cands`` nearest in meaning to ``answer`` first (cosine plus a bonus for terms of the
    lecture and for sharing the answer's last word), near-synonyms (cosine ≥ ``too_close``) left out."""
    lt = picks.lecture_terms or Counter()
    if embed is not None:
        vecs = embed([answer] + cands)
        sims = vecs[1:] @ vecs[0]
    else:
        sims = np.array([0.0] * len(cands))
    scored = []
    for t, sim in zip(cands, sims):
        if sim >= picks.too_close:
            continue
        bonus = 0.05 * min(3, lt.get(term_key(t), 0)) + (0.03 if t.split()[-1].lower() == answer.split()[-1].lower()
                                                         else 0.0)
        scored.append((-(float(sim) + bonus), t))
    return [t for _, t in sorted(scored)]


def _in_number(t: str, plural: bool, course: Sequence[str]) -> str:
    """``t`` in the plural when the answer is plural and the course says that plural, else as it is."""
    if plural and not norm(t).endswith("s"):
        form = t + ("es" if t.endswith(("s", "x", "ch", "sh")) else "s")
        if any(contains(s, form) for s in course):
            return form
    return t


def term_distractors(answer: str, predicate: str, vocab: Vocabulary, course: Sequence[str], embed: EmbedFn | None,
                     *, picks: DistractorPicks = DistractorPicks()) -> list[str]:
    """Up to ``picks.n`` course terms a student could take for ``answer``: nearest in meaning
    first (cosine of their embeddings, when ``embed`` is given; else the terms of the lecture,
    most said first), of the same shape (a name for a name, an acronym for an acronym, as many
    words ±1) and number (plural for plural). Left out: terms nested in / containing the answer
    or each other, near-synonyms (cosine ≥ ``picks.too_close``), terms said in ``picks.avoid``
    (the explaining sentence), and any term the course says the same thing of (a sentence with
    the term sharing ``picks.overlap`` of ``predicate``'s content words). Kinds of one thing
    ("fixed hash function" / "deterministic hash function") are not offered against each other:
    they are too often synonyms. See :class:`DistractorPicks`."""
    pred = _content(predicate) - set(norm(answer).split())
    last = norm(answer).split()[-1]
    plural = _singular(last) != last
    cands = _term_candidates(answer, vocab, picks.avoid)
    if not cands:
        return []
    out: list[str] = []
    for t in _nearest_first(answer, cands, embed, picks):
        if any(same_term(t, o) for o in out) or any(
                len(x.split()) > 2 and norm(t).split()[-2:] == norm(x).split()[-2:] for x in out + [answer]):
            continue
        if pred and any(contains(s, t) and len(pred & _content(s)) >= max(1, int(picks.overlap * len(pred)))
                        for s in course):
            continue
        out.append(_in_number(t, plural, course))
        if len(out) == picks.n:
            break
    return out


def rarity(term: str) -> float:
    """How unusual a term is in general English: 7 minus the lowest Zipf frequency of its words
    (higher is rarer; "chlorophyll" 4.3, "light reactions" 2.7)."""
    return 7.0 - min((zipf(w) for w in norm(term).split() if w != "of"), default=7.0)


__all__ = ["DistractorPicks", "EmbedFn", "Vocabulary", "canonical", "contains", "course_terms", "course_vocabulary", "known_terms",
           "math_distance", "norm", "quantities_in", "quantity_distractors", "rarity", "same_term", "term_distractors",
           "term_key", "terms_in", "unit_of", "zipf"]
