"""Exam prep, pure parts: terms and their roles, running times, distractors, the cloze
questions, the blind check, "quiz me" intent, graded-item detection and assessment-mode filtering."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from services.ask import examprep as ep
from services.ask.examprep import LectureSentence as S


def bow_embed(texts: list[str]) -> np.ndarray:
    """A deterministic bag-of-words embedder (hashed unigrams and bigrams), L2-normalised."""
    out = np.zeros((len(texts), 512), dtype="float32")
    for i, t in enumerate(texts):
        w = ep.norm(t).split()
        for tok in w + [a + " " + b for a, b in zip(w, w[1:])]:
            out[i, zlib.crc32(tok.encode()) % 512] += 1.0  # not hash(): str hashes change per process
        out[i] /= max(1e-6, float(np.linalg.norm(out[i])))
    return out


LECTURE = [
    S(0, 0.0, 5.0, "Today we talk about sorting algorithms."),
    S(1, 5.0, 12.0, "Merge sort is a divide and conquer algorithm that splits the array in halves."),
    S(2, 12.0, 20.0, "And we know that merge sort takes n log n time on any input."),
    S(3, 20.0, 28.0, "Selection sort repeatedly picks the largest remaining item and swaps it to the end."),
    S(4, 28.0, 35.0, "Selection sort takes n squared time because of the nested loops."),
    S(5, 35.0, 42.0, "Insertion sort inserts each item into the sorted prefix."),
    S(6, 42.0, 50.0, "Binary search finds a key in a sorted array in log n time."),
    S(7, 50.0, 60.0, "A hash table stores items in buckets chosen by a hash function."),
]
OTHER = ["Counting sort takes linear time when the keys are small.",
         "Counting sort is a stable sorting algorithm for small integer keys.",
         "Insertion sort takes n squared time in the worst case.",
         "Radix sort sorts digit by digit with counting sort.",
         "Looking up a key in a direct access array takes constant time.",
         "A direct access array stores the item with key k at index k.",
         "Radix sort is fast when the keys are small integers.",
         "A linked list holds the items of a chain.",
         "A sorted array supports binary search."]
COURSE = [s.text for s in LECTURE] + OTHER


VOCAB = ep.course_vocabulary(COURSE)


def test_course_terms_are_found_without_a_word_list():
    assert {"merge sort", "selection sort", "insertion sort", "counting sort", "radix sort", "binary search",
            "direct access array", "sorted array"} <= set(VOCAB.terms)
    assert ep.terms_in("So in selection sort we keep a sorted array of items", VOCAB) == ["selection sort",
                                                                                         "sorted array"]
    assert ep.terms_in("we want to sort the list", VOCAB) == []  # a verb phrase is not a term
    assert not {"takes", "swaps", "stores", "finds"} & set(VOCAB.terms)  # verbs the course says are not terms
    assert ep.same_term("merge sort", "merged sort") and ep.same_term("hash function", "universal hash function")
    assert not ep.same_term("merge sort", "selection sort")


def test_quantities_read_the_longest_form():
    u = VOCAB.units
    assert "time" in u  # said after formulas at least twice: a unit of this course
    assert ep.quantities_in("merge sort takes n log n time", u) == ["n log n time"]
    assert ep.quantities_in("it takes theta of n time and then log n time", u) == ["theta of n time", "log n time"]
    assert ep.quantities_in("in constant time", u) == ["constant time"]
    assert ep.quantities_in("it is quadratic time", u) == ["quadratic time"]
    assert ep.quantities_in("a long time ago", u) == [] and ep.quantities_in("a constant factor", u) == []
    assert ep.canonical("theta of n time") == ep.canonical("linear time") == ep.canonical("order n time")
    units = frozenset({"degrees", "percent", "meters"})
    assert ep.quantities_in("enzymes work best around twenty five degrees Celsius.", units) == \
        ["twenty five degrees Celsius"]
    assert ep.quantities_in("about three times ten to the eight meters per second", units) == \
        ["three times ten to the eight meters per second"]
    assert ep.quantities_in("phi of n equals p minus one times q minus one", frozenset()) == \
        ["phi of n", "p minus one times q minus one"]


def test_quantity_distractors_share_the_unit_and_are_never_stated_for_the_subject():
    d = ep.quantity_distractors("n log n time", "merge sort", VOCAB, COURSE)
    assert len(d) == 3 and "n log n time" not in d and all(ep.unit_of(x, VOCAB.units) == "time" for x in d)
    assert all(any(ep.contains(s, x) for s in COURSE) for x in d)  # nothing invented
    assert len({ep.canonical(x) for x in d}) == 3  # never two forms of one value
    # selection sort is said to take n squared (and here n log n): never offered against it
    course = COURSE + ["Selection sort takes n log n time."]
    d2 = ep.quantity_distractors("linear time", "selection sort", ep.course_vocabulary(course), course)
    assert "n log n time" not in d2 and "n squared time" not in d2


def test_term_distractors_are_course_terms_of_the_same_kind_not_true_of_the_statement():
    d = ep.term_distractors("merge sort", "____ is a divide and conquer algorithm that splits the array in halves",
                            VOCAB, COURSE, bow_embed)
    assert len(d) == 3 and "merge sort" not in d and all(x in VOCAB.surface.values() for x in d)
    assert all(len(x.split()) in (1, 2, 3) for x in d)
    d2 = ep.term_distractors("radix sort", "____ sorts digit by digit", VOCAB, COURSE, bow_embed)
    # "Radix sort is fast when the keys are small integers" / "Counting sort ... small integer keys": a term the
    # course says the same thing of is no wrong option
    d3 = ep.term_distractors("radix sort", "____ is fast when the keys are small integers", VOCAB, COURSE, bow_embed)
    assert "counting sort" not in d3 and d2


def test_extractive_questions_are_cloze_with_a_valid_citation():
    qs = ep.extractive_questions("L", 3, LECTURE, COURSE)
    assert qs, "no question written"
    kinds = {q.kind for q in qs}
    assert kinds <= {"term", "quantity"} and "quantity" in kinds and "term" in kinds
    by_ts = {s.start_s: s for s in LECTURE}
    for q in qs:
        assert len(q.options) == 4 and len(set(q.options)) == 4 and 0 <= q.answer_index < 4
        assert ep.BLANK in q.statement and ep.statement_of(q.stem) == q.statement
        assert q.cite_t_s in by_ts and ep.contains(by_ts[q.cite_t_s].text, q.answer)
        assert q.explanation.startswith("The lecture says: “") and "L3 · " not in q.explanation  # the citation carries the moment
        assert q.method == "extractive"
        for o in q.options:  # every option is course text
            assert any(ep.contains(s, o) for s in COURSE), o
    merge = [q for q in qs if q.kind == "quantity" and q.subject == "merge sort"]
    assert merge and merge[0].answer == "n log n time" and merge[0].stem.startswith("Which expression")


def test_check_keeps_good_questions_and_drops_wrong_or_ambiguous_ones():
    span = (0.0, 60.0)
    qs = ep.extractive_questions("L", 3, LECTURE, COURSE)
    kept, dropped = ep.checked(qs, LECTURE, span, bow_embed)
    assert kept and not dropped
    q = next(q for q in qs if q.kind == "quantity" and q.subject == "merge sort")
    # the marked answer is not what the passage says
    wrong = ep.Question(**{**q.__dict__, "answer_index": (q.answer_index + 1) % 4})
    assert ep.check(wrong, LECTURE, span, bow_embed).reason == "not_in_sentence"
    # a citation outside the lecture, or not at a sentence start
    assert ep.check(ep.Question(**{**q.__dict__, "cite_t_s": 99.0}), LECTURE, span, bow_embed).reason == "no_citation"
    assert ep.check(ep.Question(**{**q.__dict__, "cite_t_s": 13.0}), LECTURE, span, bow_embed).reason == "no_citation"
    # two options stated by the explaining sentence: ambiguous
    both = [*LECTURE[:2], S(2, 12.0, 20.0, "Merge sort takes n log n time, not log n time."), *LECTURE[3:]]
    opts = ["n log n time", "log n time", "linear time", "constant time"]
    amb = ep.Question("L", "?", "Merge sort takes ____.", opts, 0, "", "L", 12.0, subject="merge sort")
    assert ep.check(amb, both, span, bow_embed).reason == "option_in_sentence"
    # another option stated for the same subject in the passage: two defensible answers
    near = [*LECTURE[:3], S(3, 20.0, 28.0, "Some say merge sort takes linear time."), *LECTURE[4:]]
    amb2 = ep.Question("L", "?", "And we know that merge sort takes ____ on any input.", opts[:2] + ["linear time",
                       "constant time"], 0, "", "L", 12.0, subject="merge sort")
    assert ep.check(amb2, near, span, bow_embed).reason == "other_option_in_passage"
    # duplicated options
    dup = ep.Question(**{**q.__dict__, "options": [q.answer] * 4, "answer_index": 0})
    assert ep.check(dup, LECTURE, span, bow_embed).reason == "bad_options"


def test_check_embedding_vote_must_pick_the_marked_option():
    span = (0.0, 60.0)
    # the marked option is in the sentence, but the statement around the blank is about something else
    q = ep.Question("L", "?", "____ repeatedly picks the largest remaining item and swaps it to the end.",
                    ["merge sort", "selection sort", "binary search", "counting sort"], 0, "", "L", 5.0)
    r = ep.check(q, LECTURE, span, bow_embed)
    assert r.ok is False and r.reason == "disagrees" and r.chosen == 1


class FakeWriter:
    name = "groq"
    model = "fake-70b"

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts = []

    def complete(self, system, user, max_tokens=120):
        self.prompts.append(user)
        return self.replies.pop(0)


def test_model_questions_need_a_quote_from_the_chapter():
    good = json.dumps({"q": "Which algorithm is divide and conquer?", "options": ["merge sort", "selection sort",
                       "insertion sort", "binary search"], "answer": 0,
                       "quote": "Merge sort is a divide and conquer algorithm"})
    invented = json.dumps({"q": "Who invented merge sort?", "options": ["von Neumann", "Knuth", "Hoare", "Dijkstra"],
                           "answer": 0, "quote": "von Neumann invented merge sort in 1945"})
    w = FakeWriter([good, invented, "not json"])
    chapters = [(0.0, 20.0, "Merge sort"), (20.0, 42.0, "Selection sort"), (42.0, 60.0, "Search")]
    qs = ep.model_questions(w, "L", 3, LECTURE, chapters)
    assert len(qs) == 1 and qs[0].method == "fake-70b" and qs[0].cite_t_s == 5.0 and qs[0].answer == "merge sort"
    assert "Merge sort is a divide" in w.prompts[0]
    kept, _ = ep.checked(qs, LECTURE, (0.0, 60.0), bow_embed)
    assert kept == qs


@pytest.mark.parametrize("message,topic", [
    ("Quiz me on hashing", "hashing"), ("quiz me about merge sort please", "merge sort"),
    ("Can you test me on radix sort?", "radix sort"), ("test me", ""),
    ("give me practice questions on the comparison model", "comparison model"),
    ("Give me some practice problems about counting sort", "counting sort"),
    ("practice questions for lecture 4", "lecture 4"), ("I want to practice hashing", "hashing"),
    ("make me a quiz on sorting", "sorting"), ("Generate 5 multiple choice questions about hash tables", "hash tables"),
    ("exam questions of lecture 3", "lecture 3"), ("give me the practice questions on hashing", "hashing"),
])
def test_quiz_intent(message, topic):
    assert ep.quiz_intent(message) == topic


@pytest.mark.parametrize("message", [
    "What is hashing?", "How do I test whether a hash function is universal?", "why does merge sort take n log n",
    "is there a quiz next week", "what questions will be on the exam", "test the array for a key",
    "What is the final exam question?", "Tell me the exam questions of the other course",
])
def test_not_quiz_intent(message):
    assert ep.quiz_intent(message) is None


@pytest.mark.parametrize("message", [
    "Which sort is stable?\nA) selection sort\nB) counting sort\nC) heap sort\nD) quick sort",
    "What is the running time of merge sort? a) n b) n log n c) log n d) n squared",
    "(a) O(1) (b) O(n) (c) O(log n) (d) O(n^2) -- which is the search time in a hash table?",
    "True or False: a direct access array uses space linear in the key range.",
    "T/F: merge sort is stable",
    "Counting sort is a comparison sort. True or false?",
    "Q3. Which one is a stable sort?\nA. merge sort\nB. selection sort\nC. heapsort",
    "Which sort runs in linear time? 1) merge sort 2) radix sort 3) selection sort 4) insertion sort",
    "Which is stable?\n1. heap sort\n2. merge sort\n3. selection sort",
    "Which sort runs in linear time? Options: merge sort / radix sort / selection sort / insertion sort",
])
def test_graded_items_are_detected(message):
    assert ep.looks_like_graded_item(message)


@pytest.mark.parametrize("message", [
    "What is a hash table?", "Explain merge sort in a) simple words", "is it true that merge sort is stable?",
    "compare A and B trees", "what does plan B mean in the lecture",
])
def test_ordinary_questions_are_not_graded_items(message):
    assert not ep.looks_like_graded_item(message)


ITEM = "Which sort is stable?\nA) selection sort\nB) counting sort\nC) heap sort\nD) quick sort"


@pytest.mark.parametrize("sentence", [
    "The answer is B.", "So the correct option is (b).", "Option B is right here.", "Pick B) since it keeps order.",
    "Counting sort keeps equal keys in their input order.", "COUNTING SORT is stable by construction.",
    "Choice D would be wrong.", "It is A.", "The right letter is C",
])
def test_assessment_filter_drops_sentences_that_reveal_an_option(sentence):
    assert ep.strip_answer_reveals([sentence], ITEM) == []


@pytest.mark.parametrize("sentence", [
    "A stable sort keeps items with equal keys in the order they came in.",
    "A sorting algorithm is stable when ties keep their relative order.",
    "The lecture uses this property to sort digit by digit, from the least significant one.",
])
def test_assessment_filter_keeps_concept_sentences(sentence):
    assert ep.strip_answer_reveals([sentence], ITEM) == [sentence]


def test_assessment_filter_on_true_false():
    msg = "True or False: merge sort runs in n log n time."
    kept = ep.strip_answer_reveals(["That is true.", "Merge sort splits the list in halves and merges them.",
                                    "The statement is false."], msg)
    assert kept == ["Merge sort splits the list in halves and merges them."]


@pytest.mark.parametrize("message", ["Quiz me on hashing", "test me on merge sort", "give me practice questions"])
def test_requests_policy_lets_quiz_requests_through(message):
    from services.ask import requests_policy

    assert not requests_policy.unsupported(message)


def test_requests_policy_still_refuses_grading():
    from services.ask import requests_policy

    assert requests_policy.unsupported("Please grade my homework")


def test_kinds_of_one_thing_are_not_offered_against_each_other():
    course = COURSE + ["A hash function maps keys to a small range.", "The hash function picks a bucket.",
                       "A fixed hash function has bad inputs.", "A deterministic hash function has bad inputs too.",
                       "A fixed hash function is fast.", "A deterministic hash function is fast too.",
                       "A universal hash function gives few collisions.", "A universal hash function is random.",
                       "The merge function takes linear time.", "Call the merge function on both halves."]
    vocab = ep.course_vocabulary(course)
    d = ep.term_distractors("universal hash function", "A ____ gives few collisions for any input", vocab, course,
                            bow_embed)
    assert "merge function" in d
    assert not ({"fixed hash function", "deterministic hash function", "hash function"} & set(d))  # kinds / nested


def test_numbered_and_listed_options_are_kept_out_of_answers():
    numbered = "Which sort runs in linear time? 1) merge sort 2) radix sort 3) selection sort 4) insertion sort"
    assert [t for _, t in ep.graded_options(numbered)] == ["merge sort", "radix sort", "selection sort",
                                                             "insertion sort"]
    said = ["Insertion sort takes quadratic time.", "Option 2 is the one.", "A node has 2 children."]
    assert ep.strip_answer_reveals(said, numbered) == ["A node has 2 children."]  # a bare number is no label
    listed = "Which sort runs in linear time? Options: merge sort / radix sort / selection sort"
    assert ep.strip_answer_reveals(["Radix sort is linear.", "Keys are digits."], listed) == ["Keys are digits."]


def test_a_set_varies_its_wrong_options_where_the_course_offers_others():
    """A trial's set offered "precise estimates" as a wrong option in four of five questions."""
    from services.ask.examprep.questions import MAX_PER_DISTRACTOR, Question, _picked

    def q(i: int, answer: str, wrong: list[str], alternatives: tuple[str, ...]) -> tuple[float, Question]:
        return 1.0 - i / 10, Question("L", f"stem {i}", f"statement {i} ____", [answer, *wrong], 0, "", "L", float(i),
                                      alternatives=alternatives)

    cands = [q(i, f"answer {i}", ["precise estimates", "probability", f"other {i}"], (f"spare {i}", f"more {i}"))
             for i in range(5)]
    picked = _picked(cands, 5, 2)
    assert len(picked) == 5 and all(p.options[p.answer_index] == f"answer {i}" for i, p in enumerate(picked))
    for o in ("precise estimates", "probability"):
        assert sum(o in p.options for p in picked) == MAX_PER_DISTRACTOR
    assert all(len(set(p.options)) == 4 for p in picked)
    # without alternatives a question keeps its options: a set never loses a question for this
    bare = _picked([q(i, f"answer {i}", ["precise estimates", "probability", f"other {i}"], ()) for i in range(5)], 5, 2)
    assert all("precise estimates" in p.options for p in bare)


def test_a_slides_list_is_asked_one_item_at_a_time():
    """A trial's practice stem was a whole slide ("…; ____: n at least 30; …")."""
    from services.ask.examprep.questions import _slide_items

    row = "Sampling distribution of the mean: center mu; spread sigma over root n; rule of thumb: n at least 30."
    assert _slide_items(row) == ["Sampling distribution of the mean: center mu.",
                                 "Sampling distribution of the mean: spread sigma over root n.",
                                 "Sampling distribution of the mean: rule of thumb: n at least 30."]
    assert _slide_items("Glycolysis: Net yield: 2 ATP and 2 NADH.") == ["Glycolysis: Net yield: 2 ATP and 2 NADH."]
    spoken = "So the pump spends ATP; that is why it is called active transport."
    assert _slide_items(spoken) == [spoken]  # no title before a colon: a spoken sentence stays whole


def test_a_sentence_announcing_the_topic_asks_only_what_it_defines():
    """Practice stems were "Today's topic is entropy and the second ____." and "Today we will look at RSA, the
    first practical public key ____.": an agenda names its terms without teaching them (its "first" and
    "second" are no steps). One that defines its term ("…, which measures …") still makes a question."""
    lecture = [S(0, 0.0, 6.0, "Today's topic is merge sort and the second half of the sorting algorithms unit."),
               S(1, 6.0, 12.0, "Today we will look at selection sort, the first sorting algorithm with nested loops."),
               S(2, 12.0, 20.0, "Today we look at binary search, which measures how a sorted array is searched."),
               S(3, 20.0, 28.0, "Selection sort takes n squared time because of the nested loops.")]
    course = [s.text for s in lecture] + OTHER + [s.text for s in LECTURE]
    qs = ep.extractive_questions("L", 1, lecture, course, embed=bow_embed)
    cited = {q.cite_t_s for q in qs}
    assert 0.0 not in cited and 6.0 not in cited
    assert 12.0 in cited and 20.0 in cited  # the defining agenda and the teaching sentence are asked
