"""Exam prep in the answer path: :func:`quiz_intent` ("quiz me on hashing" → "hashing"),
:func:`looks_like_graded_item` (a pasted multiple-choice / true-false item) and
:func:`strip_answer_reveals` (assessment mode: an answer never names an option of such an item)."""

from __future__ import annotations

import re
from typing import Sequence

from .terms import contains, norm

_TOPIC = r"(?:\s+(?:on|about|in|over|for|covering|from|with|of)\s+(?P<t>.+))?"
_NAMED_EXAM = re.compile(r"\bthe(?:\s+[\w-]+){0,2}\s*$", re.I)  # "the (final) exam questions": a given exam's, not practice
_QUIZ = [re.compile(p, re.I) for p in (
    r"\b(?:quiz|test|drill|examine)\s+(?:me|us)\b" + _TOPIC,
    r"\b(?:give|make|write|generate|create|send|prepare)\s+(?:me\s+|us\s+)?(?:some\s+|a few\s+|a couple of\s+|\d+\s+|"
    r"more\s+|an?\s+)?(?:(?:practice|practise|exam|review|test|multiple[- ]choice|mcq|sample|quiz)\s+)?"
    r"(?:questions?|problems?|quiz(?:zes)?|exercises?|mcqs?)\b" + _TOPIC,
    r"\b(?:practice|practise|exam|review|multiple[- ]choice|mcq)\s+(?:questions?|problems?|quiz(?:zes)?)\b" + _TOPIC,
    r"\b(?:i want|i'd like|i would like|let me|can i|help me)\s+(?:to\s+)?practi[cs]e\b(?:\s+(?:on\s+|about\s+|with\s+)?(?P<t>.+))?",
)]


def quiz_intent(message: str) -> str | None:
    """The topic of a request for practice questions, or None when the message is not one.

    "Quiz me on hashing" → "hashing"; "give me practice questions about merge sort" → "merge sort";
    "test me" → "" (no topic: the whole course). Rule-based, no model."""
    text = " ".join(message.split())
    m = next((m for m in (p.search(text) for p in _QUIZ) if m), None)
    if not m or (m.re is _QUIZ[2] and m.group(0).lower().startswith("exam") and _NAMED_EXAM.search(text[:m.start()])):
        return None  # "what is the final exam question?", "the exam questions of …": an exam's, not practice
    topic = m.group("t") or ""
    topic = re.sub(r"[?.!]+$", "", topic).strip()
    topic = re.sub(r"^(?:the|a|an)\s+", "", topic, flags=re.I)
    topic = re.sub(r"\s+(?:please|pls|thanks|thank you)$", "", topic, flags=re.I).strip()
    return topic


# -- assessment mode ------------------------------------------------------------------------
_LETTERED = re.compile(r"(?:^|\n|\s)\(?([A-Da-d])[).:]\s+(\S[^\n]*?)(?=(?:\s+\(?[A-Da-d][).:]\s)|\n|$)")
_NUMBERED = re.compile(r"(?:^|\n|\s)\(?([1-6])[).:]\s+(\S[^\n]*?)(?=(?:\s+\(?[1-6][).:]\s)|\n|$)")
_OPTIONS_LIST = re.compile(r"\b(?:options|choices)\s*:\s*([^\n]+)", re.I)  # "Options: a / b / c / d"
_TF = re.compile(r"\btrue\s*(?:or|/)\s*false\b|\b(?:true|false)\s*\?\s*$|^\s*(?:true|false)\s*[:.-]", re.I | re.M)


def graded_options(message: str) -> list[tuple[str, str]]:
    """(label, option text) of a pasted item's options: lettered ("A) ...", "(b) ...", "c. ..."),
    numbered ("1) ...", "2. ...": a run 1, 2, 3, up to 6) or listed after "Options:" / "Choices:"
    and split at "/", ";" or "|" (labels "" then); True/False items give [("", "True"), ("", "False")];
    [] when there are none."""
    for pattern, labels in ((_LETTERED, ["A", "B", "C", "D"]), (_NUMBERED, ["1", "2", "3", "4", "5", "6"])):
        found = [(m.group(1).upper(), m.group(2).strip()) for m in pattern.finditer(message)]
        seen = [l for l, _ in found]
        for start in range(len(found)):  # a run A, B, C(, D) or 1, 2, 3(, …) in order
            run = seen[start:start + len(labels)]
            k = next((i for i in range(len(run)) if run[i] != labels[i]), len(run))
            if k >= 3:
                return found[start:start + k]
    listed = _OPTIONS_LIST.search(message)
    if listed:
        parts = [p.strip(" .?") for p in re.split(r"\s[/;|]\s|\s*[;|]\s*", listed.group(1))]
        if len([p for p in parts if p]) >= 3:
            return [("", p) for p in parts if p]
    if _TF.search(message):
        return [("", "True"), ("", "False")]
    return []


def looks_like_graded_item(message: str) -> bool:
    """True for a pasted multiple-choice item (3–4 options lettered A–D, "a)", "(b)", "C."; 3–6
    numbered ones, "1)", "2."; or 3+ listed after "Options:") or a true/false item ("True or False: ...", "T/F", "... true or false?")."""
    return bool(graded_options(message)) or bool(re.search(r"\bT\s*/\s*F\b", message))


def reveals(sentence: str, options: Sequence[tuple[str, str]]) -> bool:
    """True when ``sentence`` names an option's letter label ("option B", "(c)", "answer is D",
    "B)" or a bare capital B–D) or contains an option's text."""
    for letter, text in options:
        if letter:
            l = re.escape(letter)
            if re.search(rf"\(\s*{l}\s*\)|\b{l}\)|\b(?:option|choice|answer|letter)\s*(?:is\s*)?\(?{l}\b", sentence, re.I):
                return True
            if letter != "A" and not letter.isdigit() and re.search(rf"\b{l}\b", sentence):  # a bare "2" is a number
                return True
            if letter == "A" and re.search(r"\bA\b(?!\s+[a-z])", sentence):  # "A." or "is A", not "A hash"
                return True
        t = text.strip().rstrip(".")
        if t and (contains(sentence, t) if len(norm(t)) >= 2 else False):
            return True
    return False


ASSESSMENT_REPLY = ("This looks like a graded question, and this course is in assessment mode: I can explain the "
                    "concept behind it from the lectures, but not pick an option. Ask me about the concept itself.")


def strip_answer_reveals(sentences: Sequence[str], message: str) -> list[str]:
    """Assessment mode: the answer's sentences minus any that name an option of the pasted item
    by letter or text, so the explanation teaches the concept without giving the item away."""
    opts = graded_options(message)
    if not opts and re.search(r"\bT\s*/\s*F\b", message):
        opts = [("", "True"), ("", "False")]
    return [s for s in sentences if not reveals(s, opts)]
