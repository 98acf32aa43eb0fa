"""How the offline model reads a request: the customer's text, note lines, search results,
and the pt-BR text rules (asking for a person, greetings, requests only a person can do)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

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
# A hit's title line in a search result: "[Título]" alone on its line (not "[1]").
_TITLE_LINE_RE = re.compile(r"^\s*\[(?!\d+\])([^\[\]]+)\]\s*$")
# Words that say nothing about what the customer wants (accent-free, lower case).
_QUERY_STOPWORD_TEXT = (
    "as os de da do das dos em no na nos nas um uma uns umas para pra pro por com que qual "
    "quais quando como onde quem eu voce voces vcs meu minha meus minhas seu sua seus suas "
    "se me te ao aos isso isto aquilo esse essa este esta aqui ali la ai ola oi bom boa dia "
    "tarde noite tudo bem certo sim nao ser ter tem tinha sao esta estou estao vai vou fazer "
    "faco pode podem poderia consigo queria quero gostaria preciso saber sobre mais muito "
    "coisa coisas negocio alguma algum entao favor obrigado obrigada ontem hoje agora ainda "
    "tambem mesmo outra outro"
)
_QUERY_STOPWORDS = frozenset(_QUERY_STOPWORD_TEXT.split())


# --- the request -----------------------------------------------------------------------


def tool_results(message: ChatMessage) -> list[ToolResultBlock]:
    if isinstance(message.content, str):
        return []
    return [b for b in message.content if isinstance(b, ToolResultBlock)]


def tool_uses(messages: Sequence[ChatMessage]) -> dict[str, ToolUseBlock]:
    """The assistant's tool calls in ``messages``, by tool-use id."""
    uses: dict[str, ToolUseBlock] = {}
    for message in messages:
        if message.role == "assistant" and not isinstance(message.content, str):
            for b in message.content:
                if isinstance(b, ToolUseBlock):
                    uses[b.id] = b
    return uses


def tool_use_names(messages: Sequence[ChatMessage]) -> dict[str, str]:
    return {use_id: b.name for use_id, b in tool_uses(messages).items()}


def tool_use_inputs(messages: Sequence[ChatMessage]) -> dict[str, Mapping[str, Any]]:
    return {use_id: b.input for use_id, b in tool_uses(messages).items()}


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


def search_passages(text: str) -> list[tuple[str, str]]:
    """``(title, passage)`` of each hit of a search result, in order. A line that is only
    ``[Título]`` starts a hit (``knowledge.format_hits``): its title is kept apart, never
    said to the customer, and the hit's passage may span blank lines. Without title lines,
    passages are separated by blank lines (see the package docstring)."""
    hits: list[tuple[str, list[str]]] = []
    titled = any(_TITLE_LINE_RE.match(line) for line in text.splitlines())
    if titled:
        for line in text.splitlines():
            match = _TITLE_LINE_RE.match(line)
            if match:
                hits.append((match.group(1).strip(), []))
            elif hits:
                hits[-1][1].append(line)
            else:
                hits.append(("", [line]))
    else:
        hits = [("", chunk.splitlines()) for chunk in re.split(r"\n\s*\n", text)]
    found = []
    for title, lines in hits:
        passage = " ".join(
            _LIST_MARKER_RE.sub("", line, count=1).strip() for line in lines if line.strip()
        ).strip()
        if passage:
            found.append((title, passage))
    return found


def first_passage(text: str) -> str:
    """The first non-empty passage of a search result, without its title."""
    passages = search_passages(text)
    return passages[0][1] if passages else ""


def _content_words(text: str) -> set[str]:
    return {w for w in normalize(text).split() if len(w) > 2 and w not in _QUERY_STOPWORDS}


def relevance(query: str, title: str, passage: str) -> float:
    """The share of the question's content words (stopwords and fillers out) that the hit
    mentions, by word or by a shared 4-letter stem ("pagar" ~ "pagamento"). 0 when the
    question has no content word at all ("e aí, e aquilo?"): nothing to match it on."""
    wanted = _content_words(query)
    if not wanted:
        return 0.0
    words = _content_words(f"{title} {passage}")
    stems = {w[:4] for w in words}
    matched = sum(1 for w in wanted if w in words or w[:4] in stems)
    return matched / len(wanted)


def best_passage(query: str, text: str, *, threshold: float) -> str:
    """The passage of the search result most relevant to ``query`` (the first among
    equals), or "" when none reaches ``threshold`` — an unrelated passage is worse than
    saying nothing was found."""
    best, best_score = "", 0.0
    for title, passage in search_passages(text):
        score = relevance(query, title, passage)
        if score > best_score:
            best, best_score = passage, score
    return best if best_score >= threshold else ""


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
