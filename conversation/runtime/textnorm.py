"""Small text helpers shared by the runtime modules (pure, stdlib only)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

_SPACES = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^a-z0-9]+")
# Punctuation customers put around a one-word answer on WhatsApp ("Sim!", "não.").
_EDGE_PUNCTUATION = " \t\r\n.,;:!?¡¿…\"'()"


def normalize_utterance(text: str) -> str:
    """Lowercase, collapse inner whitespace and drop punctuation around the message.

    Accents are kept: the canonical answer sets list both "nao" and "não".
    """
    return _SPACES.sub(" ", text.strip(_EDGE_PUNCTUATION).lower()).strip(_EDGE_PUNCTUATION)


@lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """Case- and accent-insensitive form used to compare item names."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACES.sub(" ", stripped).strip()


def slug(text: str) -> str:
    """``"Ressarcimento em dobro"`` -> ``"ressarcimento_em_dobro"`` (catalog trigger keys)."""
    return _NON_WORD.sub("_", fold(text)).strip("_")


def join_pt(names: Sequence[str]) -> str:
    """Natural pt-BR enumeration: ``A``, ``A e B``, ``A, B e C``."""
    if not names:
        return ""
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " e " + names[-1]


@lru_cache(maxsize=1024)
def last_digits(msisdn: str, count: int = 4) -> str:
    """The final digits of a line number, as customers identify their lines."""
    digits = "".join(ch for ch in msisdn if ch.isdigit())
    return digits[-count:] if digits else msisdn


_REPEATS = re.compile(r"([a-z])\1+")


@lru_cache(maxsize=4096)
def canonical(text: str) -> str:
    """The form short answers are compared in: folded, emoji and punctuation dropped,
    stretched letters collapsed ("Siiim!! 👍" -> "sim", "Não." -> "nao").

    Repeated letters collapse everywhere, so compare against ``canonical`` of the
    reference too ("isso" -> "iso").
    """
    words = _NON_WORD.sub(" ", fold(text)).split()
    return " ".join(_REPEATS.sub(r"\1", w) for w in words)


@lru_cache(maxsize=4096)
def words(text: str) -> tuple[str, ...]:
    """Folded words (letters and digits) of ``text``, punctuation and emoji dropped."""
    return tuple(_NON_WORD.sub(" ", fold(text)).split())
