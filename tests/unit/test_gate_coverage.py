"""The gate's coverage: the question's topic words said in the passages it would be answered from,
not anywhere in the course; a topic of everyday words only counts half; a rare subject the course never
says, nor anything like it, declines."""

import re
import zlib

import numpy as np

from services.ask.gate import EVERYDAY_SHARE, Evidence, covered, evidence
from services.ask.retrieve import Passage
from services.ask.search_index import Hit

COURSE = [
    "The Calvin cycle fixes carbon dioxide into sugar in the stroma of plants.",
    "RuBisCO is the enzyme of the Calvin cycle and it sometimes grabs oxygen instead.",
    "Next week we look at C4 grasses and the bundle sheath, which are not part of this unit.",
    "Light reactions in the thylakoid split water and release oxygen.",
    "I have time, so let us look at one more example of the cycle.",
]


STOP = {"what", "is", "it", "the", "how", "do", "does", "of", "and", "a", "an", "in", "into", "around", "instead",
        "so", "us", "at", "one", "more", "next", "we", "are", "not", "part", "this", "which", "sometimes"}


def _tokens(text: str) -> list[int]:
    """BM25-like token ids: words without stop words (the real index's BM25 drops them too)."""
    return sorted({zlib.crc32(w.encode()) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP})


class Index:
    """The parts of the search index the gate reads, over COURSE (one lecture, one segment a line)."""

    sentences: dict = {}

    def course_df(self, course_id):
        df = {}
        for text in COURSE:
            for t in _tokens(text):
                df[t] = df.get(t, 0) + 1
        return len(COURSE), df

    def query_tokens(self, text):
        return _tokens(text)

    def passage_tokens(self, hit):
        return frozenset(_tokens(hit.text))

    def course_vocabulary(self, course_id):
        words = [w for text in COURSE for w in re.findall(r"[a-z]+", text.lower())]
        return {w: words.count(w) for w in words}


def _passages(*idx: int) -> list[Passage]:
    return [Passage(Hit(f"l:{i}", "l", 1, i, 10.0 * i, 10.0 * i + 9, COURSE[i], 0.0), 1.0) for i in idx]


def _coverage(question: str, *top: int) -> float:
    return evidence(Index(), "c", _passages(*top), question, np.zeros(4, dtype=np.float32)).coverage


def test_a_subject_the_course_names_elsewhere_is_not_covered_by_the_passages_that_answer():
    # "C4" and "bundle sheath" are said in the course, not in the Calvin-cycle passages retrieved
    q = "How do C4 plants concentrate carbon dioxide around the bundle sheath?"
    assert _coverage(q, 0, 1) < 0.5
    assert _coverage(q, 0, 1, 2) > 0.75  # all but "concentrate"


def test_a_question_whose_words_the_passages_say_is_covered():
    assert _coverage("Which enzyme of the Calvin cycle grabs oxygen?", 0, 1) == 1.0


def test_a_topic_of_everyday_words_only_counts_half():
    assert _coverage("what time is it?", 4) == EVERYDAY_SHARE
    assert _coverage("what is the thylakoid?", 3) == 1.0


def test_background_passages_keep_an_everyday_word_from_outweighing_the_course_topic():
    """Over a course of 5 passages, 4 of which say "chaining": with no background the unsaid verb
    "handle" weighs about 8.5 times "chaining"; with the background it weighs less than 3 times, while a
    rare term the course never says ("thylakoid") still outweighs "handle"."""
    from services.ask.gate import idf_with_background

    n = 5
    topic0, verb0 = idf_with_background("chaining", 4, n, 0), idf_with_background("handle", 0, n, 0)
    assert abs(topic0 - np.log(6 / 4.5)) < 1e-9 and verb0 / topic0 > 8
    topic, verb = idf_with_background("chaining", 4, n, 10), idf_with_background("handle", 0, n, 10)
    assert verb / topic < 3
    assert idf_with_background("thylakoid", 0, n, 10) > verb
    # a big course: the background barely moves a rare term's weight
    assert abs(idf_with_background("thylakoid", 3, 2000, 10) - np.log(2001 / 3.5)) < 0.01


def _unsaid(question: str) -> str | None:
    return evidence(Index(), "c", _passages(0, 1), question, np.zeros(4, dtype=np.float32)).unsaid


def test_a_rare_subject_the_course_never_says_declines_however_strong_the_score():
    """"Michaelis-Menten" is rare in English, the course never says it nor a word like it: whatever the
    passages' wording, the lectures do not treat it (the fields benchmark's near-topic question)."""
    assert _unsaid("What is the Michaelis-Menten equation for the Calvin cycle enzyme?") == "Michaelis-Menten"
    assert not covered(Evidence(window=0.99, coverage=1.0, score=9.0, unsaid="Michaelis-Menten"), 0.82)
    assert covered(Evidence(window=0.99, coverage=1.0, score=9.0), 0.82)


def test_a_rare_word_the_course_says_or_nearly_says_does_not_decline():
    assert _unsaid("What does RuBisCO grab instead of carbon dioxide?") is None  # said
    assert _unsaid("Where is the thylacoid?") is None  # a misspelling of a course word: close in letters
    assert _unsaid("Why is the Calvin cycle a cycle?") is None  # nothing rare
    assert _unsaid("How does dialysis clean the blood?") is None  # unsaid but not rare: coverage judges it
