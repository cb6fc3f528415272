import pytest

from lecturecopilot.labels import citation_label, clock
from services.ask.write import clean


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
    from services.ask.write import is_chatter

    assert is_chatter(text) is chatter
