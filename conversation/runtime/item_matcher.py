"""Spelling-tolerant item matching, used by the resolver only when substring matching misses.

``ItemMatcherLLM`` is the seam: a concrete LLM matcher (purpose
``conversation_item_matcher``) lives outside the runtime. ``FuzzyItemMatcher`` is a
deterministic offline implementation ("aia" -> "Aya Ensina") for workspaces without a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Any, Protocol

from .textnorm import fold


class ItemMatcherError(Exception):
    """The matcher failed; the resolver treats the mention as not found."""


class ItemMatcherLLM(Protocol):
    def match(
        self,
        mention: str,
        candidates: Sequence[str],
        *,
        callbacks: Sequence[Any] | None = None,
    ) -> list[str]:
        """Return the candidates (verbatim) the mention refers to; empty when none.

        Raise ``ItemMatcherError`` on failure.
        """
        ...


class FuzzyItemMatcher:
    """Token-level similarity: a candidate matches when one of its words is close to the mention."""

    def __init__(self, threshold: float = 0.6) -> None:
        if not 0 < threshold <= 1:
            raise ValueError("threshold must be in (0, 1]")
        self._threshold = threshold

    def match(
        self,
        mention: str,
        candidates: Sequence[str],
        *,
        callbacks: Sequence[Any] | None = None,
    ) -> list[str]:
        wanted = fold(mention)
        if len(wanted) < 3:
            return []  # too short to tell apart from noise
        matches = []
        for candidate in candidates:
            words = fold(candidate).split()
            windows = [*words, fold(candidate)]
            score = max(SequenceMatcher(None, wanted, w).ratio() for w in windows)
            if score >= self._threshold:
                matches.append(candidate)
        return matches
