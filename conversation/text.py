"""Small pt-BR text helpers shared by the turn guards, the knowledge search, the offline model
and the local classifier (pure: stdlib only, no Django).

``fold`` is the one accent/case fold; ``normalize`` builds the keyword-matching form on it.
Two folds live elsewhere on purpose: ``conversation/runtime/textnorm.py`` (the runtime
imports nothing outside its package, and keeps punctuation) and
``cases/guardrail/normalize.py`` (length-preserving, so promise spans map back to the
original text).
"""

from __future__ import annotations

import re
import unicodedata

_PUNCT = re.compile(r"[^\w\s]")
_PUNCT_OR_UNDERSCORE = re.compile(r"[^\w\s]|_")


def fold(text: str) -> str:
    """Casefolded, with accents (combining marks after NFKD) removed."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normalize(text: str, *, underscore_is_space: bool = False) -> str:
    """``fold``, punctuation turned into spaces, spaces collapsed.

    ``underscore_is_space`` also separates words at "_" (a word character for ``\\w``); the
    offline model's rules want that (a WhatsApp ``_italic_`` word), the guards' exact
    keyword comparisons keep today's behaviour without it.
    """
    punctuation = _PUNCT_OR_UNDERSCORE if underscore_is_space else _PUNCT
    return " ".join(punctuation.sub(" ", fold(text)).split())


def contains_keyword(text: str, keywords: tuple[str, ...] | list[str]) -> str | None:
    """The first keyword found as whole words in ``text`` (accent/case-insensitive)."""
    haystack = f" {normalize(text)} "
    for keyword in keywords:
        needle = normalize(keyword)
        if needle and f" {needle} " in haystack:
            return keyword
    return None


def trim(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters (ellipsis included)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-") + "…"
