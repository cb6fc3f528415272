"""The relevance gate: is the best evidence strong enough to answer from?

Walking-skeleton rule: the best passage's dense cosine (all-MiniLM-L6-v2) must reach
``min_cosine`` (setting ``LC_GATE_MIN_COSINE``). RRF scores are never used here: they rank,
they do not measure relevance.
"""

from __future__ import annotations

from .retrieve import Passage


def evidence(passages: list[Passage]) -> float:
    """The gate's signal: the best dense cosine (segment or sub-chunk) among the passages."""
    return max((p.cosine for p in passages), default=0.0)


def covered(passages: list[Passage], min_cosine: float) -> bool:
    """True when some retrieved passage is similar enough to the question to answer from it."""
    return bool(passages) and evidence(passages) >= min_cosine
