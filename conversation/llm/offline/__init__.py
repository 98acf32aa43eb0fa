"""The embedded model used when no API key is configured: deterministic and instant.

``OfflineModel`` answers every ``ModelRequest`` from rules, never from the network. The
same request always yields the same response (tool-use ids included).

Orchestrator policy (``purpose == "orchestrator"``), over the tools the request offers:

1. The last message carries ``tool_result`` blocks:
   * a result of ``search_knowledge`` -> ``send_message`` with the first passage
     ("Encontrei isto: ...", at most ~400 characters), or a polite "não encontrei" when the
     result is empty, an error, or says nothing was found (``NO_RESULT_MARKERS``);
   * any other result (``send_message``, ``request_human_handoff``, an error, ...) -> stop
     (``stop_reason="end_turn"``, no tool call).
2. A case-relay directive: a line ``[RELAY] <text>`` (``RELAY_MARKER``) in any system block
   or in the latest user message -> ``send_message`` with that text (several lines are
   joined). It wins over the rules below because a relay turn is triggered by a
   back-office human's answer, not by a new customer message, and the relayed text may
   itself mention "atendente".
3. The latest user text (all lines of a burst; relay lines excluded) asks for a person
   ("atendente", "humano", "falar com alguém", "falar com uma pessoa", "pessoa de
   verdade"; accent and case-insensitive) -> ``request_human_handoff`` with
   ``motivo_codigo="requested_human"`` (the code of ``specs/human-cases.md`` §7 for a
   customer asking for an attendant). A bare "pessoa" ("preço por pessoa") is not a
   request for a person.
4. A greeting only ("oi", "olá", "bom dia", "e aí", ...) -> ``send_message`` with
   "Olá! Sou <agent name>. Como posso ajudar?".
5. Human cases (``specs/human-cases.md``), driven by internal note lines in the latest user
   message (see "Case notes" below):
   * a case waits for the customer (``[CASO_AGUARDANDO_CLIENTE] case_id=<uuid> ...``) and
     ``provide_case_update`` is offered -> ``provide_case_update`` with that case id and the
     customer's text as ``info`` (the customer is answering what the team asked), followed in
     the same response by ``send_message`` with ``CASE_UPDATE_REPLY`` when offered;
   * the customer asks for something only a person can do — a request verb ("quero",
     "preciso", "pode", "cancela", ...) with a refund, chargeback, order cancellation or access
     unlock ("reembolso", "estorno", "cancelar o pedido", "liberar o acesso", ...) — and
     ``open_human_case`` is offered -> ``open_human_case`` with a title for the request, the
     customer's words as the summary and a fixed blocker, followed in the same response by
     ``send_message`` with ``CASE_OPENED_REPLY`` (tools run in order, so the case exists
     before the promise is sent; the tool results then end the turn by rule 1); when a case
     is already open (``[CASO_ABERTO] ...``) -> ``send_message`` saying the team is on it
     (``CASE_ALREADY_OPEN_REPLY``) instead of a second case. A bare question ("qual o prazo
     do reembolso?") is not such a request.
6. Otherwise ``search_knowledge`` with the user's text as the query when offered, else a
   generic helpful ``send_message``.

Case notes: lines starting with ``[INTERNO]``, ``[CASO_ABERTO]`` or
``[CASO_AGUARDANDO_CLIENTE]`` (like ``[RELAY]`` lines) are the system's, never the customer's:
they are removed from the customer's text before rules 3-6 look at it.

Whenever the tool a rule wants is not offered, the answer is plain text with
``stop_reason="end_turn"``: the offline model never calls a tool the request did not offer.

Agent name convention: the first line of the first system block, in the form
``Você é <Nome>[, ...]`` (the name ends at the first comma, period, semicolon, colon, dash
or parenthesis; "Você é a Ana, assistente da Loja" -> "a Ana") or ``Nome: <Nome>``. Without
one, the greeting is "Olá! Como posso ajudar?".

Search result convention (what ``search_knowledge`` returns as tool_result text):
passages separated by blank lines, each optionally starting with a list marker ("1.",
"[1]", "-", "•") that is dropped. An empty result or one containing a ``NO_RESULT_MARKERS``
phrase means nothing was found.

Other purposes (classifiers) with a forced tool choice get a ``tool_use`` of the forced tool
(or the first tool for ``any``) with the minimal input valid for its JSON schema
(``schema_defaults.minimal_input``): the ``"none"`` enum value where present (else the
first), 0 for numbers (confidence 0), empty strings and lists, required properties only.
Real offline classification is done before the model is called, by
``conversation/llm/local_classifier.py``; this is only a safe, schema-valid "no opinion".
Without a forced tool, other purposes get an empty answer.

Every call reports one ``CallRecord`` with model ``"offline"`` and zero tokens.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from .base import (
    CallRecord,
    CallRecorder,
    ChatMessage,
    ModelRequest,
    ModelResponse,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
    null_recorder,
)
from .schema_defaults import minimal_input

logger = logging.getLogger(__name__)

OFFLINE_MODEL = "offline"
ORCHESTRATOR_PURPOSE = "orchestrator"

# A line "[RELAY] <text>" asks the offline model to send <text> to the customer verbatim.
RELAY_MARKER = "[RELAY]"
# Internal note lines of human cases (written by ``cases``; read here and by real models).
INTERNAL_MARKER = "[INTERNO]"
CASE_OPEN_MARKER = "[CASO_ABERTO]"
CASE_AWAITING_LEAD_MARKER = "[CASO_AGUARDANDO_CLIENTE]"
NOTE_MARKERS = (RELAY_MARKER, INTERNAL_MARKER, CASE_OPEN_MARKER, CASE_AWAITING_LEAD_MARKER)

SEND_MESSAGE = "send_message"
REQUEST_HUMAN_HANDOFF = "request_human_handoff"
SEARCH_KNOWLEDGE = "search_knowledge"
OPEN_HUMAN_CASE = "open_human_case"
PROVIDE_CASE_UPDATE = "provide_case_update"

# specs/human-cases.md §7: the reason code of a customer asking for an attendant.
HANDOFF_REASON_CODE = "requested_human"
HANDOFF_REASON_TEXT = "O cliente pediu para falar com um atendente humano."

# Phrases (accent-free, lower case) that mean a knowledge search found nothing.
NO_RESULT_MARKERS: tuple[str, ...] = (
    "nenhum resultado",
    "nenhuma informacao",
    "nenhum documento",
    "nada encontrado",
    "nao encontrei",
    "nao foi encontrad",
    "sem resultados",
    "no results",
    "not found",
)

MAX_ANSWER_CHARS = 400

GREETING_TEMPLATE = "Olá! Sou {name}. Como posso ajudar?"
GREETING_NO_NAME = "Olá! Como posso ajudar?"
FOUND_TEMPLATE = "Encontrei isto: {passage}"
NOT_FOUND_REPLY = (
    "Desculpe, não encontrei essa informação. Pode me contar com outras palavras "
    "o que você precisa?"
)
CASE_OPENED_REPLY = (
    "Entendi! Registrei o seu pedido de {what} para a nossa equipe. Assim que eles me "
    "responderem, eu te aviso por aqui."
)
CASE_ALREADY_OPEN_REPLY = (
    "Seu pedido já está com a nossa equipe. Assim que eles me responderem, eu te aviso por aqui."
)
CASE_UPDATE_REPLY = (
    "Obrigado! Já passei essa informação para a nossa equipe. Assim que eles me responderem, "
    "eu te aviso por aqui."
)
CASE_BLOCKER = "Exige uma ação da equipe num sistema interno; o assistente não faz isso sozinho."
GENERIC_REPLY = (
    "Obrigado pela mensagem! Pode me contar um pouco mais sobre o que você precisa "
    "para eu poder ajudar?"
)

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


class OfflineModel:
    """``ModelClient`` that answers from deterministic rules (see the module docstring)."""

    name = "offline"

    def __init__(self, recorder: CallRecorder = null_recorder) -> None:
        self._recorder = recorder

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.monotonic()
        if request.purpose == ORCHESTRATOR_PURPOSE:
            response = _orchestrate(request)
        else:
            response = _forced_tool_answer(request)
        record = CallRecord(
            purpose=request.purpose,
            model=OFFLINE_MODEL,
            usage=Usage(),
            latency_ms=int((time.monotonic() - started) * 1000),
            context=dict(request.context),
            provider=self.name,
        )
        try:
            self._recorder(record)
        except Exception:
            logger.exception("llm call recorder failed")
        return response


# --- orchestrator ----------------------------------------------------------------------


def _orchestrate(request: ModelRequest) -> ModelResponse:
    tools = {t.name: t for t in request.tools}
    reply = _Reply(request, tools)
    messages = request.messages

    last = messages[-1] if messages else None
    results = _tool_results(last) if last is not None and last.role == "user" else []
    if results:
        names = _tool_use_names(messages)
        search = [r for r in results if names.get(r.tool_use_id) == SEARCH_KNOWLEDGE]
        if not search:
            return reply.stop()
        return reply.send(_answer_from_search(search[0]))

    relay = _relay_text(request)
    if relay:
        return reply.send(relay)

    text = _strip_relay_lines(_latest_user_text(messages))
    normalized = normalize(text)
    if REQUEST_HUMAN_HANDOFF in tools and _asks_for_person(normalized):
        return reply.call(
            REQUEST_HUMAN_HANDOFF,
            _handoff_input(tools[REQUEST_HUMAN_HANDOFF]),
        )
    if _is_greeting_only(normalized):
        name = agent_name(request.system)
        greeting = GREETING_TEMPLATE.format(name=name) if name else GREETING_NO_NAME
        return reply.send(greeting)
    notes = _note_lines(_latest_user_text(messages))
    awaiting = _case_ids(notes, CASE_AWAITING_LEAD_MARKER)
    if awaiting and PROVIDE_CASE_UPDATE in tools and normalized:
        spec = tools[PROVIDE_CASE_UPDATE]
        return reply.calls(
            (PROVIDE_CASE_UPDATE, _fill(spec, {"case_id": awaiting[0], "info": text.strip()})),
            *reply.send_inputs(CASE_UPDATE_REPLY),
        )
    asked = human_only_request(normalized)
    if asked is not None and OPEN_HUMAN_CASE in tools:
        request_title, what = asked
        if _case_ids(notes, CASE_OPEN_MARKER):
            return reply.send(CASE_ALREADY_OPEN_REPLY)
        summary = f"O cliente pediu: “{trim(text, 300)}”"
        case_input = _fill(
            tools[OPEN_HUMAN_CASE],
            {
                "title": request_title,
                "titulo": request_title,
                "summary": summary,
                "resumo": summary,
                "blocker": CASE_BLOCKER,
                "bloqueio": CASE_BLOCKER,
            },
        )
        return reply.calls(
            (OPEN_HUMAN_CASE, case_input),
            *reply.send_inputs(CASE_OPENED_REPLY.format(what=what)),
        )
    if SEARCH_KNOWLEDGE in tools and normalized:
        spec = tools[SEARCH_KNOWLEDGE]
        return reply.call(SEARCH_KNOWLEDGE, _with_text(spec, text.strip(), ("query",)))
    return reply.send(GENERIC_REPLY)


class _Reply:
    """Builds responses for one request, with deterministic, conversation-unique ids."""

    def __init__(self, request: ModelRequest, tools: Mapping[str, ToolSpec]) -> None:
        self._request = request
        self._tools = tools

    def stop(self) -> ModelResponse:
        return ModelResponse(content=(), stop_reason="end_turn", model=OFFLINE_MODEL)

    def send(self, text: str) -> ModelResponse:
        spec = self._tools.get(SEND_MESSAGE)
        if spec is None:
            return ModelResponse(
                content=(TextBlock(text=text),), stop_reason="end_turn", model=OFFLINE_MODEL
            )
        return self.call(SEND_MESSAGE, _with_text(spec, text, ("text", "mensagem", "message")))

    def call(self, name: str, tool_input: Mapping[str, Any]) -> ModelResponse:
        return self.calls((name, tool_input))

    def calls(self, *uses: tuple[str, Mapping[str, Any]]) -> ModelResponse:
        """Several tool calls in one response, run by the loop in this order."""
        blocks = tuple(
            ToolUseBlock(id=tool_use_id(self._request, i), name=name, input=tool_input)
            for i, (name, tool_input) in enumerate(uses)
        )
        return ModelResponse(content=blocks, stop_reason="tool_use", model=OFFLINE_MODEL)

    def send_inputs(self, text: str) -> tuple[tuple[str, Mapping[str, Any]], ...]:
        """A ``send_message`` call with ``text``, or nothing when it is not offered."""
        spec = self._tools.get(SEND_MESSAGE)
        if spec is None:
            return ()
        return ((SEND_MESSAGE, _with_text(spec, text, ("text", "mensagem", "message"))),)


def tool_use_id(request: ModelRequest, index: int) -> str:
    """A deterministic id, unique within a conversation.

    The message count grows by one per assistant turn, so it alone separates the calls of
    one conversation; the digest of the messages keeps ids apart even when a history
    window keeps the count constant. Only [A-Za-z0-9_] so the API accepts it in replays.
    """
    digest = hashlib.sha256(_canonical_messages(request.messages).encode()).hexdigest()[:12]
    return f"toolu_offline_{len(request.messages):04d}_{index}_{digest}"


def _canonical_messages(messages: Sequence[ChatMessage]) -> str:
    def block(b: object) -> object:
        if isinstance(b, TextBlock):
            return ["text", b.text]
        if isinstance(b, ToolUseBlock):
            return ["tool_use", b.id, b.name, dict(b.input)]
        if isinstance(b, ToolResultBlock):
            return ["tool_result", b.tool_use_id, b.content, b.is_error]
        return ["other", repr(b)]

    rows = [
        [m.role, m.content if isinstance(m.content, str) else [block(b) for b in m.content]]
        for m in messages
    ]
    return json.dumps(rows, ensure_ascii=False, sort_keys=True, default=repr)


def _tool_results(message: ChatMessage) -> list[ToolResultBlock]:
    if isinstance(message.content, str):
        return []
    return [b for b in message.content if isinstance(b, ToolResultBlock)]


def _tool_use_names(messages: Sequence[ChatMessage]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant" and not isinstance(message.content, str):
            for b in message.content:
                if isinstance(b, ToolUseBlock):
                    names[b.id] = b.name
    return names


def _latest_user_text(messages: Sequence[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            text = message.text()
            if text.strip():
                return text
    return ""


def _relay_text(request: ModelRequest) -> str:
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


def _strip_relay_lines(text: str) -> str:
    """The customer's text: note lines (``NOTE_MARKERS``, relay included) removed."""
    return "\n".join(
        line for line in text.splitlines() if not line.strip().startswith(NOTE_MARKERS)
    )


def _note_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith(NOTE_MARKERS)]


def _case_ids(notes: Sequence[str], marker: str) -> list[str]:
    ids = []
    for line in notes:
        if line.startswith(marker):
            match = _CASE_ID_RE.search(line)
            if match:
                ids.append(match.group(1))
    return ids


def human_only_request(normalized: str) -> tuple[str, str] | None:
    """(case title, what was asked) for a request only a person can carry out (rule 5)."""
    if not _REQUEST_VERB_RE.search(normalized):
        return None
    for title, what, pattern in _HUMAN_ONLY_REQUESTS:
        if pattern.search(normalized):
            return title, what
    return None


def _answer_from_search(result: ToolResultBlock) -> str:
    passage = first_passage(result.content)
    if result.is_error or not passage or _says_nothing_found(result.content):
        return NOT_FOUND_REPLY
    return FOUND_TEMPLATE.format(passage=trim(passage, MAX_ANSWER_CHARS))


def first_passage(text: str) -> str:
    """The first non-empty passage of a search result (see the module docstring)."""
    for chunk in re.split(r"\n\s*\n", text):
        passage = " ".join(
            _LIST_MARKER_RE.sub("", line, count=1).strip() for line in chunk.splitlines()
        ).strip()
        if passage:
            return passage
    return ""


def _says_nothing_found(text: str) -> bool:
    normalized = normalize(text)
    return any(marker in normalized for marker in NO_RESULT_MARKERS)


def trim(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters (ellipsis included)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-") + "…"


# --- text rules ------------------------------------------------------------------------


def normalize(text: str) -> str:
    """Lower case, accents removed, punctuation/emoji turned into spaces, spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w\s]|_", " ", stripped).split())


def _asks_for_person(normalized: str) -> bool:
    return any(p.search(normalized) for p in _HANDOFF_PATTERNS)


def _is_greeting_only(normalized: str) -> bool:
    if not normalized:
        return False
    return not _GREETING_RE.sub(" ", normalized).strip()


def agent_name(system: Sequence[str]) -> str:
    """The agent's name from the first system block (see the module docstring), or ""."""
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


# --- tool inputs -----------------------------------------------------------------------


def _properties(spec: ToolSpec) -> Mapping[str, Any]:
    props = spec.input_schema.get("properties")
    return props if isinstance(props, Mapping) else {}


def _with_text(spec: ToolSpec, text: str, preferred: Sequence[str]) -> dict[str, Any]:
    """A valid input for ``spec`` carrying ``text`` in its main string field."""
    props = _properties(spec)
    field = next((f for f in preferred if f in props), None)
    if field is None:
        field = next(
            (k for k, v in props.items() if isinstance(v, Mapping) and v.get("type") == "string"),
            preferred[0],
        )
    return {**minimal_input(spec.input_schema), field: text}


def _fill(spec: ToolSpec, values: Mapping[str, str]) -> dict[str, Any]:
    """A valid input for ``spec``: its minimal input with every declared field of ``values``
    (strings cut to the field's ``maxLength``)."""
    props = _properties(spec)
    tool_input = minimal_input(spec.input_schema)
    for key, value in values.items():
        field = props.get(key)
        if not isinstance(field, Mapping) or field.get("type") not in (None, "string"):
            continue
        limit = field.get("maxLength")
        tool_input[key] = trim(value, limit) if isinstance(limit, int) and limit > 1 else value
    return tool_input


def _handoff_input(spec: ToolSpec) -> dict[str, Any]:
    props = _properties(spec)
    tool_input = minimal_input(spec.input_schema)
    # A schema that declares no properties gets the product's field names; otherwise only
    # declared fields are filled, so a closed schema stays valid.
    declared = set(props) if props else {"motivo_codigo", "motivo"}
    if "motivo_codigo" in declared:
        code_schema = props.get("motivo_codigo")
        enum = code_schema.get("enum") if isinstance(code_schema, Mapping) else None
        code = HANDOFF_REASON_CODE
        if isinstance(enum, list) and enum and code not in enum:
            code = enum[0]
        tool_input["motivo_codigo"] = code
    # The spec calls the free-text reason ``por_que`` (``reason`` legacy); the product's
    # schema says ``motivo``. Fill whichever the schema declares.
    for field in ("motivo", "por_que", "reason"):
        if field in declared:
            tool_input[field] = HANDOFF_REASON_TEXT
    return tool_input


def _forced_tool_answer(request: ModelRequest) -> ModelResponse:
    choice = request.tool_choice
    spec: ToolSpec | None = None
    if choice is not None and choice.type == "tool":
        spec = next((t for t in request.tools if t.name == choice.name), None)
    elif choice is not None and choice.type == "any" and request.tools:
        spec = request.tools[0]
    if spec is None:
        return ModelResponse(content=(), stop_reason="end_turn", model=OFFLINE_MODEL)
    block = ToolUseBlock(
        id=tool_use_id(request, 0), name=spec.name, input=minimal_input(spec.input_schema)
    )
    return ModelResponse(content=(block,), stop_reason="tool_use", model=OFFLINE_MODEL)
