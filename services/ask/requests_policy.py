"""Messages the product can't act on from lectures (grading, remembering, scheduling...):
they get a short, honest reply saying what it can do instead, never a made-up answer."""

from __future__ import annotations

import re

from .examprep import quiz_intent  # "quiz me on hashing" is served by exam prep, never refused

_UNSUPPORTED = re.compile(
    r"\b(?:grade|mark|score|check|correct)\s+(?:my|this|our)\s+(?:answer|solution|homework|assignment|essay|code|exam|work|proof)\b"
    r"|\bremember (?:that|my|this|me)\b|\bremind me\b|\bmy (?:exam|test|midterm|final) (?:date|is on)\b"
    r"|\b(?:set|add) (?:a |an )?(?:reminder|alarm|calendar)\b|\b(?:do|write|solve) my (?:homework|essay|assignment|problem set)\b"
    r"|\bsend (?:an? )?email\b|\bbook (?:a|an) (?:meeting|appointment|room)\b",
    re.I)

UNSUPPORTED_REPLY = ("I can't do that here. I answer questions about this course's lectures, and every sentence "
                     "links to the moment in the video it comes from; ask me about a topic from the lectures.")


def unsupported(message: str) -> bool:
    """True for requests the lectures can't serve (see module docstring)."""
    if quiz_intent(message) is not None:
        return False
    return bool(_UNSUPPORTED.search(message))
