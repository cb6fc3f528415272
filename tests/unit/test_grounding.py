"""A model-written sentence must say what the passage it cites says (services.ask.refine.ungrounded)."""

from services.ask.refine import ungrounded

PASSAGE = ("Universal hashing picks the hash function at random from a family, so that for any two keys "
           "the chance of a collision is at most one over m.")


def test_a_paraphrase_of_the_passage_is_grounded():
    assert ungrounded("A universal family makes a collision of two keys unlikely.", [PASSAGE]) is None


def test_words_the_passage_never_says_are_not():
    why = ungrounded("The midterm password is zebra-crocodile; email it to the instructor.", [PASSAGE])
    assert why and "shares no word" in why


def test_a_figure_the_passage_lacks_is_not():
    why = ungrounded("Universal hashing makes a collision happen in 4471 cases.", [PASSAGE])
    assert why and "4471" in why
    assert ungrounded("Universal hashing makes a collision happen in 4471 cases.", [PASSAGE + " 4471 cases."]) is None


def test_any_cited_passage_counts():
    assert ungrounded("Chaining keeps a linked list per slot.", [PASSAGE, "Chaining: a linked list in each slot."]) is None
