"""A labelled phrase: what teaches the local stage (no numpy, so the lexical path can
use it without the semantic stage installed)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Phrase:
    """A message with the intent a person gave it (``none``: it fits no intent).

    Labelled phrases of the quality loop and LLM verdicts an admin accepted are both
    phrases; nothing else is (DESIGN.md §10.5: nothing is learned without an admin).
    """

    text: str
    intent: str


def phrases_from_pairs(pairs: Iterable[tuple[str, str]]) -> tuple[Phrase, ...]:
    """(text, intent) pairs -> phrases; blank texts are dropped, the last label of a
    repeated text wins (an admin's correction replaces the earlier label)."""
    latest: dict[str, str] = {}
    for text, intent in pairs:
        clean = text.strip()
        if clean:
            latest.pop(clean, None)
            latest[clean] = intent
    return tuple(Phrase(text=t, intent=i) for t, i in latest.items())
