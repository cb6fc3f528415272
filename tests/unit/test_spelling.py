import pytest

from services.ask.spelling import correct

VOCAB = {"merge": 30, "sort": 50, "sorted": 20, "hashing": 12, "chaining": 5, "collision": 7, "counting": 9,
         "array": 40, "halves": 3, "notation": 9, "spend": 1, "path": 6, "face": 4, "read": 8, "come": 10}


@pytest.mark.parametrize("typed,expected", [
    ("how dose mrege sort work", "how dose merge sort work"),
    ("What is chainnig in hashng?", "What is chaining in hashing?"),
    ("Mrege sort", "Merge sort"),
])
def test_typos_are_corrected_towards_course_words(typed, expected):
    assert correct(typed, VOCAB) == expected


@pytest.mark.parametrize("typed", [
    "What is a heap?", "Explain Dijkstra", "sort the array",
    "How do rotations keep an AVL tree balanced?",  # different first letter: not "notation"
    "What is the speed of light?",                  # "spend" is too rare in the course
    "What is the capital of France?",               # a name mid-sentence
    "How do I bake sourdough bread?",
])
def test_words_that_must_stay(typed):
    assert correct(typed, VOCAB) == typed


def test_english_words_are_never_corrected():
    vocab = {"point": 9, "changing": 3, "chaining": 2}
    assert correct("How do I print a dictionary?", vocab) == "How do I print a dictionary?"
    assert correct("What is chaining?", vocab) == "What is chaining?"


def test_empty_vocabulary():
    assert correct("mrege", {}) == "mrege"


@pytest.mark.parametrize("typed, searched", [
    ("what is chaîning?", "what is chaining?"), ("what is chaining? 日本語", "what is chaining?"),
    ("explain hashing 🙂", "explain hashing"), ("ハッシュとは", "ハッシュとは"), ("Café au lait", "Cafe au lait"),
])
def test_fold(typed, searched):
    from services.ask.spelling import fold

    assert fold(typed) == searched


@pytest.mark.parametrize("typed,expected", [
    ("waht is hashign", "what is hashing"),      # a question word beats the course's "want"
    ("opne addressing", "open addressing"),      # a swap beats the more frequent "one"
    ("what is cha\u200bining?", "what is chaining?"),  # zero-width space
    ("\u202eWhat is chaining?", "What is chaining?"),  # bidi override
])
def test_swaps_question_words_and_invisible_characters(typed, expected):
    vocab = {**VOCAB, "want": 30, "open": 5, "one": 40, "addressing": 4}
    assert correct(typed, vocab) == expected
