"""The relevance gate: is the best evidence strong enough to answer from?

Walking-skeleton rule: the best passage's dense cosine (all-MiniLM-L6-v2) must reach
``min_cosine`` (setting ``LC_GATE_MIN_COSINE``). RRF scores are never used here: they rank,
they do not measure relevance.
"""

from __future__ import annotations

from .retrieve import Passage


def covered(passages: list[Passage], min_cosine: float) -> bool:
    """True when some retrieved passage is similar enough to the question to answer from it."""
    return bool(passages) and max(p.cosine for p in passages) >= min_cosine
