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
    "What is the speed of light?",                  # an English word: not "spend"
    "What is the capital of France?",               # a name mid-sentence
    "How do I bake sourdough bread?",
])
def test_words_that_must_stay(typed):
    assert correct(typed, VOCAB) == typed


def test_a_name_the_course_says_once_is_a_target():
    vocab = {"queloz": 1, "mayor": 1, "pegasi": 1, "discovery": 0}
    assert correct("51 pegasi b mayor and quelos discovery", vocab) == "51 pegasi b mayor and queloz discovery"


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


def test_a_word_the_course_says_as_two_is_written_as_the_course_says_it():
    # "lookup" is an English word (left alone by the typo rule); the demo lecture says "look up"
    vocab = {"look": 4, "up": 9, "constant": 3, "time": 8, "max": 2, "heap": 5, "lookups": 0}
    compounds = {"lookup": "look up", "maxheap": "max heap"}
    assert correct("is lookup constant time?", vocab, compounds) == "is look up constant time?"
    assert correct("Lookup cost in a maxheap", vocab, compounds) == "Look up cost in a max heap"
    assert correct("is lookup constant time?", {**vocab, "lookup": 1}, compounds) == "is lookup constant time?"
    assert correct("is lookup constant time?", vocab) == "is lookup constant time?"


def test_a_plural_or_misspelled_compound_is_written_as_the_course_says_it():
    vocab = {"look": 4, "up": 9, "constant": 3, "time": 8, "heaps": 2}
    compounds = {"lookup": "look up", "maxheap": "max heap"}
    assert correct("are lookups constant time?", vocab, compounds) == "are look ups constant time?"
    assert correct("Lookups in a maxheap", vocab, compounds) == "Look ups in a max heap"
    assert correct("is lookpu constant time?", vocab, compounds) == "is look up constant time?"
    assert correct("Lokup cost", vocab, compounds) == "Look up cost"
    # a plural the course says itself stays; a word near no compound stays
    assert correct("are lookups fast?", {**vocab, "lookups": 3}, compounds) == "are lookups fast?"
    assert correct("is loopup constant time?", vocab, {}) == "is loopup constant time?"


def test_the_course_compounds_are_pairs_said_twice_whose_joined_word_it_never_says():
    import threading

    from services.ask.search_index import EmbeddedSearchIndex, Hit

    index = EmbeddedSearchIndex.__new__(EmbeddedSearchIndex)  # its course statistics only: no shard, no pool
    index._lock, index._vocab_cache, index._compound_cache = threading.RLock(), {}, {}
    index.course_of = {"L1": "c1", "L2": "c2"}
    texts = {("L1", 0): "To look up a key, hash it. A look up takes constant time in a max-heap.",
             ("L1", 1): "Each max heap keeps the max at the root; the backup is a lookup table.",
             ("L2", 0): "look up look up data base data base set up set up"}
    index.segments = {k: Hit(f"{k}", k[0], 1, k[1], 0.0, 1.0, t, 0.0) for k, t in texts.items()}
    # it says "lookup" itself, once; "max heap" is said twice, so "MH" stands for it too
    assert index.course_compounds("c1") == {"maxheap": "max heap", "mh": "max heap"}
    # courses never mix; "setup" is too short to be taken apart (under 6 letters)
    assert index.course_compounds("c2") == {"lookup": "look up", "database": "data base", "db": "data base"}


@pytest.mark.parametrize("typed,expected", [
    ("wat is chainnig in hash tabels?", "what is chaining in hash tables?"),  # the demo's (a newcomer's) question
    ("explain chainnig in hash tabels", "explain chaining in hash tables"),
    ("hwo do arrays grow", "how do arrays grow"),       # "arrays": English; "hwo": a question word
    ("teh merge step", "the merge step"),
])
def test_a_plural_the_course_never_says_and_a_short_question_word_are_targets(typed, expected):
    vocab = {**VOCAB, "hash": 20, "table": 15, "what": 30, "how": 12, "the": 90}
    assert correct(typed, vocab) == expected


@pytest.mark.parametrize("typed", [
    "what does svd give?", "is dfs faster than bfs?", "what is pcr?",  # lower-case acronyms: no question word near
    "how does atp store energy?", "what is rsa?",
])
def test_a_short_word_is_never_corrected_to_a_course_word(typed):
    vocab = {**VOCAB, "sad": 4, "did": 9, "dos": 3, "bus": 2, "pcs": 1, "ate": 2, "rsx": 2, "svm": 3}
    assert correct(typed, vocab) == typed


def _course(*texts: str) -> tuple[list[list[str]], dict[str, int]]:
    import re
    from collections import Counter

    segments = [re.findall(r"[a-z]+", t.lower()) for t in texts]
    return segments, dict(Counter(w for s in segments for w in s))


def test_an_acronym_stands_for_a_phrase_the_course_says_in_full():
    from services.ask.spelling import compounds

    segments, vocab = _course(
        "The central limit theorem says the sample mean is nearly normal. A confidence interval follows.",
        "By the central limit theorem, a confidence interval is the mean plus or minus 1.96 standard errors.",
        "The law of large numbers is another matter. The law of large numbers says the mean converges.",
        "We set up the data. We set up a table.")
    found = compounds(segments, vocab)
    assert found["clt"] == "central limit theorem" and found["ci"] == "confidence interval"
    assert found["lln"] == "law of large numbers"  # "of" is not one of its letters
    assert "su" not in found  # "set up" names nothing: both words are function words of English
    assert "cltsm" not in found and "tsm" not in found  # "says the sample mean" once; not a name either


def test_letters_two_phrases_share_stand_for_neither_unless_one_is_said_far_more():
    from services.ask.spelling import compounds

    both, vocab = _course("priority queue priority queue", "partial quotient partial quotient")
    assert "pq" not in compounds(both, vocab)
    one, vocab = _course("priority queue " * 5, "partial quotient partial quotient")
    assert compounds(one, vocab)["pq"] == "priority queue"


def test_a_question_in_acronyms_is_searched_as_the_course_says_it():
    from services.ask.spelling import compounds

    segments, vocab = _course("the central limit theorem and the confidence interval",
                              "the central limit theorem and the confidence interval")
    found = compounds(segments, vocab)
    assert correct("what is the CLT?", vocab, found) == "what is the central limit theorem?"
    assert correct("what does the clt say", vocab, found) == "what does the central limit theorem say"
    assert correct("How wide are CIs?", vocab, found) == "How wide are confidence intervals?"
    assert correct("is ci wide?", vocab, found) == "is ci wide?"  # two letters: only in capitals
    said, vocab = _course("the CLT says it: the central limit theorem", "the central limit theorem again")
    # the course says "CLT" too: the phrase joins it; "etc" is an English word: only "ETC" in capitals stands for it
    assert correct("what is the CLT?", vocab, compounds(said, vocab)) == "what is the CLT central limit theorem?"
    chain, vocab = _course("the electron transport chain makes ATP", "the electron transport chain: ETC")
    found = compounds(chain, vocab)
    assert found["ETC"] == "electron transport chain" and "etc" not in found
    assert correct("What does the ETC do?", vocab, found) == "What does the ETC electron transport chain do?"
    assert correct("mitochondria, membranes etc", vocab, found) == "mitochondria, membranes etc"
    # a trial's "What is the CPI?" quoted the slides' CPI formula, not the definition: "change in a price index"
    # has the same letters; the phrase that skips no word, said as often, stands for them
    cpi, vocab = _course("the percentage change in a price index", "the consumer price index is a basket",
                         "CPI this year over CPI last year", "measured with the consumer price index",
                         "the percentage change in a price index again")
    found = compounds(cpi, vocab)
    assert found["CPI"] == "consumer price index"
    assert correct("What is the CPI?", vocab, found) == "What is the CPI consumer price index?"
