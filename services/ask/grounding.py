"""What a cloud writer's sentence may say (issue 31), checked before it is released
(:func:`services.ask.writers.fallback._checked`), after its citations are validated. A citation of the right
form (a passage given, a time inside it) does not make a sentence true: the writer may have been
told by an injected instruction, or may invent. Measured on a labelled set of real lecture
passages (``tests/data/grounding.jsonl``; ``python -m evals.grounding``).

- :func:`plain_text`: an answer is plain text; markup a writer wrote (``<script>``, ``<img
  onerror=…>``) is taken out, tags and what a script or style element holds, before the sentence is
  checked, shown or stored.
- :func:`ungrounded`: why a sentence is not supported by the passages it cites, or None when it is.
  Supported: at least :data:`THRESHOLD` of its content words (:func:`claim_stems`) are found in those
  passages, as a word or another form of it; and it adds nothing a reader would act on that they do
  not say: no web or e-mail address (also spelled out, "evil dot com"), no word asking the reader
  to act or announcing a change to the course (``vocabulary.GROUNDING_ACTION``: "password", "send",
  "exam"...) and no number (but the number of a lecture it cites: "in lecture 4").

What it cannot see: a sentence that puts the passage's own words to another claim ("sorting the array
makes insertion faster").
"""

from __future__ import annotations

import functools
import os
import re
from html.parser import HTMLParser

from lecturecopilot.text import BIDI_CONTROLS
from lecturecopilot.vocabulary import (GROUNDING_ACTION, GROUNDING_FRAMING, NUMBER_HINTS, NUMBER_WORDS,
                                      NUMBER_WORDS_LARGE)

from .refine import content_words

THRESHOLD = 0.5  # share of a sentence's claim words its passage must say (chosen by evals.grounding)
NEAR_FORM = 5  # letters two forms of one word share at the start at least ("collision" / "collide")

# -- markup -----------------------------------------------------------------------------------


class _TextOf(HTMLParser):
    """The text of HTML: character data outside ``script`` and ``style``, references resolved."""

    _HIDDEN = frozenset({"script", "style"})

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        self.hidden += tag in self._HIDDEN

    def handle_endtag(self, tag):
        if tag in self._HIDDEN and self.hidden:
            self.hidden -= 1

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


_UNCLOSED_TAG = re.compile(r"<[A-Za-z/!?][^<>]*$")  # a tag a sentence's end cut open: HTML drops it too
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
# what lecturecopilot.text.refused refuses in a one-line field: control characters (Cc), surrogates (Cs), bidi controls
_REFUSED = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff" + "".join(sorted(BIDI_CONTROLS)) + "]")


def plain_text(text: str) -> str:
    """``text`` as plain text: tags, comments and what ``<script>`` / ``<style>`` hold removed, character
    references resolved (again, while that makes new markup: ``&lt;b&gt;`` is markup once read),
    control and bidirectional override characters dropped, whitespace collapsed. "a < b" stays."""
    for _ in range(3):
        if "<" not in text and "&" not in text:
            break
        parser = _TextOf()
        parser.feed(text)
        parser.close()
        out = _UNCLOSED_TAG.sub("", "".join(parser.parts))
        if out == text:
            break
        text = out
    text = _TAG_START.sub("", text)  # left only by markup escaped four times over
    return " ".join(_REFUSED.sub("", text).split())


# -- words ------------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """A light stem of a lower-case word, the same for its usual forms: "keys"/"key", "stored"/
    "stores"/"store", "sorting"/"sorted", "smaller"/"smallest"/"small", "queries"/"query"."""
    w = word
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith(("ies", "ied")) and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "est", "ed", "er", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[:-len(suffix)]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]
    return w


# -- numbers and addresses ----------------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NUMBER_WORDS = NUMBER_WORDS | NUMBER_WORDS_LARGE
_SAID_NUMBERS = {w: str(i) for w, i in _NUMBER_WORDS.items() if i > 2}  # "one key", "two halves": rarely a figure
_LECTURE = re.compile(r"\b(?:lecture\s*|L)(\d+)\b", re.IGNORECASE)  # "lecture 4", "L4"


def _numbers(text: str) -> set[str]:
    return {re.sub(r"[.,]", "", n) for n in _NUMBER.findall(text)}


def _said_numbers(text: str) -> set[str]:
    """The numbers a sentence gives: its digits and number words ("three", not "one", "two" or "a pair")."""
    return _numbers(text) | {_SAID_NUMBERS[w] for w in _WORD.findall(text.lower()) if w in _SAID_NUMBERS}


_TLD = r"(?:com|org|net|edu|gov|io|co|info|biz|me|app|dev|ai|xyz|ru|cn|uk|de|ly|gg|top|site|online|click)"
_ADDRESS = re.compile(
    r"(?:https?|ftp)://[^\s<>\"']+|\bwww\.[^\s<>\"']+"  # a URL
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an e-mail address
    rf"|\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.{_TLD}\b", re.IGNORECASE)  # a domain
_SPELLED_DOT = re.compile(r"\s*(?:\(dot\)|\[dot\]|\{dot\}|\bdot\b)\s*", re.IGNORECASE)
_SPELLED_AT = re.compile(r"\s*(?:\(at\)|\[at\]|\{at\})\s*", re.IGNORECASE)


def _spelled(text: str) -> str:
    """``text`` lower-cased with spelled-out address parts written as they are meant ("evil dot com" →
    "evil.com", "me (at) x" → "me@x")."""
    return _SPELLED_AT.sub("@", _SPELLED_DOT.sub(".", text.lower()))


def addresses(text: str) -> set[str]:
    """The web and e-mail addresses and domains ``text`` gives, spelled out or not, lower-cased,
    without a URL's scheme and ``www.``."""
    return {re.sub(r"^(?:[a-z]+://)?(?:www\.)?", "", a.rstrip(".,;:!?)]}'\"")) for a in _ADDRESS.findall(_spelled(text))}


_FRAMING = frozenset(map(stem, GROUNDING_FRAMING))
_ACTION = frozenset(map(stem, GROUNDING_ACTION))


class Source:
    """What the passages a sentence cites say: their word stems (and by first letters, for another form
    of a word), numbers (their digits and number words, what :data:`NUMBER_HINTS` words say, and 1,
    which "a" says) and addresses."""

    def __init__(self, texts: list[str]):
        text = " ".join(plain_text(t) for t in texts)
        self.stems = {stem(w) for w in content_words(text)}
        self.by_start: dict[str, list[str]] = {}
        for s in self.stems:
            self.by_start.setdefault(s[:NEAR_FORM], []).append(s)
        words = _WORD.findall(text.lower())
        self.numbers = _numbers(text) | {"1"} | {str(_NUMBER_WORDS[w]) for w in words if w in _NUMBER_WORDS} \
            | {NUMBER_HINTS[w] for w in words if w in NUMBER_HINTS}
        self.spelled = _spelled(text)

    def says(self, s: str) -> bool:
        """True when the passages say the stem ``s``, or another form of its word: one whose stem
        starts with the same :data:`NEAR_FORM` letters and differs from it in at most 3 more."""
        if s in self.stems:
            return True
        if len(s) < NEAR_FORM:
            return False
        return any(len(os.path.commonprefix([s, t])) >= min(len(s), len(t)) - 3
                   for t in self.by_start.get(s[:NEAR_FORM], ()))


def claim_stems(sentence: str) -> set[str]:
    """The stems of a sentence's content words that make its claim: framing ("according to the
    lecture") and numbers (checked on their own) left out."""
    return {s for s in map(stem, content_words(sentence)) if s not in _FRAMING and not any(c.isdigit() for c in s)}


# -- the check --------------------------------------------------------------------------------

_AGAIN = "say only what the passages say"


def ungrounded(sentence: str, cited_texts: list[str], lectures: tuple[int, ...] = (),
               threshold: float = THRESHOLD) -> str | None:
    """Why the plain-text ``sentence`` (:func:`plain_text`) is not supported by the passages it cites
    (``cited_texts``; ``lectures``, their lectures' numbers, which the sentence may name: "in lecture
    4"), or None when it is (see the module docstring). The message is said back to the writer when it
    is asked again."""
    source = _source(tuple(cited_texts))
    words = claim_stems(sentence)
    said = {w for w in words if source.says(w)}
    if words and not said:
        return f"a sentence shares no word with the passage it cites; {_AGAIN}"
    figures = _LECTURE.sub(lambda m: " " if int(m.group(1)) in lectures else m.group(0), sentence)
    invented = sorted(_said_numbers(figures) - source.numbers, key=lambda n: (len(n), n))
    if invented:
        return f"a sentence has {', '.join(invented)}, which the passage it cites does not; {_AGAIN}"
    if any(a not in source.spelled for a in addresses(sentence)):
        return f"a sentence gives a web or e-mail address that the passage it cites does not; {_AGAIN}"
    acting = sorted({s for s in map(stem, content_words(sentence)) if s in _ACTION} - source.stems)
    if acting:
        return (f"a sentence has {', '.join(acting)}: a request to act or an announcement that the passage it cites "
                f"does not make; {_AGAIN}")
    if words and len(said) / len(words) < threshold:
        return f"a sentence says what the passage it cites does not ({', '.join(sorted(words - said)[:6])}); {_AGAIN}"
    return None


@functools.lru_cache(maxsize=64)
def _source(texts: tuple[str, ...]) -> Source:
    """:class:`Source` of ``texts``, kept for the next sentences of an answer, which mostly cite the same passages."""
    return Source(list(texts))
