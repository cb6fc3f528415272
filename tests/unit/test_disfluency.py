"""Disfluencies out of quoted speech, every other word as it was said."""

import pytest

from services.ask.disfluency import clean, only_deletes


@pytest.mark.parametrize("spoken,written", [
    ("Um, so the the key is, you know, hashing.", "The key is hashing."),
    ("It kind of makes sense intuitively, right?", "It makes sense intuitively."),
    ("uh, and the, the hash function, um, maps keys", "The hash function maps keys"),
    ("We, we, we can store it in a chain.", "We can store it in a chain."),
    ("So, OK, so chaining is simple.", "Chaining is simple."),
    ("I'm kind of trying to say that a is not zero.", "I'm trying to say that a is not zero."),
    ("So in set language, the key, right, that each person has.", "In set language, the key that each person has."),
])
def test_disfluencies_go(spoken, written):
    assert clean(spoken, opening=True) == written


@pytest.mark.parametrize("kept", [
    "What kind of tree is it?",           # "kind of" after a determiner is a noun
    "You know the answer.",               # "you know" as a verb
    "Successor runs in log log u time.",  # meant twice
    "The question is, is this efficient?",
    "Right?",                             # only chatter: the writer drops it, clean keeps its words
])
def test_what_is_meant_stays(kept):
    assert clean(kept) == kept


def test_nothing_but_deletions_on_real_lecture_speech():
    from evals.disfluency import sentences

    spoken = sentences()
    assert len(spoken) > 2000
    changed = 0
    for s in spoken:
        out = clean(s, opening=True)
        assert only_deletes(s, out), (s, out)
        changed += out.split() != s.split()
    assert changed > 300  # it does something on real speech
