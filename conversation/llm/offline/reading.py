"""How the offline model reads a request: the customer's text, note lines, search results,
and the pt-BR text rules (asking for a person, greetings, requests only a person can do)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from conversation import text as text_helpers

from ..base import ChatMessage, ModelRequest, ToolResultBlock, ToolUseBlock
from ..protocol import NOTE_MARKERS, RELAY_MARKER
from .replies import NO_RESULT_MARKERS

_HANDOFF_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"\batendentes?\b",
        r"\bhuman[oa]s?\b",
        r"\bfalar com (?:alguem|uma pessoa|pessoa|gente)\b",
        r"\bpessoa (?:de verdade|real)\b",
        r"\b(?:quero|queria|preciso|chama|chamar|cade) (?:uma |a |alguma )?pessoa\b",
    )
)

# Whole-message greetings: the text is a greeting when nothing is left after removing
# these (and punctuation/emoji). Longest alternatives first.
_GREETING_RE = re.compile(
    r"\b(?:bom dia|boa tarde|boa noite|boa madrugada|tudo bem|tudo bom|td bem|tudo certo|"
    r"como vai|como vao|e ai|eai|oi+e*|ola+|opa+|ei+|hey|hello|hi|salve|fala|"
    r"blz|beleza|pessoal|gente|galera|amigo|amiga|querid[oa])\b"
)
# Requests only a person can carry out (accent-free, lower case): (case title, what the
# customer asked for, pattern).
_HUMAN_ONLY_REQUESTS = tuple(
    (title, what, re.compile(pattern))
    for title, what, pattern in (
        ("Pedido de reembolso", "reembolso", r"\breembols"),
        ("Pedido de estorno", "estorno", r"\bestorn"),
        (
            "Cancelamento de pedido",
            "cancelamento",
            r"\bcancel\w*\s+(?:(?:o|a|os|as|do|da|meu|minha|esse|essa|este|esta|um|uma)\s+)*"
            r"(?:pedido|compra|assinatura|plano|encomenda)",
        ),
        ("Devolução do dinheiro", "devolução do dinheiro", r"\bdinheiro de volta\b"),
        (
            "Liberar acesso",
            "liberação do acesso",
            r"\b(?:liberar|libera|libere|desbloquear|desbloqueia|desbloqueie)\b.*\bacesso\b"
            r"|\bacesso\b.*\bbloquead",
        ),
    )
)
_REQUEST_VERB_RE = re.compile(
    r"\b(?:quero|queria|preciso|precisava|gostaria|solicito|solicitar|pedir|peco|faz|fazer|"
    r"faca|cancela|cancele|cancelar|estorna|estorne|"
    r"estornar|devolve|devolva|devolver|libera|libere|liberar|desbloqueia|desbloqueie|"
    r"desbloquear|meu acesso|minha conta)\b"
)
_CASE_ID_RE = re.compile(r"case_id=([0-9a-fA-F]{8}-[0-9a-fA-F-]{27})")
_NAME_RE = re.compile(r"^\s*(?:voce e|nome\s*:)\s*(.+)$", re.IGNORECASE)
_NAME_END_RE = re.compile(r"[,.;:()\[\]]|\s[-–—]\s?")
_LIST_MARKER_RE = re.compile(r"^\s*(?:\[\d+\]|\d+[.)]|[-*•])\s*")


# --- the request -----------------------------------------------------------------------


def tool_results(message: ChatMessage) -> list[ToolResultBlock]:
    if isinstance(message.content, str):
        return []
    return [b for b in message.content if isinstance(b, ToolResultBlock)]


def tool_use_names(messages: Sequence[ChatMessage]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant" and not isinstance(message.content, str):
            for b in message.content:
                if isinstance(b, ToolUseBlock):
                    names[b.id] = b.name
    return names


def latest_user_text(messages: Sequence[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            text = message.text()
            if text.strip():
                return text
    return ""


def relay_text(request: ModelRequest) -> str:
    sources = [*request.system]
    last = request.messages[-1] if request.messages else None
    if last is not None and last.role == "user":
        sources.append(last.text())
    lines = [
        line.strip()[len(RELAY_MARKER) :].strip()
        for source in sources
        for line in source.splitlines()
        if line.strip().startswith(RELAY_MARKER)
    ]
    return "\n".join(line for line in lines if line)


def strip_note_lines(text: str) -> str:
    """The customer's text: note lines (``NOTE_MARKERS``, relay included) removed."""
    return "\n".join(
        line for line in text.splitlines() if not line.strip().startswith(NOTE_MARKERS)
    )


def note_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith(NOTE_MARKERS)]


def case_ids(notes: Sequence[str], marker: str) -> list[str]:
    ids = []
    for line in notes:
        if line.startswith(marker):
            match = _CASE_ID_RE.search(line)
            if match:
                ids.append(match.group(1))
    return ids


def first_passage(text: str) -> str:
    """The first non-empty passage of a search result (see the package docstring)."""
    for chunk in re.split(r"\n\s*\n", text):
        passage = " ".join(
            _LIST_MARKER_RE.sub("", line, count=1).strip() for line in chunk.splitlines()
        ).strip()
        if passage:
            return passage
    return ""


def says_nothing_found(text: str) -> bool:
    normalized = normalize(text)
    return any(marker in normalized for marker in NO_RESULT_MARKERS)


def agent_name(system: Sequence[str]) -> str:
    """The agent's name from the first system block (see the package docstring), or ""."""
    if not system or not system[0].strip():
        return ""
    first_line = system[0].strip().splitlines()[0]
    match = _NAME_RE.match(_fold_accents(first_line))
    if not match:
        return ""
    # Slice the original line (same length after folding) to keep the name's accents.
    rest = first_line[match.start(1) :]
    name = _NAME_END_RE.split(rest, maxsplit=1)[0].strip()
    return name[:60].strip()


def _fold_accents(text: str) -> str:
    """Accents removed without changing the string's length (for index-safe matching)."""
    return "".join(unicodedata.normalize("NFKD", c)[:1] or c for c in text)


# --- text rules (on ``normalize``d text) -----------------------------------------------


def normalize(text: str) -> str:
    """The shared ``conversation.text.normalize`` with "_" as a separator too, so a
    WhatsApp ``_italic_`` word still matches the rules."""
    return text_helpers.normalize(text, underscore_is_space=True)


def asks_for_person(normalized: str) -> bool:
    return any(p.search(normalized) for p in _HANDOFF_PATTERNS)


def is_greeting_only(normalized: str) -> bool:
    if not normalized:
        return False
    return not _GREETING_RE.sub(" ", normalized).strip()


def human_only_request(normalized: str) -> tuple[str, str] | None:
    """(case title, what was asked) for a request only a person can carry out (rule 5)."""
    if not _REQUEST_VERB_RE.search(normalized):
        return None
    for title, what, pattern in _HUMAN_ONLY_REQUESTS:
        if pattern.search(normalized):
            return title, what
    return None
