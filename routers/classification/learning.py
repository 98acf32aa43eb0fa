"""What the router may learn from a turn, before an admin sees it: which LLM verdicts are
worth suggesting as phrases, and the message text with personal data taken out.

The router's own rule is that telemetry carries no customer text; a suggestion has to
carry a phrase (that is what the admin judges), so it carries it without the personal
data a customer typically types into WhatsApp: CPF/CNPJ, card numbers, phone numbers,
e-mail addresses, CEPs, links, long digit runs (order, protocol and account numbers).
Each is replaced by a bracketed tag, so the phrase still reads naturally ("meu cpf é
[cpf]") and the encoder still sees its shape.

Pure: no Django.
"""

from __future__ import annotations

import re

from .types import NONE_INTENT, CascadeResult

MAX_SUGGESTION_CHARS = 500

# Order matters: the specific shapes first, then the catch-all digit runs.
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.UNICODE), "[email]"),
    (re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE), "[link]"),
    (re.compile(r"\b\d{2}\.?\d{3}\.?\d{3}/?\d{4}-?\d{2}\b"), "[cnpj]"),
    (re.compile(r"\b\d{3}\.?\d{3}\.?\d{3}-?\d{2}\b"), "[cpf]"),
    (re.compile(r"\b(?:\d{4}[ .-]?){3}\d{4}\b"), "[cartao]"),
    (
        re.compile(r"(?:\+?55[\s.-]?)?\(?\b\d{2}\)?[\s.-]?9?\d{4}[\s.-]?\d{4}\b"),
        "[telefone]",
    ),
    (re.compile(r"\b\d{5}-\d{3}\b"), "[cep]"),
    (re.compile(r"\b\d{6,}\b"), "[numero]"),
)


def strip_pii(text: str) -> str:
    """``text`` with personal data replaced by tags, whitespace collapsed, trimmed."""
    out = text
    for pattern, tag in _RULES:
        out = pattern.sub(tag, out)
    return " ".join(out.split())[:MAX_SUGGESTION_CHARS]


def suggested_intent(verdict: CascadeResult, *, min_confidence: float) -> str | None:
    """The label a verdict suggests (an intent, or ``none``), or None when there is
    nothing to learn: the local stage decided itself, the LLM failed, or the LLM was not
    sure either (a suggestion the admin would mostly reject costs their attention)."""
    if verdict.stage != "llm" or verdict.status != "ok":
        return None
    if verdict.confidence < min_confidence:
        return None
    return verdict.intent or NONE_INTENT
