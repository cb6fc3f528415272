"""A slide quoted in an answer, shown as a slide: ``On the slide “Title”: “…”``.

A slide reaches the index as one sentence, ``"Title: item; item; item."``
(:func:`lecturecopilot.slidetext.slide_sentence`: each bulleted or numbered line an item). A quote is the
one item sharing most content words with the question (a plural counts as its singular), whole (an
item of one or two words whose every content word the question or the title says, a label such as
"White dwarfs" for "Why are white dwarfs faint?", is quoted only when no other item is left); when no
item shares one, no item answers better than another and the items are quoted in order, as the list
under the slide's title ("What are the two ways to resolve collisions?" → the slide "Two ways to resolve
collisions" and all its items, not its first). An item over ``SLIDE_WORDS`` words gives its best
sentence, then its best clause. Splits never fall inside brackets ("G = (V, E)", "(red or black; root
black)") or at an abbreviation's dot ("Dijkstra vs. Bellman-Ford", "a.k.a. prefix tree"), and a quote is
never empty, never only punctuation, never over ``SLIDE_CHARS`` characters (its title: ``TITLE_CHARS``).
"""

from __future__ import annotations

import re
from typing import Callable

from .refine import content_words

SLIDE_WORDS = 20   # a slide quoted in an answer: its title and at most this many words of its text
SLIDE_CHARS = 200  # ... and at most this many characters (a URL or a formula can be one long "word")
TITLE_CHARS = 100  # a slide's title in a quote: at most this many characters
_OPEN, _CLOSE = "([{", ")]}"
# a sentence's end inside a long item: ". ", "? " or "! " after a word of 3+ letters (not "vs.", "Dr.",
# "a.k.a.", "e.g.") before a capital, unless that word is a usual abbreviation
_SENTENCE_END = re.compile(r"(?<=[A-Za-z0-9)]{3}[.?!])\s+(?=[A-Z])")
_ABBREVIATIONS = frozenset("etc prof approx fig figs resp vol cf incl esp".split())


def top_level_split(text: str, sep: str) -> list[str]:
    """``text`` split at each ``sep`` followed by a space that lies outside brackets (a stack of
    ``([{``; a closer that matches nothing is ignored): ``top_level_split("G = (V, E), w", ",")`` →
    ``["G = (V, E)", "w"]``. Parts are stripped; empty ones dropped."""
    parts, stack, start = [], [], 0
    for k, ch in enumerate(text):
        if ch in _OPEN:
            stack.append(_CLOSE[_OPEN.index(ch)])
        elif ch in _CLOSE and stack and stack[-1] == ch:
            stack.pop()
        elif ch == sep and not stack and text[k + 1:k + 2] == " ":
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _sentences(item: str) -> list[str]:
    out, start = [], 0
    for m in _SENTENCE_END.finditer(item):
        word = re.findall(r"[A-Za-z]+(?=\.$)", item[max(start, m.start() - 40):m.start()])  # the last word only
        if word and word[-1].lower() in _ABBREVIATIONS:
            continue
        out.append(item[start:m.start()])
        start = m.end()
    out.append(item[start:])
    return [s.strip() for s in out if s.strip()]


def _has_text(unit: str) -> bool:
    return bool(re.search(r"[A-Za-z0-9]", unit))


def _cut(words: list[str]) -> str:
    """At most ``SLIDE_WORDS`` words and ``SLIDE_CHARS`` characters, "…" when cut; a cut inside
    brackets goes back to the last word outside them when that keeps five words or more."""
    kept, chars = [], 0
    for w in words[:SLIDE_WORDS]:
        if chars + len(w) > SLIDE_CHARS:
            if not kept:
                kept.append(w[:SLIDE_CHARS])
            break
        kept.append(w)
        chars += len(w) + 1
    if len(kept) == len(words):
        return " ".join(kept)
    depth, outside = 0, 0
    for k, w in enumerate(kept):
        depth += sum(w.count(c) for c in _OPEN) - sum(w.count(c) for c in _CLOSE)
        if depth <= 0:
            depth, outside = 0, k + 1
    if 0 < depth and outside >= 5:
        kept = kept[:outside]
    return " ".join(kept).rstrip(".;,:") + "…"


def _keys(text: str) -> set[str]:
    """:func:`refine.content_words` of ``text``, a final "s" dropped from words of 4+ letters."""
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in content_words(text)}


def slide_excerpt(text: str, query: str, is_talk: Callable[[str], bool] | None = None) -> str:
    """``text`` (a slide sentence, see the module doc) quoted for ``query`` as one sentence, ending in
    a full stop; "" when it holds nothing to quote (no letter or digit at all). ``is_talk(sentence)``
    marks classroom talk (a slide that quotes the narration, "Does that make sense? So this is an idea
    called chaining…"): leading sentences it marks are left out while another sentence follows."""
    title, _, body = text.partition(": ")
    if not body:
        title, body = "", text
    want = _keys(query)
    said = want | _keys(title)

    def best(units: list[str]) -> str:
        units = [u for u in units if _has_text(u)] or units
        return max(units, key=lambda c: len(want & _keys(c)))

    def echo(item: str) -> bool:  # a label of a word or two, all said already ("Eccentricity", "White dwarfs")
        return len(item.split()) <= 2 and not _keys(item) - said

    items = [u for u in top_level_split(body.strip().rstrip("."), ";") if _has_text(u)]
    items = [u for u in items if not echo(u)] or items
    listed = len(items) > 1 and not any(want & _keys(u) for u in items)  # the list answers, not one item
    if listed:  # whole items in order while within SLIDE_WORDS, then "…"
        kept = [u.rstrip(".;,") for n, u in enumerate(items)
                if sum(len(v.split()) for v in items[:n + 1]) <= SLIDE_WORDS] or [items[0]]
        chosen = "; ".join(kept) + ("; \u2026" if len(kept) < len(items) else "")
    else:
        chosen = best(items or [body]).rstrip(".;,")
    if is_talk is not None:
        sents = _sentences(chosen)
        while len(sents) > 1 and is_talk(sents[0]):
            sents = sents[1:]
        chosen = " ".join(sents) or chosen
    if len(chosen.split()) > SLIDE_WORDS and not listed:
        chosen = best(_sentences(chosen) or [chosen]).rstrip(".;,")
    if len(chosen.split()) > SLIDE_WORDS and not listed:
        chosen = best(top_level_split(chosen, ",") or [chosen])
    title = title.strip().rstrip(":")
    if len(title) > TITLE_CHARS:
        title = title[:TITLE_CHARS].rsplit(" ", 1)[0].rstrip(".;,:") + "\u2026"
    quote = _cut(chosen.rstrip(".;,").split()) if _has_text(chosen) else ""
    if not _has_text(quote):  # nothing but punctuation within the limits ("= = = … zebra")
        return f"On the slide \u201c{title}\u201d." if _has_text(title) else ""
    return (f"On the slide \u201c{title}\u201d: \u201c{quote}\u201d." if title
            else f"On the slide: \u201c{quote}\u201d.")
