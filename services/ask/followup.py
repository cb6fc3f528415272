"""Rule-based rewriting of a follow-up into a standalone question (no model needed).

Given the last exchanges of a conversation (oldest first), a message that leans on them —
"why?", "explain that more simply", "and for radix sort?", "what about open addressing",
"how does it work?" — becomes a question that stands alone; anything else is left as is.
"""

from __future__ import annotations

import logging
import re

from rapidfuzz import fuzz

from lecturecopilot.vocabulary import QUESTION_VERBS as _QUESTION_VERBS

from . import moment
from .domain import MAX_QUESTION_CHARS
from .grounding import plain_text
from .refine import content_words
from .writers.cloud import REWRITE_PROMPT, WriterUnavailable, rewrite_prompt

_REPHRASE = re.compile(r"^(?:(?:can|could) you |please )?(?:(?:explain|say|put) (?:that|it|this)\b.*"
                       r"|(?:simpler|more simply|in simpler terms|eli5|i don'?t (?:get|understand)(?: it| that)?)\W*$"
                       r"|(?:go on|tell me more|more|continue|elaborate|(?:an )?example|give (?:me )?(?:an|another) "
                       r"example|show (?:me )?an example)\W*(?:please)?\W*$)", re.I)
_WHY = re.compile(r"^(?:but |and |so )?(?:why|how come|why is that|why so|how so)\W*$", re.I)
_WHY_OPENING = re.compile(r"^(?:but |and |so )?(?:why|how come)\b", re.I)
_SWAP = re.compile(r"^(?:(?:and|what|how|but)\b)?\s*(?:(?:about|for|with|regarding|in)\b)?\s*(?:the case of\s+)?(?P<x>.+)$",
                   re.I | re.S)  # whole words: "insertion sort" is not "in" + "sertion sort", "without" not "with" + "out"
_STARTS_SWAP = re.compile(r"^(?:and (?:for|about|with|what about)|what about|how about|and)\s+", re.I)
_PRONOUN = re.compile(r"\b(?:it|that|this|they|them|those|these|its)\b", re.I)


_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.I)
_PREPOSITIONS = r"(?:with|without|in|on|for|from|by|after|before|under|over|using|at|above|below|beyond|within|inside|outside|" \
    r"between|during|into|through|near|against)"
_PREPOSITION = re.compile(rf"^{_PREPOSITIONS}\b", re.I)
# "and above it?": another preposition of the same thing, the previous question's last prepositional phrase
_PREPOSITION_OF_IT = re.compile(rf"^(?P<p>{_PREPOSITIONS})\s+(?:it|that|this|them|those|these)$", re.I)
# A quantity and what it counts: "95%", "5 items", "0.05 significance", "ten" is a word, not a quantity here
_QUANTITY = re.compile(r"(?<![\w.])(?P<n>\d+(?:[.,]\d+)?)(?:\s*(?P<u>%|[A-Za-z]+))?", re.I)
_LABELLED = re.compile(r"\b(?P<u>[A-Za-z]+)\s*#?\s*(?P<n>\d+(?:[.,]\d+)?)\b(?![.,]\d)")  # "lecture 1", "step 3", "chapter #2"
_PLACE = re.compile(r"[A-Za-z]{3,}\s+\d+")  # "chapter 2", "step 3", "figure 4": a word, a space, a number
# "the second one", "the 3rd": an ordinal standing for the thing the previous question counted
_ORDINAL = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|next|\d+(?:st|nd|rd|th))"
_ORDINAL_ONE = re.compile(rf"(?P<o>{_ORDINAL})(?:\s+one)?", re.I)
_ORDINAL_NOUN = re.compile(rf"(?P<o>{_ORDINAL})\s+(?P<n>[A-Za-z][\w'-]*(?:\s+[A-Za-z][\w'-]*)?)", re.I)
_CONJUNCTION_QUESTION = re.compile(r"^(?:and|but|so|also|then)\s*,?\s+(?=(?:what|how|why|when|where|which|who|whose|is|are|"
                                   r"was|were|does|do|did|can|could|would|will|should)\b)", re.I)


def _runs(question: str) -> list[str]:
    """Runs of consecutive content words in ``question``, in order ("running time", "counting sort")."""
    runs: list[list[str]] = [[]]
    for tok in re.findall(r"[A-Za-z0-9'-]+|\S", question):
        if content_words(tok) and tok.lower() not in _QUESTION_VERBS:
            runs[-1].append(tok)
        elif runs[-1]:
            runs.append([])
    return [" ".join(r) for r in runs if r]


def _topic(question: str, like: str = "") -> str:
    """The topic phrase of ``question``: the run sharing a word with ``like`` if any, else the
    longest run, the later one on a tie (questions tend to end on their topic: "... of X?")."""
    runs = _runs(question)
    if not runs:
        return ""
    if like:
        shared = [r for r in runs if content_words(r) & content_words(like)]
        if shared:
            return shared[-1]
    return max(reversed(runs), key=lambda r: len(r.split()))


LIKE_LETTERS = 0.7  # rapidfuzz's normalised Indel ratio at which two words are spelled alike ("inflation"/"deflation" 0.78)


def _narrowed(old: str, new: str) -> str:
    """The part of the run ``old`` that the topic ``new`` stands for: when ``new``'s head (last)
    word is in ``old``, the words of ``old`` up to it, as many as ``new`` has ("counting sort
    stable" for "radix sort" → "counting sort", so "stable" stays); else as many words of ``old`` as
    ``new`` has that are spelled like it (:data:`LIKE_LETTERS`: "inflation" in "unexpected inflation hurt
    lenders" for "deflation"; a trial's follow-up became "Does deflation?"); else ``old`` whole."""
    o, n = old.split(), new.split()
    for i, w in enumerate(o):
        if n and w.lower() == n[-1].lower() and i + 1 >= len(n):
            return " ".join(o[i + 1 - len(n):i + 1])
    if n and len(o) > len(n):  # "unexpected inflation hurt lenders" for "deflation": the words spelled like it
        spans = [" ".join(o[i:i + len(n)]) for i in range(len(o) - len(n) + 1)]
        best = max(spans, key=lambda x: fuzz.ratio(x.lower(), new.lower()))
        if fuzz.ratio(best.lower(), new.lower()) >= LIKE_LETTERS * 100 and not (best.lower() in new.lower()
                                                                             or new.lower() in best.lower()):
            return best  # not "sort" for "quicksort": a word inside the other is its head, not its sibling
    return old


def _without_trailing_marks(text: str) -> str:
    """``text`` without the marks it ends on ("99%?" → "99%"), in one pass (a regex ``\\W*$`` takes
    quadratic time on a long run of commas inside the text)."""
    end = len(text)
    while end and not (text[end - 1].isalnum() or text[end - 1] in "_%"):
        end -= 1
    return text[:end]


def _same_count(a: str, b: str) -> bool:
    """Whether two words a quantity is said with name the same thing ("items"/"item", "%"/"percent")."""
    a, b = a.lower().rstrip("s"), b.lower().rstrip("s")
    return a == b or {a, b} == {"%", "percent"}


def _swap_ordinal(prev: str, new_topic: str) -> str | None:
    """``prev`` with its last ordinal replaced by the one ``new_topic`` is ("What does Kepler's first law
    say?" + "second one" → "What does Kepler's second law say?"; an astronomy trial's follow-up became
    "What does second one?"; "What is the first step of …?" + "the second step": the ordinal of the same
    noun); None when ``new_topic`` is not an ordinal (alone, with "one" or with a noun) or ``prev`` has
    none (before that noun). A circuits trial's "what about the second step?" after "How do you find the
    Thevenin equivalent of a network?" became "How do you find the second step of a network?": an
    ordinal and a noun with no ordinal to swap ask for a part of what was asked, so the message goes
    before the previous question, as one that names no topic does."""
    topic = _without_trailing_marks(new_topic.strip())
    new = _ORDINAL_ONE.fullmatch(topic) or _ORDINAL_NOUN.fullmatch(topic)
    noun = rf"\s+{re.escape(new.group('n'))}\b" if new and new.groupdict().get("n") else ""
    old = list(re.finditer(rf"\b{_ORDINAL}(?={noun})", prev, re.I)) if new else []
    if not old:
        return None
    o = new.group("o")
    return prev[:old[-1].start()] + (o.lower() if prev[old[-1].start()].islower() else o.capitalize()) + prev[old[-1].end():]


def _swap_quantity(prev: str, new_topic: str) -> str | None:
    """``prev`` with its quantity replaced by the one ``new_topic`` is ("How do you build a 95%
    confidence interval?" + "99%" → "… a 99% confidence interval?"; "… for 5 items?" + "10 items" →
    "… for 10 items?"; "… in lecture 1?" + "in lecture 2" → "… in lecture 2?"): the quantity counting
    the same thing, else, for a bare number, the last one; None when ``new_topic`` is not a quantity
    or ``prev`` has none to swap."""
    topic = _PREPOSITION.sub("", new_topic.strip()).strip()
    label = _LABELLED.fullmatch(topic)  # "lecture 2" after "… in lecture 1?": the number of the same label
    if label:
        same = [m for m in _LABELLED.finditer(prev) if m.group("u").lower() == label.group("u").lower()]
        if same:
            return prev[:same[-1].start("n")] + label.group("n") + prev[same[-1].end("n"):]
        if not _PLACE.fullmatch(topic):
            return None  # "CO2", "H2O": a formula, not a place in the course
        # "and in chapter 2?" after a question with no chapter: the same question, placed there
        lead = _PREPOSITION.match(new_topic.strip())
        body = _without_trailing_marks(prev)
        return f"{body} {lead.group(0).lower() if lead else 'in'} {topic}{prev[len(body):]}"
    new = _QUANTITY.fullmatch(new_topic.strip())
    if not new:
        return None
    old = list(_QUANTITY.finditer(prev))
    same = [m for m in old if new.group("u") and m.group("u") and _same_count(m.group("u"), new.group("u"))]
    if same:
        m = same[-1]
    elif not new.group("u") and old:
        m = old[-1]
    else:
        return None
    return prev[:m.start("n")] + new.group("n") + prev[m.end("n"):]


def _with_antecedent(text: str, topic: str) -> str:
    """``text`` with its first pronoun replaced by ``topic`` ("its" by "<topic>'s"); a demonstrative
    followed by the topic's last word stands with that word for the topic ("why is that faster?" after
    "Is heapsort faster …": "why is heapsort faster?", not "… heapsort faster faster?")."""
    head = re.escape(topic.split()[-1]) if topic.split() else None
    if head and (m := re.search(rf"\b(?:that|this|those|these)\s+{head}\b", text, re.I)) \
            and m.start() == _PRONOUN.search(text).start():
        return text[:m.start()] + topic + text[m.end():]
    return _PRONOUN.sub(lambda m: f"{topic}'s" if m.group(0).lower() == "its" else topic, text, count=1)


def _outside(before: str) -> bool:
    """Whether the words ``before`` a pronoun hold no noun phrase it could refer to: no content word,
    or one word right before it, the verb it is the object of ("what joins them together …", "what
    causes it in …"); two words or more ("how does hashing handle them") may name it."""
    runs = _runs(before)
    return not runs or (len(runs) == 1 and " " not in runs[0] and before.rstrip().endswith(runs[0]))


def rewrite(message: str, history: list[str]) -> str:
    """The standalone question for ``message`` given earlier standalone questions ``history``."""
    msg = " ".join(message.split())
    if not history:
        return msg
    prev = re.sub(r"^Why\? ", "", history[-1])  # "why?" → the question it asked why about
    if _WHY.match(msg):
        return f"Why? {prev}"
    if _REPHRASE.match(msg):
        return prev
    lead = _CONJUNCTION_QUESTION.match(msg)
    if lead:  # "And what is its running time?": a question of its own after the conjunction, not a topic swap
        rest = msg[lead.end():]
        out = rewrite(rest, history)
        first = rest.split()[0]
        return out[:1].upper() + out[1:] if out.split()[0] == first else out  # the message's own opening word
    if _STARTS_SWAP.match(msg):
        x = _SWAP.match(_without_trailing_marks(_STARTS_SWAP.sub("", msg)))
        new_topic = _ARTICLE.sub("", x.group("x")) if x else ""  # "a linked list": the article is in prev
        swapped = _swap_quantity(prev, new_topic) or _swap_ordinal(prev, new_topic)
        if swapped:  # "and what about 99%?" after "… a 95% confidence interval?"
            return swapped
        if _ORDINAL_NOUN.fullmatch(_without_trailing_marks(new_topic.strip())):
            return f"{msg} {prev}"  # "the second step" of what was asked, not in its place
        old_topic = _narrowed(_topic(prev, like=new_topic), new_topic)
        of_it = _PREPOSITION_OF_IT.match(new_topic)
        held = list(re.finditer(rf"\b{_PREPOSITIONS}\b", prev, re.I)) if of_it else []
        if held:  # "What happens at a price below equilibrium?" + "and above it?": "… a price above equilibrium?"
            return prev[:held[-1].start()] + of_it.group("p").lower() + prev[held[-1].end():]
        if new_topic and _PRONOUN.search(new_topic) and _topic(prev):  # "and its space?": merge sort's space
            new_topic, old_topic = _with_antecedent(new_topic, _topic(prev)), _topic(prev)
        if new_topic and old_topic:
            lead = _PREPOSITION.match(new_topic)  # "without it" swaps "with memoization", preposition and all
            held = lead and re.search(rf"\b{_PREPOSITIONS}\s+{re.escape(old_topic)}", prev, re.I)
            if held:
                return prev[:held.start()] + new_topic + prev[held.end():]
            return prev.replace(old_topic, new_topic, 1)
        return f"{msg} {prev}"
    pronoun = _PRONOUN.search(msg)
    if pronoun and len(content_words(msg)) <= 2:
        topic = _topic(prev)
        return _with_antecedent(msg, topic) if topic else f"{msg} {prev}"
    if pronoun and _outside(msg[:pronoun.start()]):
        # no noun phrase before the pronoun, so its antecedent is outside the message (Hobbs 1978 looks
        # left of the pronoun in its own sentence first): "when does it actually work well?"
        topic = _topic(prev)
        if topic and not content_words(topic) <= content_words(msg):  # not restating the topic itself
            return _with_antecedent(msg, topic)
    return msg


def continues(message: str) -> bool:
    """True for a follow-up that asks for more of the same answer — "why?", "explain that more
    simply", "go on", a why-question about the answer's topic in no more than two words of its own
    ("why does it work?", "why is that faster?") — rather than a new topic: its answer should not
    repeat the previous one."""
    msg = " ".join(message.split())
    asks_why_of_it = (_WHY_OPENING.match(msg) and _PRONOUN.search(msg) and len(content_words(msg)) <= 2)
    return bool(_WHY.match(msg) or _REPHRASE.match(msg) or asks_why_of_it)  # "why does it work?" asks why, too


def rewrite_with_model(message: str, history: list[str], writers: list) -> str:
    """The standalone question from the first configured cloud writer that answers sensibly
    (one line, a question-sized text, as plain text: it is shown and stored); the rule-based
    :func:`rewrite` otherwise."""
    if history and writers:
        for writer in writers:
            try:
                text = plain_text(writer.complete(REWRITE_PROMPT, rewrite_prompt(message, history)))
            except WriterUnavailable:
                continue
            except Exception:  # a malformed reply from a provider: rules will do
                logging.getLogger(__name__).exception("follow-up rewrite with %s failed", writer.name)
                continue
            if 3 <= len(text) <= 300 and "NOT_COVERED" not in text:
                return text
    return rewrite(message, history)


def refers_to_moment(message: str, history: list[str]) -> bool:
    """True when ``message`` can only be about the moment the student is watching: its "this" or "that"
    has no word of its own (:func:`services.ask.moment.deictic`: "what does this mean?", "why is
    that?") and there is no earlier exchange it could refer to (with one, :func:`rewrite` gives it the
    previous question's topic), or the earlier exchange was itself about the moment and this one
    refers to it or asks for more of it ("why is that?", "why?", "explain that more simply" after
    "what does this mean?": a trial's follow-up was declined, the rewritten "Why? what does this mean?"
    naming no topic to search)."""
    if not history:
        return moment.deictic(message)
    last = re.sub(r"^Why\? ", "", history[-1])
    return (moment.deictic(last) or moment.screen_reference(last)) and (moment.deictic(message) or continues(message))


def resolve(store, writers: list, conversation_id: str, course_id: str, message: str
            ) -> tuple[str, set[tuple[str, float]] | None, bool]:
    """The follow-up step of the answer path: ``(standalone question, said, leans)`` for ``message`` in
    the conversation, from its history in ``store`` (an :class:`services.ask.ports.AnswerStore`);
    ``said`` holds the moments ``(lecture_id, t_s)`` its last answers cited when the message asks
    for more of the same ("why?", "explain that more simply"), else None; ``leans``: the message
    refers to the moment being watched (:func:`refers_to_moment`)."""
    history = store.history(conversation_id, course_id)
    question = rewrite_with_model(message, history, writers)
    if len(question) > MAX_QUESTION_CHARS:  # each rewrite holds the one before: it must not grow turn by turn
        question = " ".join(message.split())
    said = store.said(conversation_id, course_id) if history and continues(message) else None
    return question, said, refers_to_moment(message, history)
