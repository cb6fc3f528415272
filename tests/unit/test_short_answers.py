"""An extractive answer is never a six-word fragment because the sentence most like the question was the
lecturer asking it (services.ask.writers.extractive._more): real MIT 6.006 sentences (lecture 5, 5:19–7:15), real
embeddings from the packaged MiniLM."""

import sys
from pathlib import Path
from types import SimpleNamespace

from lecturecopilot import models
from lecturecopilot.settings import Settings
from services.ask.search_index import IndexedSentence
from services.ask.writers.extractive import MIN_RUN_WORDS, extractive_answer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from passages import passage  # noqa: E402  (tests/passages.py)

_passage = passage


FIRST = [(319.8, "Does everyone remember what we talked about last week?"),
         (324.1, "And we then, I didn't show you this chart at the end, but I'm showing it to you now."),
         (330.8, "Essentially what we had was we have a bunch of different ways to deal with this set interface."),
         (338.3, "And last week, we talked about the sorted array, and then we talked about this direct access array "
                 "in this hash table, right?"),
         (348.3, "Which do better for these dictionary, the find and insert and delete operations, or at least better "
                 "in an expected sense, right?"),
         (358.4, "What's the worst case performance of a hash table?"),
         (362.1, "If I have to look up something in a hash table, and I happen to choose a bad hash function, what's "
                 "the worst case here?"),
         (370.7, "What?"), (371.2, "N, right?"), (371.9, "It's worse than a sorted array, right?")]
SECOND = [(374.7, "Because potentially I hashed everything that I was storing to the same index in my hash table, "
                  "and to be able to distinguish between them, I can't do anything more than a linear search, right?"),
          (388.6, "I mean, I could store another set's data structure as my chain and do better that way."),
          (394.8, "That's actually how Java does it."),
          (406.0, "But in general, that hash table is only good if we're allowing, OK, I want this to be expected "
                  "good, but in the worst case, if I really need that operation to be worst case, right, I really "
                  "can't afford linear time ever for an operation of that kind, then I don't want to use a hash table.")]


def test_an_answer_after_the_lecturers_own_question_takes_the_sentences_that_answer_it():
    def embed(texts):
        return models.embed(Settings().embed_model, texts)

    p1, e1 = _passage(0, FIRST, 374.7, embed)
    p2, e2 = _passage(1, SECOND, 435.7, embed)
    index = SimpleNamespace(sentences={("L5", 0): e1, ("L5", 1): e2}, course_of={})
    query = "how big should the hash table be compared to n"
    out = extractive_answer(index, [p1, p2], query, embed([query])[0])
    words = sum(len(s.text.split()) for s in out)
    assert words >= MIN_RUN_WORDS, [s.text for s in out]
    assert [s.text for s in out][0] == "It's worse than a sorted array."
    assert all(c.t_s in {t for t, _ in FIRST + SECOND} for s in out for c in s.cites)


def test_a_slide_does_not_make_a_run_long_enough_to_answer():
    """Only one item of a slide is shown, so its heading and items do not count towards the words an
    answer needs (the demo's "What is chaining?" was a slide item and "So this is an idea called chaining.")."""
    from services.ask.writers.extractive import answer_run

    sents = [IndexedSentence(196.5, 197.9, "Why chaining works: Any sequence structure can be a chain; Choose h so that "
                                           "chains stay short; Short chains: constant-time operations", "slide"),
             IndexedSentence(197.9, 199.7, "So this is an idea called chaining."),
             IndexedSentence(199.7, 201.5, "I can put anything I want there."),
             IndexedSentence(201.5, 204.4, "Commonly, we talk about putting a linked list there."),
             IndexedSentence(204.4, 207.4, "But you can put, you know, a dynamic array there.")]
    assert answer_run(sents, 0, 2) == (0, 4)
    assert answer_run(sents[1:], 0, 1) == (0, 3)  # the same speech without the slide grows the same way


def test_the_rest_of_a_split_sentence_does_not_join_an_answer_alone(monkeypatch):
    """"Which we usually call the hash table." joined the demo's answer to "What is a hash collision?" on its
    own: without the sentence it ends, it says nothing."""
    def embed(texts):
        return models.embed(Settings().embed_model, texts)

    rows = [(100.0, "A hash table stores each item at the index its hash function gives."),
            (106.0, "That index is the key's hash, taken mod the size of the array."),
            (112.0, "Last week we looked at sorting in linear time with counting sort."),
            (118.0, "Radix sort then sorts the digits one at a time, least significant first, down here."),
            (124.0, "Which we usually call the hash table."),
            (128.0, "Anyway, let us move on to the next topic of the day now.")]
    p, e = _passage(0, rows, 132.0, embed)
    index = SimpleNamespace(sentences={("L5", 0): e}, course_of={})
    query = "what is a hash table"

    def texts():
        return [s.text for s in extractive_answer(index, [p], query, embed([query])[0])]
    assert not any(t.startswith("Which") for t in texts()), texts()
    from services.ask.writers import extractive
    monkeypatch.setattr(extractive, "continues", lambda text: False)  # the rule keeps it out: without it, it joins
    assert any(t.startswith("Which") for t in texts()), texts()
