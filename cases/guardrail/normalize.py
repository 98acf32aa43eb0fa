"""Length-preserving text folding for the promise detector.

The detector matches on a folded copy of the message (lower case, accents stripped) but must
report spans in the original text. Folding therefore maps every code point to exactly one
code point, so an index in the folded string is the same index in the original.
"""

from __future__ import annotations

import re
import unicodedata


def _build_fold_table() -> dict[int, str]:
    table: dict[int, str] = {}
    # Latin-1, Latin Extended-A/B and general punctuation cover what pt-BR text (and the
    # usual copy-paste noise from phones) contains; everything else passes through unchanged.
    for code_point in [*range(0x00, 0x250), *range(0x2000, 0x2070)]:
        char = chr(code_point)
        lowered = char.lower()
        if len(lowered) != 1:
            continue
        decomposed = unicodedata.normalize("NFKD", lowered)
        base = "".join(c for c in decomposed if not unicodedata.combining(c))
        if len(base) != 1:
            # "ß" -> "ss", "…" -> "...": would shift spans, keep the lowered char instead.
            base = lowered
        if base != char:
            table[code_point] = base
    # Typographic apostrophes and hyphens as their ASCII forms ("deixe‑me", "d’água").
    for code_point in (0x2018, 0x2019, 0x201B, 0x2032):
        table[code_point] = "'"
    for code_point in (0x2010, 0x2011, 0x2012, 0x2013):
        table[code_point] = "-"
    return table


_FOLD_TABLE = _build_fold_table()
_FOLD_CHARS = {chr(code_point): base for code_point, base in _FOLD_TABLE.items()}
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _fold_char(match: re.Match[str]) -> str:
    char = match.group()
    return _FOLD_CHARS.get(char, char)


def fold(text: str) -> str:
    """Lower-case and strip accents, keeping ``len(fold(text)) == len(text)``."""
    # str.lower() plus a substitution on the few non-ASCII characters is several times faster
    # than str.translate() with a dict, which looks up every character.
    lowered = text.lower()
    if len(lowered) != len(text):
        # A character whose lower case is longer ("İ"): fall back to the per-char table.
        return text.translate(_FOLD_TABLE)
    if lowered.isascii():
        return lowered
    return _NON_ASCII.sub(_fold_char, lowered)
