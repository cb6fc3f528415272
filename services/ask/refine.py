"""Citation refinement: move a citation from wherever the writer put it inside a passage to
the transcript sentence whose words best match the answer sentence, so the click lands on
what is said. Matching is distinctive-word overlap, each shared word weighted by its IDF in
the course (Robertson/Spärck Jones IDF, log((N+1)/(df+0.5))); ties go to the sentence nearest
the writer's time."""

from __future__ import annotations

import math
import re

from lecturecopilot.vocabulary import REFINE_STOP as _STOP

from .ports import SearchIndex

_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> set[str]:
    """Lower-cased words that carry content (stopwords, fillers and 1-letter words removed)."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def refine_time(index: SearchIndex, lecture_id: str, start_s: float, end_s: float, sentence: str,
                t_s: float) -> float:
    """The start (seconds) of the transcript sentence inside [start_s, end_s] that best matches
    ``sentence``; ``t_s`` unchanged when nothing in the passage shares a content word."""
    entry = index.lecture_sentences.get(lecture_id)
    if not entry:
        return t_s
    sents, _ = entry
    inside = [s for s in sents if s.end_s > start_s and s.start_s < end_s]
    if not inside:
        return t_s
    words = content_words(sentence)
    if not words:
        return t_s
    n = len(sents)
    df: dict[str, int] = {}
    for s in sents:
        for w in content_words(s.text) & words:
            df[w] = df.get(w, 0) + 1
    best, best_t = 0.0, t_s
    for s in inside:
        shared = content_words(s.text) & words
        sc = sum(math.log((n + 1) / (df.get(w, 0) + 0.5)) for w in shared)
        if sc > best + 1e-9 or (abs(sc - best) <= 1e-9 and sc > 0 and abs(s.start_s - t_s) < abs(best_t - t_s)):
            best, best_t = sc, max(s.start_s, start_s)
    return best_t
