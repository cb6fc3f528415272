"""The extractive answer writer (no model, no key): the answer is made of sentences the
lecturer said, each cited at the second it was said, so every citation is true by
construction. Disfluencies are removed (:mod:`services.ask.disfluency`: fillers, discourse
markers, hedges, tag questions, repeats), nothing else of what was said changes.
"""

from __future__ import annotations

import re

import numpy as np

from ..definitions import asked_term, defines
from ..disfluency import clean
from ..domain import AnswerSentence, Cite
from ..ports import SearchIndex
from ..retrieve import Passage, best_window
from ..slidequote import slide_excerpt

_CHATTER = re.compile(
    r"^(?:(?:so|and|but|ok(?:ay)?|all right|right|now|yeah|well)[,.]?\s*)*"
    r"(?:does (?:that|this) make sense|any questions|questions|is that clear|right|ok(?:ay)?|all right|"
    r"yeah|yes|yep|sure|exactly|cool|good|great|go ahead|thanks|thank you|everybody (?:with me|good)|"
    r"you (?:see|know))\s*[?.!]*$", re.IGNORECASE)


def is_chatter(text: str) -> bool:
    """True for classroom talk that carries no content ("Does that make sense?", "Right?",
    "OK, any questions?"): trimmed from the edges of an extractive answer."""
    t = clean(text)
    return bool(_CHATTER.match(t)) or len(re.findall(r"[A-Za-z]{3,}", t)) < 2


_TAG_QUESTION = re.compile(r"(?:,\s*(?:right|ok(?:ay)?|yeah|yes|no|huh|correct|see)|\bright)\s*\?+\s*$", re.IGNORECASE)


def is_question(text: str) -> bool:
    """True for a sentence that asks ("How many permutations are there?"), not for one that only
    ends on a tag ("They're terrible at that, right?")."""
    t = text.rstrip()
    return t.endswith("?") and not _TAG_QUESTION.search(t)


# A sentence opening on a relative pronoun continues the one before it: speech recognition split "But this is a
# technique called open addressing, which is much more common ..." after "addressing"
_CONTINUES = re.compile(r"^\W*(?:which|whose|whom)\b", re.IGNORECASE)


def continues(text: str) -> bool:
    """True for a sentence that is the rest of the one before it ("Which is much more common than …"),
    not for a question ("Which one is faster?")."""
    return bool(_CONTINUES.match(text)) and not is_question(text)


MIN_RUN_WORDS = 15  # fewer words than this ("This is what we call radix sort. Radix sort.") is no answer yet
MAX_RUN = 4         # sentences an answer may grow to


def _words(sents: list, query: str | None = None) -> int:
    """Words the sentences show in an answer: a slide's are its quoted item's for ``query``
    (:func:`slide_excerpt`), none without a query (a slide's heading and items are not the lecture
    explaining, and the whole slide is never shown)."""
    return sum(len(re.findall(r"[A-Za-z0-9]+", clean(s.text) if getattr(s, "kind", "speech") != "slide"
                              else slide_excerpt(s.text, query, is_chatter) if query is not None else ""))
               for s in sents)


def answer_run(sents: list, i: int, j: int) -> tuple[int, int]:
    """The answer's sentences ``sents[i:j]`` adjusted so the answer does not open on the question
    it answers or on classroom talk: while the run opens with a question ("How many permutations
    are there?", :func:`is_question`) or chatter ("Does that make sense?") and the segment has a
    sentence after the run, the run moves one sentence forward (the answer follows the question);
    then chatter at either end is dropped, never the last sentence. A run of fewer than
    ``MIN_RUN_WORDS`` words then takes the segment's next sentences (up to ``MAX_RUN``), and one that
    ends on a question takes the sentence answering it, or, at ``MAX_RUN`` or the segment's end,
    stops before the question; a slide's words do not count towards ``MIN_RUN_WORDS`` (only its one
    quoted item is shown: the demo's "What is chaining?" was the slide's item and "So this is an idea
    called chaining."). A run opening on the rest of the sentence before it (:func:`continues`) starts
    on that sentence (its end moves back only past ``MAX_RUN``). ``sents`` have a ``text``; returns
    the new ``(i, j)``, ``i < j``."""
    while j < len(sents) and (is_question(sents[i].text) or is_chatter(sents[i].text)):
        i += 1
        j += 1
    while i > 0 and continues(sents[i].text) and getattr(sents[i - 1], "kind", "speech") != "slide" \
            and not is_question(sents[i - 1].text) and not is_chatter(sents[i - 1].text):
        i -= 1
        j -= 1 if j - i > MAX_RUN else 0
    while j - i > 1 and is_chatter(sents[i].text):
        i += 1
    while j - i > 1 and is_chatter(sents[j - 1].text):
        j -= 1
    while j < len(sents) and j - i < MAX_RUN and _words(sents[i:j]) < MIN_RUN_WORDS:
        j += 1
    if j - i > 1 and is_question(sents[j - 1].text):
        if j < len(sents) and j - i < MAX_RUN and not is_question(sents[j].text):
            j += 1
        else:
            j -= 1
    while j - i > 1 and is_chatter(sents[j - 1].text):  # what growing took in ("Yeah.")
        j -= 1
    return i, j


def _fresh_ranges(sents: list, said: set[tuple[str, float]], lecture_id: str) -> list[tuple[int, int]]:
    """The maximal ``[lo, hi)`` ranges of ``sents`` holding no sentence already ``said`` (a
    (lecture_id, start_s) the previous answer cited; starts compared to 0.05 s)."""
    out, lo = [], 0
    for k, s in enumerate(sents):
        if any(lid == lecture_id and abs(t - s.start_s) < 0.05 for lid, t in said):
            if k > lo:
                out.append((lo, k))
            lo = k + 1
    if lo < len(sents):
        out.append((lo, len(sents)))
    return out


def passage_sentences(index: SearchIndex, hit) -> tuple[list, np.ndarray] | None:
    """The sentences of ``hit``'s segment that start inside the hit (0.05 s either side) and their
    embeddings: the whole segment for a retrieved passage, the part inside a moment's window for one
    clipped to it (:func:`services.ask.moment.moment_passages`); None when there is none."""
    entry = index.sentences.get((hit.lecture_id, hit.segment_idx))
    if not entry:
        return None
    sents, vecs = entry
    keep = [k for k, s in enumerate(sents) if hit.start_s - 0.05 <= s.start_s <= hit.end_s + 0.05]
    if len(keep) == len(sents):
        return entry
    return ([sents[k] for k in keep], vecs[keep]) if keep else None


FROM_PASSAGES = 3  # the best passages an extractive answer is taken from
WIDTHS = (2, 3)    # the lengths (sentences) of the runs it scores


def extractive_answer(index: SearchIndex, passages: list[Passage], query: str, query_vec: np.ndarray,
                      *, rank_penalty: float = 0.15, said: set[tuple[str, float]] | None = None
                      ) -> list[AnswerSentence]:
    """The answer: the best run of 2–3 (:data:`WIDTHS`) consecutive transcript sentences among the best
    :data:`FROM_PASSAGES` passages, each sentence cleaned and cited at the second it starts.

    A run's score is the cosine between the query and the normalised sum of its sentences'
    embeddings, minus ``rank_penalty`` per rank of its passage (retrieval's judgement counts
    too). Consecutive sentences keep the citations together on the moment that answers; the
    share of citations inside the gold span is measured by ``python -m evals.answers``. The run is
    then moved past a question it opens with, and grown when too short (:func:`answer_run`: up to
    ``MAX_RUN`` sentences). The run opens the answer; the sentences :func:`_more` adds follow it, in
    lecture order (in lecture order among all, an earlier moment that only shares words came first:
    first citation inside the gold span 0.380 → 0.451 on MIT 6.006 dev, inside the part 0.824 →
    0.892 on the fields dev lectures as captions, no other figure moved; today's figures: ``python -m
    evals.answer_rules``, history: ``evals/README.md``).

    A question asking what a term is (:func:`services.ask.definitions.asked_term`: "What is
    perihelion?") opens on a sentence defining it: in the run when it holds one, else the first in
    ``passages`` (a later mention may share more of the question's words; MIT 6.006 dev first citation
    inside 0.451 → 0.465, ``python -m evals.answer_rules``).

    ``said``: sentences the previous answer of the conversation cited, as (lecture_id, start_s), for
    "why?" and "say that more simply": runs are then taken only from sentences not said yet, at least
    two in a row, from the passages that answer cited when they have such a run (the explanation
    around it), else from the others; a follow-up never repeats the answer.
    """
    best: tuple[float, Passage, list, int, int] | None = None
    pool = list(enumerate(passages[:FROM_PASSAGES]))
    if said:  # go on where the last answer was: the passages it cited come first, if they have more to say
        held = [(rank, p) for rank, p in enumerate(passages) if any(
            lid == p.hit.lecture_id and p.hit.start_s - 0.05 <= t <= p.hit.end_s + 0.05 for lid, t in said)]
        pool = held + [(rank, p) for rank, p in pool if (rank, p) not in held]
    for rank, p in pool:
        entry = passage_sentences(index, p.hit)
        if not entry:
            continue
        sents, vecs = entry
        ranges = _fresh_ranges(sents, said, p.hit.lecture_id) if said else [(0, len(sents))]
        ranges = [(lo, hi) for lo, hi in ranges if hi - lo >= 2] if said else ranges
        cos, i, j = max((best_window(vecs, query_vec, WIDTHS, lo, hi) for lo, hi in ranges),
                        default=(-1.0, 0, 0), key=lambda b: b[0])
        score = cos - rank_penalty * rank + (10.0 if said and (rank, p) in held else 0.0)
        if j > i and (best is None or score > best[0]):
            best = (score, p, sents, i, j)
    if best is None:  # nothing left unsaid in these passages: the best run, even if said before
        return extractive_answer(index, passages, query, query_vec, rank_penalty=rank_penalty) if said else []
    _, p, sents, i, j = best
    if not said:  # "What is a keystone species?" opens on the sentence that defines it
        p, sents, i, j = _on_definition(index, passages, query, (p, sents, i, j))
    if said:  # keep the run inside its fresh range
        lo, hi = next((lo, hi) for lo, hi in _fresh_ranges(sents, said, p.hit.lecture_id) if lo <= i < hi)
        i, j = answer_run(sents[:hi], i, j)
    else:
        i, j = answer_run(sents, i, j)
    run = [(p, s) for s in sents[i:j]]
    more = [] if said else _more(index, passages[:FROM_PASSAGES], query, query_vec, run)
    return _written(run + sorted(more, key=lambda ps: (ps[0].hit.lecture_number, ps[1].start_s)), query)


def _defines(sentence, term: str) -> bool:
    kind = getattr(sentence, "kind", "speech")
    return defines(sentence.text if kind == "slide" else clean(sentence.text), term, slide=kind == "slide")


def _on_definition(index: SearchIndex, passages: list[Passage], query: str,
                   run: tuple[Passage, list, int, int]) -> tuple[Passage, list, int, int]:
    """``run`` (passage, its sentences, i, j) opened on the sentence defining the term ``query`` asks
    about (:func:`services.ask.definitions.asked_term`): the run's own when it holds one, else the first
    in ``passages`` (:func:`_definition`); ``run`` unchanged for any other question or when none does."""
    term = asked_term(query)
    if not term:
        return run
    p, sents, i, j = run
    k = next((k for k in range(i, j) if _defines(sents[k], term)), None)
    return (p, sents, k, max(j, k + 1)) if k is not None else _definition(index, passages, term) or run


def _definition(index: SearchIndex, passages: list[Passage], term: str) -> tuple[Passage, list, int, int] | None:
    """The first sentence, in the order of ``passages``, that defines ``term``
    (:func:`services.ask.definitions.defines`) as ``(passage, its sentences, k, k + 1)``, or None.
    "What is perihelion?" opens on where the lecture defines it, not on a later mention that shares
    more of the question's words."""
    for p in passages:
        entry = passage_sentences(index, p.hit)
        for k, s in enumerate(entry[0] if entry else []):
            if _defines(s, term):
                return p, entry[0], k, k + 1
    return None


TARGET_WORDS = 60     # an answer of about this many words, unless the question asks for more
DETAIL_WORDS = 120    # "explain in detail", "step by step", "elaborate"
MORE_WITHIN = 0.08    # another sentence joins when its cosine is within this of the best sentence's
_DETAIL = re.compile(r"\b(?:in (?:more )?detail|step by step|elaborate|thoroughly|in depth|everything about|"
                     r"more about|walk me through)\b", re.IGNORECASE)


def _more(index: SearchIndex, passages: list[Passage], query: str, query_vec: np.ndarray,
          run: list[tuple[Passage, object]]) -> list[tuple[Passage, object]]:
    """Sentences of the top passages that add to the anchor ``run``: single sentences whose
    cosine with the query is within ``MORE_WITHIN`` of the best one's, not questions, chatter,
    fragments (under 6 words) or the rest of a split sentence (:func:`continues`), not already in
    the answer, best first, until the answer holds
    ``TARGET_WORDS`` words (``DETAIL_WORDS`` when the question asks for detail). When the anchor
    is too short to answer (under ``MIN_RUN_WORDS``: it ends its passage, after the lecturer's own
    question "What's the worst case performance of a hash table?", which is the sentence most like
    the student's), the best is taken among the sentences that could join, so the ones that answer
    are measured against each other, not against the question (measured: ``python -m
    evals.answers``, answers under 15 words). Returns (passage, sentence) pairs."""
    target = DETAIL_WORDS if _DETAIL.search(query) else TARGET_WORDS
    have = _words([s for _, s in run], query)
    if have >= target:
        return []
    taken = {(pp.hit.lecture_id, round(s.start_s, 2)) for pp, s in run}
    cands = []
    for p in passages:
        entry = passage_sentences(index, p.hit)
        if not entry:
            continue
        sents, vecs = entry
        cos = vecs @ query_vec
        for k, s in enumerate(sents):
            cands.append((float(cos[k]), p, s, not is_question(s.text) and not is_chatter(s.text)
                          and not continues(s.text) and len(clean(s.text).split()) >= 6))
    best = max((c for c, _, _, ok in cands if ok or have >= MIN_RUN_WORDS), default=-1.0)
    out: list[tuple[Passage, object]] = []
    for c, p, s, ok in sorted(cands, key=lambda x: -x[0]):
        if c < best - MORE_WITHIN or have >= target:
            break
        key = (p.hit.lecture_id, round(s.start_s, 2))
        if key in taken or not ok:
            continue
        out.append((p, s))
        taken.add(key)
        have += _words([s], query)
    return out


def _written(run: list[tuple[Passage, object]], query: str = "") -> list[AnswerSentence]:
    """The answer's sentences in lecture order, cleaned of disfluencies and cited where each starts
    (a slide shown as a slide, :func:`slide_excerpt`); chatter inside a run ("Yeah, go ahead.") is
    left out."""
    out: list[AnswerSentence] = []
    for p, s in run:
        text = slide_excerpt(s.text, query, is_chatter) if getattr(s, "kind", "speech") == "slide" else clean(s.text, opening=not out)
        if text and not (len(run) > 1 and _CHATTER.match(text)) and not _repeats(text, out):
            out.append(AnswerSentence(text, [Cite(p.hit.lecture_id, p.hit.lecture_number, s.start_s)]))
    return out


REPEAT_SHARE = 0.8  # a sentence whose words are this much in an earlier one says nothing new


def _repeats(text: str, earlier: list[AnswerSentence]) -> bool:
    """True when ``REPEAT_SHARE`` of ``text``'s words (3+ letters) are in one sentence already written:
    a slide that shows what is then said ("On the slide “Hashing”: “So this is an idea called
    chaining, …”" then "So this is an idea called chaining.") is not said twice."""
    words = set(re.findall(r"[a-z0-9]{3,}", text.lower())) - {"slide"}
    if not words:
        return False
    return any(len(words & set(re.findall(r"[a-z0-9]{3,}", e.text.lower()))) >= REPEAT_SHARE * len(words)
               for e in earlier)
