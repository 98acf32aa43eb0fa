"""Small pt-BR text helpers shared by the turn guards."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w\s]")


def normalize(text: str) -> str:
    """Casefold, strip accents and punctuation, collapse spaces."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACES.sub(" ", _PUNCT.sub(" ", stripped)).strip()


def contains_keyword(text: str, keywords: tuple[str, ...] | list[str]) -> str | None:
    """The first keyword found as whole words in ``text`` (accent/case-insensitive)."""
    haystack = f" {normalize(text)} "
    for keyword in keywords:
        needle = normalize(keyword)
        if needle and f" {needle} " in haystack:
            return keyword
    return None
