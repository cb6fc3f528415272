"""The text the relevance gate judges: request framing and very common English words removed."""

import pytest

from services.ask.gate import request_topic, topic_words


@pytest.mark.parametrize("question, topic", [
    ("explain chaining", "chaining"),
    ("Explain how chaining works", "how chaining works"),
    ("Explain what chaining is", "what chaining is"),
    ("tell me about chaining", "chaining"),
    ("Tell me more about open addressing", "open addressing"),
    ("describe chaining", "chaining"),
    ("Can you please explain radix sort to me?", "radix sort?"),
    ("Could you explain to me what a hash table is?", "what a hash table is?"),
    ("hey, explain chaining", "chaining"),
    ("I don't understand chaining", "chaining"),
    ("define hashing", "hashing"),
    ("What is chaining?", "What is chaining?"),      # a question is left as it is
    ("Outline of the course?", "Outline of the course?"),
    ("explaining variance", "explaining variance"),  # not a request
    ("explain", "explain"),                          # only framing: kept
    ("describe   ", "describe"),
])
def test_request_framing_is_removed(question, topic):
    assert request_topic(question) == topic


@pytest.mark.parametrize("question, words", [
    ("Explain how chaining works", "chaining"),
    ("How long does merge sort take?", "merge sort"),
    ("What is the capital of France?", "capital France"),
    ("What is consistent hashing in distributed systems?", "consistent hashing distributed systems"),
    ("what time is it?", ""),
])
def test_topic_words_drop_only_very_common_words(question, words):
    assert topic_words(question) == words
