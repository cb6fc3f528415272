"""Answers about the course itself, from its outline (lectures: numbers, titles, durations,
chapters): "how many lectures are there?", "how long is lecture 4?", "which lecture covers radix
sort?", "what is lecture 5 about?", "what are the chapters of the fifth lecture?". Citations point at
a lecture's start, at a chapter's start, or for "which lecture covers X" at the passage where X is
taught (found by the product's own retrieval). A lecture is named by :func:`lecture_ref`."""

from __future__ import annotations

import re
from typing import Callable

from lecturecopilot.labels import clock
from lecturecopilot.vocabulary import NUMBER_WORDS as _NUMBER_WORDS
from lecturecopilot.vocabulary import ORDINALS as _ORDINALS

from .disfluency import clean
from .domain import AnswerSentence, Cite, LectureInfo
from .gate import common_word
from .writers.extractive import is_chatter


_HOW_MANY = re.compile(r"\bhow many (?:lectures|videos|classes|sessions)\b|\b(?:list|show)(?: me)? (?:all |the )*lectures\b"
                       r"|\b(?:what|which) (?:lectures|videos) (?:are there|are (?:in|on|part of) (?:this|the) (?:course|class)|"
                       r"does (?:this|the) (?:course|class) have)\b|\bwhat are (?:all )?the (?:lectures|videos)\b", re.I)
_TOPICS = re.compile(r"\bwhat (?:topics|subjects|things)\b.*\b(?:course|class|lectures?)\b"
                     r"|\bwhat (?:is|does) (?:this|the) (?:course|class)\b.*\b(?:about|cover)\b"
                     r"|\b(?:syllabus|course outline|table of contents)\b", re.I)
_COURSE_LONG = re.compile(r"\bhow (?:long|many hours)\b.*\b(?:course|class|all (?:the )?lectures)\b", re.I)
_WHICH = re.compile(r"\b(?:which|what|in which)\s+lectures?\s+(?:covers?|discuss(?:es)?|talks? about|is about|"
                    r"explains?|teach(?:es)?|introduces?|has|mentions?)\s+(?P<x>.+?)[?.!]*$"
                    r"|\bwhere (?:is|are|do(?:es)? (?:you|they|we))\s+(?P<y>.+?)\s+(?:covered|discussed|explained|taught|"
                    r"introduced|talk about|cover)\b", re.I)


_NAMED = r"(?:lecture|lec|class|session|video)"
# any number of digits: "lecture 99999999999999999999999" is a lecture the course does not have, not a topic
_LECTURE_NUMBER = re.compile(rf"\b{_NAMED}\s*(?:#|no\.?|number)?\s*(\d+|{'|'.join(_NUMBER_WORDS)})\b"
                             r"|\bL(\d{1,4})\b", re.I)
_LECTURE_ORDINAL = re.compile(rf"\b(\d{{1,4}})(?:st|nd|rd|th)\s+{_NAMED}\b|\b({'|'.join(_ORDINALS)})\s+{_NAMED}\b", re.I)


def _number(token: str) -> int:
    """A lecture's number as written: digits, a number word ("five") or an ordinal word ("fifth")."""
    t = token.lower()
    return int(t) if t.isdigit() else _NUMBER_WORDS[t] if t in _NUMBER_WORDS else _ORDINALS[t]


def lecture_ref(text: str) -> int | None:
    """The lecture number ``text`` names ("lecture 5", "Lecture #5", "L5", "lecture five", "the fifth
    lecture", "5th lecture"), or None."""
    m = _LECTURE_NUMBER.search(text) or _LECTURE_ORDINAL.search(text)
    return _number(m.group(1) or m.group(2)) if m else None


# "How is ATP used in lecture 1?", "what did the second lecture say about entropy?": a question about a topic
# scoped to one lecture by name (a preposition before it, or the lecture as the subject that says something);
# not "L2" or "class 2", which are a field's words too ("L2 regularization", "class 2 error")
_LECTURE = rf"(?:lecture|lec\.?)\s*(?:#|no\.?|number)?\s*(?P<n>\d{{1,4}}(?![.,]?\d)|{'|'.join(_NUMBER_WORDS)}\b)"
_NTH_LECTURE = rf"(?:(?P<d>\d{{1,4}})(?:st|nd|rd|th)|(?P<o>{'|'.join(_ORDINALS)}))\s+lecture\b"
_SCOPES = (re.compile(rf"\b(?:in|from|during|within|of|for|according to)\s+(?:the\s+)?(?:{_LECTURE}|{_NTH_LECTURE})", re.I),
           re.compile(rf"\b(?:the\s+)?(?:{_LECTURE}|{_NTH_LECTURE})(?=\s+(?:says?|said|covers?|covered|explains?|"
                      r"explained|mentions?|mentioned|shows?|showed)\b)", re.I))


# "how long is lecture 7?", "the duration of the second lecture", "lecture 3's length": the whole question asks
# it (a trial's "What did lecture 2 say about how long monetary policy takes to work?" got "L2 … is 2:37 long.")
_NAMING = rf"(?:the\s+)?(?:{_LECTURE}|{_NTH_LECTURE})"
_HOW_LONG = re.compile(r"^\W*(?:(?:so|and|but|ok|okay)\W+)?(?P<lead>how long (?:is|was|does|will) |(?:what(?: is|'s|’s)\s+)?"
                       rf"(?:the\s+)?(?:duration|length|running time|runtime) of )?{_NAMING}"
                       r"(?P<tail>(?:'s|’s)?\s+(?:duration|length|running time|runtime))?(?:\s+(?:last|take|run|be|go))?"
                       r"(?:\s+in (?:minutes|hours|total))?\W*$", re.I)


def asks_how_long(question: str) -> int | None:
    """The number of the lecture whose length ``question`` asks and asks nothing else ("how long is
    lecture 7?", "what's the duration of the second lecture?"); None otherwise."""
    m = _HOW_LONG.match(question.strip())
    return _number(m.group("n") or m.group("d") or m.group("o")) if m and (m.group("lead") or m.group("tail")) else None


def lecture_scope(question: str) -> tuple[int, str] | None:
    """``(lecture number, the question without its naming)`` when ``question`` asks about a topic in
    one lecture it names ("How is ATP used in lecture 1?" → ``(1, "How is ATP used?")``; "what did
    the second lecture say about entropy?" → ``(2, "what did say about entropy?")``); None otherwise."""
    m = next((m for m in (p.search(question) for p in _SCOPES) if m), None)
    if not m:
        return None
    number = _number(m.group("n") or m.group("d") or m.group("o"))
    rest = " ".join((question[:m.start()].rstrip(" ,;:") + question[m.end():]).split()).strip(" ,;:")
    return number, rest


def named_lecture(scope: tuple[int, str], lectures: list[LectureInfo]) -> list[AnswerSentence] | None:
    """The reply to a question :func:`lecture_scope` found naming lecture ``scope[0]`` when it is not
    to be searched: "There is no lecture 5 ready in this course; …" when no ready lecture has that number,
    the lecture's outline when nothing but the naming was asked ("in lecture 1?"); None otherwise."""
    ready = sorted(lectures, key=lambda l: l.number)
    named = [l for l in ready if l.number == scope[0]]
    if ready and not named:
        return _no_such_lecture(scope[0], ready)
    if named and not re.search(r"[A-Za-z]{2}", scope[1]):
        return lecture_outline(named[0])
    return None


# what a question asks of one lecture it names: its chapters, topics, summary, what it is about
_OF_LECTURE = re.compile(r"\b(?:chapters?|sections?|parts|topics?|outline|overview|summar(?:y|i[sz]e)|contents?|"
                         r"agenda|about|covers?|covered|discuss(?:es|ed)?|teach(?:es)?|go(?:es)? over|happens? in)\b", re.I)


def asks_for_outline(question: str, titles: dict[int, str] | None = None) -> int | None:
    """The lecture number when ``question`` asks what one lecture holds ("What are the chapters of
    lecture 5?", "what is lecture 4 about", "summarize the third lecture"), else None. Besides the
    lecture it names and the words of such a request (:data:`_OF_LECTURE`), the question may hold only
    very common words (``gate.common_word``): "what does lecture 3 say about merge sort?" names a
    topic, so it is a question about merge sort, not about the lecture. A lecture may be named by
    its title too (``titles``: number → title) when the title holds a number ("what's week 1 about"
    for a lecture titled "Week 1"): such a title is a name; one without ("Hashing") is a topic."""
    n, named = lecture_ref(question), None
    if n is None:
        named = next(((k, t) for k, t in (titles or {}).items() if re.search(r"\d", t)
                      and re.search(rf"(?<!\w){re.escape(t.strip())}(?!\w)", question, re.I)), None)
        n = named[0] if named else None
    if n is None or not _OF_LECTURE.search(question) or _WHICH.search(question):
        return None
    rest = re.sub(rf"(?<!\w){re.escape(named[1].strip())}(?!\w)", " ", question, flags=re.I) if named else question
    rest = _OF_LECTURE.sub(" ", _LECTURE_ORDINAL.sub(" ", _LECTURE_NUMBER.sub(" ", rest)))
    return None if any(not common_word(w) for w in re.findall(r"[A-Za-z][A-Za-z'-]+", rest)) else n


_OUTLINE_NOUN = re.compile(r"\b(?:chapters?|sections?|outline|overview|summar(?:y|i[sz]e)|contents?|agenda|topics?)\b", re.I)
_SCOPE_WORDS = re.compile(rf"\b(?:{_NAMED[3:-1]}|lectures|videos|classes|course|today'?s?)\b", re.I)


def asks_for_unnamed_outline(question: str) -> bool:
    """True when ``question`` asks for an outline without naming a lecture ("What are the chapters?",
    "Give me an outline of the lecture", "summarize this video"): an outline word
    (:data:`_OUTLINE_NOUN`) and otherwise only very common words and words for a lecture or the course.
    "What are the parts of a hash function?" names a topic, so it is not one."""
    if lecture_ref(question) is not None or not _OUTLINE_NOUN.search(question) or _WHICH.search(question):
        return False
    rest = _SCOPE_WORDS.sub(" ", _OUTLINE_NOUN.sub(" ", question))
    return not any(not common_word(w) for w in re.findall(r"[A-Za-z][A-Za-z'-]+", rest))


_SLIDE_LIKE = re.compile(r"^[^.?!:]{1,60}: |; ")  # "Hashing: item; item." is a slide's text, no summary


def chapter_summary(bullets: str) -> str:
    """The first of a chapter's summary bullets (``"\n"``-joined sentences) that reads as a sentence of
    the lecture, cleaned of disfluencies: not a slide's "Title: item; item", not a question, not
    classroom talk, at least 6 words; "" when none does."""
    for b in bullets.split("\n"):
        text = clean(b, opening=True)
        if (len(text.split()) >= 6 and not _SLIDE_LIKE.search(b) and not text.endswith("?")
                and not is_chatter(text)):
            return text if text.endswith((".", "!")) else text + "."
    return ""


def lecture_outline(l: LectureInfo) -> list[AnswerSentence]:
    """What one lecture is about: its title and chapters, each chapter cited at its start with the
    first sentence of its summary (:func:`chapter_summary`) when it has one."""
    if not l.chapters:
        return [AnswerSentence(f"L{l.number} is \u201c{l.title}\u201d ({_dur(l)}).", [Cite(l.id, l.number, 0.0)])]
    summaries = [chapter_summary(x) for x in l.summaries] + [""] * len(l.chapters)
    if len(l.chapters) == 1:
        (t, title), summary = l.chapters[0], summaries[0]
        return [AnswerSentence(f"L{l.number} \u201c{l.title}\u201d ({_dur(l)}) is one chapter, {title}"
                               + (f": {summary}" if summary else "."), [Cite(l.id, l.number, t)])]
    head = AnswerSentence(f"L{l.number} \u201c{l.title}\u201d ({_dur(l)}) has {len(l.chapters)} chapters:",
                          [Cite(l.id, l.number, 0.0)])
    return [head] + [AnswerSentence(f"{title} ({clock(t)})" + (f": {summary}" if summary else "."),
                                    [Cite(l.id, l.number, t)]) for (t, title), summary in zip(l.chapters, summaries)]


def _dur(l: LectureInfo) -> str:
    return clock(l.duration_s) if l.duration_s else "unknown length"


def _no_such_lecture(n: int | str, ready: list[LectureInfo]) -> list[AnswerSentence]:
    """"There is no lecture 7 ready in this course; it has only lecture 4 ready, “Hashing”." (or "its
    ready lectures are 1, 2 and 5", "… are 1–12"), citing each lecture's start; ``n`` a number, or what
    was asked for ("week 2"). "Ready": a lecture still processing, or whose processing failed, is not
    one to ask about yet, but it is there (a hostile pass read "There is no lecture 1" of a failed one)."""
    nums = [x.number for x in ready]
    if len(ready) == 1:
        which = f"it has only lecture {nums[0]} ready, \u201c{ready[0].title}\u201d"
    elif len(nums) > 3 and nums == list(range(nums[0], nums[0] + len(nums))):
        which = f"its ready lectures are {nums[0]}\u2013{nums[-1]}"
    else:
        which = f"its ready lectures are {', '.join(map(str, nums[:-1]))} and {nums[-1]}"
    asked = f"lecture {n}" if isinstance(n, int) else n
    return [AnswerSentence(f"There is no {asked} ready in this course; {which}.",
                           [Cite(x.id, x.number, 0.0) for x in ready])]


_TITLED = re.compile(r"^\s*([A-Za-z]+)\s*(\d{1,4})\s*$")  # "Week 1", "Session 12": a series' name and number


def _missing_titled(question: str, ready: list[LectureInfo]) -> list[AnswerSentence] | None:
    """"There is no week 2 ready in this course; …" when the lectures are titled as a series ("Week 1")
    and ``question`` asks what one of it holds (:func:`asks_for_outline` with the title in the question)
    by a number none has; else None. (The search would answer "what's week 2 about" from week 1.)"""
    series = {m.group(1).lower() for l in ready if (m := _TITLED.match(l.title))}
    for low in series:
        for m in re.finditer(rf"(?<!\w){re.escape(low)}\s*(\d{{1,4}})(?!\w)", question, re.I):
            asked = f"{low} {int(m.group(1))}"
            if all(l.title.strip().lower() != asked for l in ready) and asks_for_outline(question, {0: m.group(0)}) == 0:
                return _no_such_lecture(asked, ready)
    return None


def _course_topics(ready: list[LectureInfo]) -> list[AnswerSentence]:
    out = []
    for l in ready:
        if l.chapters:
            text = f"L{l.number} {l.title} covers " + ", ".join(t for _, t in l.chapters) + "."
            out.append(AnswerSentence(text, [Cite(l.id, l.number, t) for t, _ in l.chapters[:4]]))
        else:
            out.append(AnswerSentence(f"L{l.number} is {l.title}.", [Cite(l.id, l.number, 0.0)]))
    return out


def _where_taught(m: re.Match, ready: list[LectureInfo],
                  locate: Callable[[str], tuple[str, float] | None]) -> list[AnswerSentence] | None:
    topic = (m.group("x") or m.group("y") or "").strip()
    found = locate(topic) if topic else None
    if found is None:
        return None
    lecture_id, t_s = found
    l = next((x for x in ready if x.id == lecture_id), None)
    if l is None:
        return None
    return [AnswerSentence(f"{topic[:1].upper() + topic[1:]} is covered in L{l.number} {l.title}, "
                           f"around {clock(t_s)}.", [Cite(l.id, l.number, t_s)])]


def answer(question: str, lectures: list[LectureInfo],
           locate: Callable[[str], tuple[str, float] | None], scope: str = "") -> list[AnswerSentence] | None:
    """Sentences answering an outline question, or None when ``question`` isn't one.

    ``locate(topic)`` returns (lecture_id, t_s) where the course teaches ``topic``, or None.
    ``scope``: the lecture the question is asked in ("" for the whole course): an outline asked for
    without naming a lecture is that lecture's, or the only lecture's, else the course's topics.
    """
    ready = sorted(lectures, key=lambda l: l.number)
    if not ready:
        return None
    by_number = {l.number: l for l in ready}
    if _HOW_MANY.search(question):
        parts = [f"L{l.number} {l.title} ({_dur(l)})" for l in ready]
        text = (f"This course has {len(ready)} lecture{'s' if len(ready) != 1 else ''} ready to ask about: "
                + "; ".join(parts) + ".")
        return [AnswerSentence(text, [Cite(l.id, l.number, 0.0) for l in ready])]
    if _COURSE_LONG.search(question):
        total = sum(l.duration_s or 0 for l in ready)
        return [AnswerSentence(f"The {len(ready)} lecture{'s' if len(ready) != 1 else ''} add up to {clock(total)}.",
                               [Cite(l.id, l.number, 0.0) for l in ready])]
    n = asks_for_outline(question, {l.number: l.title for l in ready})
    if n is not None:
        return lecture_outline(by_number[n]) if n in by_number else _no_such_lecture(n, ready)
    if missing := _missing_titled(question, ready):
        return missing
    if asks_for_unnamed_outline(question):
        one = [l for l in ready if l.id == scope] or (ready if len(ready) == 1 else [])
        return lecture_outline(one[0]) if one else _course_topics(ready)
    if _TOPICS.search(question):
        return _course_topics(ready)
    n = asks_how_long(question)
    if n is not None:
        if n not in by_number:
            return _no_such_lecture(n, ready)
        l = by_number[n]
        return [AnswerSentence(f"L{l.number} {l.title} is {_dur(l)} long.", [Cite(l.id, l.number, 0.0)])]
    m = _WHICH.search(question)
    return _where_taught(m, ready, locate) if m else None
