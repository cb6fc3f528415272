import pytest

from lecturecopilot.labels import citation_label, clock
from services.ask.disfluency import clean


@pytest.mark.parametrize("t,expected", [(0, "0:00"), (59.9, "0:59"), (61, "1:01"), (1892.4, "31:32"),
                                        (3600, "1:00:00"), (3725.2, "1:02:05"), (-3, "0:00")])
def test_clock(t, expected):
    assert clock(t) == expected


def test_citation_label():
    assert citation_label(4, 1892.4) == "L4 · 31:32"


@pytest.mark.parametrize("raw,expected", [
    ("um so the the hash function maps keys", "So the hash function maps keys"),
    ("Uh, we we store it in a chain.", "We store it in a chain."),
    ("Merge sort runs in n log n time.", "Merge sort runs in n log n time."),
    ("Successor runs in log log u time.", "Successor runs in log log u time."),
])
def test_clean_removes_fillers_and_stutter(raw, expected):
    assert clean(raw) == expected


@pytest.mark.parametrize("text,chatter", [
    ("Does that make sense?", True), ("OK, any questions?", True), ("Right?", True), ("So, okay.", True),
    ("Yeah.", True), ("Chaining keeps a list in each slot.", False), ("Does hashing make lookups fast?", False),
    ("So this is an idea called chaining.", False)])
def test_classroom_chatter_is_recognised(text, chatter):
    from services.ask.writers.extractive import is_chatter

    assert is_chatter(text) is chatter


def _sents(*texts):
    from services.ask.search_index import IndexedSentence

    return [IndexedSentence(float(k), float(k + 1), t) for k, t in enumerate(texts)]


@pytest.mark.parametrize("texts, window, expected", [
    # the lecturer's question opens the window: the answer that follows it is cited instead
    (("So how many permutations are there?", "N factorial permutations of n numbers.",
      "So listing them takes at least n factorial time.", "Then we check each one."), (0, 2), (1, 3)),
    # a question and then chatter: both skipped
    (("Why is that?", "Does that make sense?", "Because the array is sorted by key.",
      "So binary search finds it in log n time."), (0, 2), (2, 4)),
    # at the end of the segment the run stays (it would shrink): the question stays as context
    (("Intro words about sorting today.", "How long does the check take?", "Linear time in the length of the list."),
     (1, 3), (1, 3)),
    # a tag question ("..., right?") is not the question being answered
    (("They are terrible at get at and set at, right?", "Direct access arrays store key k at index k.",
      "Then we look at hashing."), (0, 2), (0, 2)),
    # trailing chatter goes; a window with no question stays put
    (("Hashing maps keys to slots of a table.", "Collisions happen when keys share a slot.", "OK, any questions?"),
     (0, 3), (0, 2)),
    # a single sentence is kept even when it is a question
    (("What is a hash function?",), (0, 1), (0, 1)),
    # too few words to answer: the next sentence comes too
    (("Yeah, so the idea here, this is what we call radix sort.", "Radix sort.",
      "We sort by the least significant digit first, then by the next one.", "And so on."), (0, 2), (0, 3)),
    # a run ending on the lecturer's question takes the answer that follows...
    (("Merge sort is a divide and conquer algorithm for sorting lists.", "So what does merge sort do first?",
      "It splits the array into two halves and sorts each half recursively."), (0, 2), (0, 3)),
    # growing never ends on classroom talk
    (("Hashing maps keys to slots.", "Chaining stores a list in each slot.", "Yeah, go ahead."), (0, 2), (0, 2)),
    # a run opening on the rest of the sentence before it starts on that sentence (the demo's "How does Python
    # resolve collisions?" opened on "Which is much more common ...")
    (("How I find an open space is a little complicated.", "But this is a technique called open addressing.",
      "Which is much more common than the technique we're going to be talking about today in implementations.",
      "Python uses an open addressing scheme, which is essentially find another place in the array."),
     (2, 4), (1, 4)),
    # ...or, with nothing after it, stops before the question
    (("Merge sort is a divide and conquer algorithm for sorting arrays of numbers.",
      "So what does merge sort do first?"), (0, 2), (0, 1)),
])
def test_answer_run_moves_past_the_question_it_opens_with(texts, window, expected):
    from services.ask.writers.extractive import answer_run

    assert answer_run(_sents(*texts), *window) == expected


def test_a_sentence_continues_the_one_before_when_it_opens_on_a_relative_pronoun():
    from services.ask.writers.extractive import continues

    assert continues("Which is much more common than the technique we're going to be talking about today.")
    assert continues("whose keys are all distinct.")
    assert not continues("Which one is faster?")  # a question
    assert not continues("When the table fills up, we double it.")


@pytest.mark.parametrize("text, asks", [
    ("How many permutations are there?", True), ("Why?", True), ("So what's a simple sorting algorithm?", True),
    ("They're terrible with get at and set at, right?", False), ("It takes linear time, OK?", False),
    ("That's the key, yeah?", False), ("Merge sort takes n log n time.", False),
])
def test_is_question(text, asks):
    from services.ask.writers.extractive import is_question

    assert is_question(text) is asks


def test_fresh_ranges_leave_out_what_the_previous_answer_said():
    from services.ask.writers.extractive import _fresh_ranges

    sents = _sents("a", "b", "c", "d", "e", "f")  # sentence k starts at k seconds
    assert _fresh_ranges(sents, {("L", 1.0), ("L", 2.0)}, "L") == [(0, 1), (3, 6)]
    assert _fresh_ranges(sents, {("L", 0.0), ("L", 5.02)}, "L") == [(1, 5)]
    assert _fresh_ranges(sents, {("other lecture", 1.0)}, "L") == [(0, 6)]
    assert _fresh_ranges(sents, {("L", float(k)) for k in range(6)}, "L") == []
