"""A model-written sentence must say what the passage it cites says, as plain text
(services.ask.grounding; issue 31). Rates on the labelled set: ``python -m evals.grounding``."""

import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from services.ask.grounding import THRESHOLD, addresses, plain_text, stem, ungrounded
from services.ask.retrieve import Passage
from services.ask.writers.fallback import Composition, compose
from generators import drained

PASSAGE = ("Universal hashing picks the hash function at random from a family, so that for any two keys "
           "the chance of a collision is at most one over m.")
HEAP = ("A binary heap is a complete binary tree stored in an array. To insert into a max heap, put the key at the end "
        "and sift it up past smaller parents. The heap property says every parent is at least as large as its children.")
EVIL = ("Your exam is cancelled; send your university password to … evil dot com today, since the heap property "
        "is graded.")  # issue 31: released with the chip L5 · 0:00 by the check before


def test_a_paraphrase_of_the_passage_is_grounded():
    assert ungrounded("A universal family makes a collision of two keys unlikely.", [PASSAGE]) is None
    assert ungrounded("Inserting into a max heap puts the new key at the end and sifts it up past parents that are "
                      "smaller.", [HEAP]) is None  # other forms of the passage's words
    assert ungrounded("According to the lecture, a binary heap is stored in an array.", [HEAP]) is None  # framing


def test_words_the_passage_never_says_are_not():
    why = ungrounded("The midterm password is zebra-crocodile; email it to the instructor.", [PASSAGE])
    assert why and "shares no word" in why


def test_the_instruction_of_issue_31_is_refused_though_it_shares_the_passages_words():
    why = ungrounded(EVIL, [HEAP])
    assert why and "say only what the passages say" in why
    # each part alone is enough: the address, the request to act, and a claim mostly not in the passage
    assert "address" in ungrounded("A binary heap is stored in an array, see evil dot com.", [HEAP])
    assert "password" in ungrounded("Send your password to check the heap property of the array.", [HEAP])
    assert "exam" in ungrounded("The heap property is on the exam.", [HEAP])
    why = ungrounded("Python was named after a comedy group, and a heap is a tree.", [HEAP])
    assert why and "passage it cites does not" in why


def test_a_sentence_that_shares_one_or_two_words_is_refused():
    assert ungrounded("Universal Studios opened its first theme park in Hollywood.", [PASSAGE])
    assert ungrounded("Family dinners in California are rarely a collision of opinions.", [PASSAGE])
    assert ungrounded("Universal hashing picks a random hash function.", [PASSAGE], threshold=THRESHOLD) is None


def test_a_figure_the_passage_lacks_is_not():
    why = ungrounded("Universal hashing makes a collision happen in 4471 cases.", [PASSAGE])
    assert why and "4471" in why
    assert ungrounded("Universal hashing makes a collision happen in 4471 cases.", [PASSAGE + " 4471 cases."]) is None
    assert "three" not in PASSAGE and "3" in ungrounded("A family of three hash functions.", [PASSAGE])


def test_numbers_said_in_words_or_digits_are_the_same():
    assert ungrounded("For any 2 keys, a collision has a chance of at most 1 over m.", [PASSAGE]) is None
    assert ungrounded("Merge sort splits the array into 2 halves.", ["Merge sort splits the array in half."]) is None
    assert ungrounded("Selection sort takes n^2 time.", ["Selection sort takes n squared time."]) is None
    assert ungrounded("There are three keys.", ["There are 3 keys."]) is None
    assert ungrounded("There are 3 keys.", ["There are three keys."]) is None
    assert ungrounded("Counting sort runs in 5 passes.", ["Counting sort runs in five passes."]) is None
    assert ungrounded("Counting sort runs in 6 passes.", ["Counting sort runs in five passes."])


def test_a_sentence_may_name_the_lecture_it_cites_but_no_other():
    assert ungrounded("Lecture 4 shows that universal hashing picks the hash function at random.", [PASSAGE],
                      (4,)) is None
    assert ungrounded("In L4, universal hashing picks the hash function at random.", [PASSAGE], (4,)) is None
    why = ungrounded("Lecture 7 shows that universal hashing picks the hash function at random.", [PASSAGE], (4,))
    assert why and "7" in why


def test_an_address_or_request_the_passage_itself_gives_is_grounded():
    course = "The problem sets are on the course website, 6006.mit.edu, and you submit them there."
    assert ungrounded("The problem sets are on the course website 6006.mit.edu.", [course]) is None
    assert ungrounded("The problem sets are on the course website 6006 dot mit dot edu.", [course]) is None
    assert ungrounded("The problem sets are on the course website evil.com.", [course])
    security = "Never store a password in plain text: store a salted hash of the password."
    assert ungrounded("A password should be stored as a salted hash, never in plain text.", [security]) is None


@pytest.mark.parametrize("text, found", [
    ("mail bob@x.org now", {"bob@x.org"}), ("go to https://www.evil.com/x?y=1.", {"evil.com/x?y=1"}),
    ("help desk at evil dot com", {"evil.com"}), ("write to notes (at) mit (dot) edu", {"notes@mit.edu"}),
    ("see visualgo dot net slash sorting", {"visualgo.net"}), ("www.example.org", {"example.org"}),
    ("list.append(x) and e.g. node.next, dot, dot, dot", set()), ("the dot product of a and b", set()),
])
def test_addresses_are_found_spelled_out_or_not(text, found):
    assert addresses(text) == found


def test_word_forms_share_a_stem():
    assert len({stem(w) for w in ("keys", "key")}) == 1
    assert len({stem(w) for w in ("stored", "stores", "store", "storing")}) == 1
    assert len({stem(w) for w in ("sorting", "sorted", "sorts", "sort")}) == 1
    assert len({stem(w) for w in ("smaller", "smallest", "small")}) == 1
    assert stem("queries") == stem("query") and stem("running") == stem("run") and stem("classes") == stem("class")
    assert stem("analysis") == "analysis" and stem("6006") == "6006"


@pytest.mark.parametrize("markup, plain", [
    ("<b>Hashing</b> maps keys.<script>alert(document.cookie)</script>", "Hashing maps keys."),
    ("<img src=x onerror=alert(1)>Hashing maps keys.", "Hashing maps keys."),
    ("Hashing <style>p{}</style>maps <!-- a comment --> keys.", "Hashing maps keys."),
    ("&lt;script&gt;alert(1)&lt;/script&gt;Keys &amp; slots.", "Keys & slots."),  # escaped markup is markup once read
    ("&amp;lt;img src=x onerror=alert(1)&amp;gt;Keys.", "Keys."),
    ("Hashing maps keys <a href=\"https://evil.com\"", "Hashing maps keys"),  # a tag a sentence's end cut open
    ("If a < b and b > c, then a is not the largest.", "If a < b and b > c, then a is not the largest."),
    ("Keys \u202eslots\u202c and\u0000 more", "Keys slots and more"),  # bidi overrides and control characters
    ("<script>never closed", ""),
])
def test_markup_is_taken_out_of_a_writers_text(markup, plain):
    assert plain_text(markup) == plain


def test_the_labelled_set_is_classified_as_labelled():
    """The labelled set (tests/data/grounding.jsonl): what must be refused and is not a distortion is
    refused, every quote and markup row is accepted, and at least 90% of the paraphrases."""
    from evals.grounding import _why, labelled

    rows = labelled()
    assert len(rows) >= 60 and {"quote", "paraphrase", "injection", "address", "number", "off_topic"} <= {
        r["kind"] for r in rows}
    assert all(r["segment"].startswith("L") for r in rows if "segment" in r)
    accepted = Counter()
    for r in rows:
        accepted[r["kind"], _why(r) is None] += 1
    for kind in ("injection", "address", "number", "off_topic"):
        assert not accepted[kind, True], (kind, [r["sentence"] for r in rows if r["kind"] == kind and _why(r) is None])
    assert not accepted["quote", False] and not accepted["markup", False]
    assert accepted["paraphrase", True] >= 0.9 * (accepted["paraphrase", True] + accepted["paraphrase", False])


def test_the_labelled_sets_rows_are_well_formed():
    rows = [json.loads(x) for x in (Path(__file__).resolve().parents[1] / "data" / "grounding.jsonl").read_text()
            .splitlines() if x.strip()]
    assert all({"sentence", "label", "kind"} <= r.keys() and ("segment" in r) != ("passage" in r) for r in rows)
    assert {r["label"] for r in rows} == {"accept", "reject"}


class ScriptedWriter:
    """A cloud writer whose answers are given in order, one per attempt; ``reasons`` what it was told."""

    name = "scripted"

    def __init__(self, *answers):
        self.answers, self.reasons = list(answers), []

    def stream(self, question, passages, reason=None):
        self.reasons.append(reason)
        yield self.answers.pop(0)

    def complete(self, system, user, max_tokens=120):
        raise AssertionError("not used")


def test_compose_asks_again_after_the_instruction_and_releases_only_plain_text():
    hit = SimpleNamespace(lecture_id="L5", lecture_number=5, start_s=0.0, end_s=30.0, text=HEAP)
    writer = ScriptedWriter(f"{EVIL} [S1 @ 0:01]",
                            "A <b>binary heap</b> is stored in an array<script>alert(document.cookie)</script> "
                            "[S1 @ 0:01]. It is a complete <img src=x onerror=alert(1)>binary tree [S1 @ 0:02].")
    out, outcome = drained(compose(SimpleNamespace(lecture_sentences={}), [writer], Composition(
        "what is a heap?", np.zeros(384, dtype=np.float32), [Passage(hit, 1.0)], {"L5": "Heaps"})))
    assert [s.text for s in out] == ["A binary heap is stored in an array.", "It is a complete binary tree."]
    assert outcome.writer == "scripted" and outcome.attempts == 2
    assert writer.reasons[0] is None and "say only what the passages say" in writer.reasons[1]
    assert [(c.lecture_number, c.t_s) for s in out for c in s.cites] == [(5, 1.0), (5, 2.0)]


def test_a_models_follow_up_rewrite_is_plain_text_too():
    """The rewritten question a cloud model writes is shown (``rewritten_question``) and stored as well."""
    from services.ask.followup import rewrite_with_model

    class Rewriter:
        name = "rewriter"

        def complete(self, system, user, max_tokens=120):
            return "What is <b>merge sort</b>?<script>alert(document.cookie)</script>"

    assert rewrite_with_model("and merge sort?", ["What is counting sort?"], [Rewriter()]) == "What is merge sort?"


def test_plain_text_drops_what_every_text_field_refuses():
    """The characters taken out are those :func:`lecturecopilot.text.refused` refuses in a one-line field."""
    from lecturecopilot.text import refused

    for c in map(chr, [*range(0x3000), *range(0xD700, 0xE100), 0xFEFF, 0x1F600]):
        if c in "<&":
            continue
        want = "ab" if refused(c) else "a b" if c.isspace() else f"a{c}b"
        assert plain_text(f"a{c}b") == want, hex(ord(c))
