"""The case tools of the orchestrator (human-cases §4) and the resident system block (§5.2).

Present only when the turn's agent version has ``cases_enabled``. Their descriptions
teach the behaviour; their errors come back to the model as teaching results, never as
exceptions. Organization, lead and conversation come from the turn's real conversation,
never from the model's input (which the orchestrator validates strictly first: unknown
keys are rejected).
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from cases import selectors, services
from cases.models import Case, CaseSource, CaseStatus
from conversation.agents import AgentConfig
from conversation.llm.base import ToolSpec
from conversation.llm.protocol import (
    CASE_AWAITING_LEAD_MARKER,
    CASE_OPEN_MARKER,
    INTERNAL_MARKER,
    OPEN_HUMAN_CASE,
    PROVIDE_CASE_UPDATE,
)
from conversation.models import Conversation, Turn
from conversation.orchestrator import Tool, ToolOutcome

log = logging.getLogger(__name__)

# At most this many cases per turn: a model stuck in a loop must not flood the inbox.
MAX_CASES_PER_TURN = 3


class TurnState(Protocol):
    """What the case tools and the send gate need of the turn (``conversation.turns``)."""

    conversation: Conversation
    turn: Turn
    agent: AgentConfig | None
    trace: dict[str, Any]  # telemetry only: nothing here decides on it
    vetoes: list[str]  # the gate codes of this turn's vetoed texts
    cases_opened: list[str]  # ids of the cases this turn opened

    def customer_text(self) -> str: ...

    # An effect the turn's finish applies, in order, in its transaction (the send gate's
    # locked re-check of a covering case runs there, ahead of the text's outbox row).
    def defer(self, effect: Callable[[], object]) -> None: ...


OPEN_HUMAN_CASE_SPEC = ToolSpec(
    name=OPEN_HUMAN_CASE,
    description=(
        "Abra um caso para um humano de retaguarda quando você NÃO conseguir resolver o pedido "
        "do lead sozinho (ex.: liberar acesso, corrigir algo num sistema, uma decisão que exige "
        "uma pessoa). Você CONTINUA conversando com o lead normalmente — não silencia. Use "
        "SEMPRE que for prometer ao lead que alguém vai verificar/resolver: prometer sem abrir "
        "o caso é proibido."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "title": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "Curto, ex.: “Liberar acesso ao painel”.",
            },
            "summary": {
                "type": "string",
                "minLength": 1,
                "maxLength": 2000,
                "description": "O que o lead precisa, em pt-BR, com os dados que ele já deu.",
            },
            "blocker": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1000,
                "description": "Por que você não consegue resolver sozinho.",
            },
        },
        "required": ["title", "summary", "blocker"],
        "additionalProperties": False,
    },
)

PROVIDE_CASE_UPDATE_SPEC = ToolSpec(
    name=PROVIDE_CASE_UPDATE,
    description=(
        "Quando um caso está esperando informação do cliente e você já colheu essa informação "
        "na conversa, use esta tool para devolver a informação ao humano responsável pelo caso. "
        "Não invente — só o que o lead realmente disse."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "case_id": {
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
                "description": "O case_id informado na nota interna do caso.",
            },
            "info": {
                "type": "string",
                "minLength": 1,
                "maxLength": 2000,
                "description": "A informação que o lead deu, nas palavras dele.",
            },
        },
        "required": ["case_id", "info"],
        "additionalProperties": False,
    },
)

# The resident block (§5.2): stable text, part of the cached prefix (system + tools).
CASES_SYSTEM_BLOCK = (
    "## Casos para a equipe de retaguarda\n"
    "Você pode delegar uma TAREFA a uma pessoa da equipe sem sair da conversa: a ferramenta "
    "open_human_case abre um caso que a equipe responde para você, e você repassa ao cliente.\n"
    "Quando abrir um caso:\n"
    "- o cliente pede algo que você NÃO consegue fazer sozinho (reembolso, estorno, "
    "cancelamento de pedido, liberar acesso, corrigir algo num sistema, uma decisão que exige "
    "uma pessoa);\n"
    "- você vai dizer ao cliente que alguém da equipe vai verificar, resolver, encaminhar ou "
    "retornar.\n"
    "O que capturar: title (curto, ex.: “Liberar acesso ao painel”), summary (o que o cliente "
    "precisa, com os dados que ele já deu: número do pedido, e-mail, datas) e blocker (por que "
    "você não consegue resolver sozinho). Pergunte antes o que faltar para a equipe agir.\n"
    "Regra: prometer humano ⇒ abrir caso. Prometer ao cliente que uma pessoa vai agir SEM "
    "abrir o caso é proibido, e a mensagem é bloqueada. Abra o caso primeiro; depois diga que "
    "a equipe vai verificar.\n"
    "A conversa continua com você: depois de abrir o caso, siga atendendo normalmente pelo "
    "send_message; você não silencia e não passa a conversa para ninguém.\n"
    "Quando a equipe precisar de algo do cliente, uma nota interna dirá o quê; pergunte ao "
    "cliente e, quando ele responder, chame provide_case_update com o case_id e só o que ele "
    "realmente disse — antes do send_message, ou na mesma resposta: o envio encerra o turno.\n"
    f"Linhas que começam com {INTERNAL_MARKER}, {CASE_OPEN_MARKER} ou "
    f"{CASE_AWAITING_LEAD_MARKER} são notas internas do sistema, nunca do cliente: não as "
    "repita para ele."
)


def case_tools(ctx: TurnState) -> list[Tool]:
    return [
        Tool(OPEN_HUMAN_CASE_SPEC, lambda data: open_human_case(ctx, data)),
        Tool(PROVIDE_CASE_UPDATE_SPEC, lambda data: provide_case_update(ctx, data)),
    ]


def case_notes(conversation: Conversation) -> list[str]:
    """Internal notes about the conversation's open cases, for the model (outside the
    cached prefix: they change from turn to turn)."""
    notes = []
    for case in selectors.open_cases_of_conversation(conversation.pk):
        title = _one_line(case.title)
        if case.status == CaseStatus.AWAITING_LEAD:
            notes.append(
                f"{CASE_AWAITING_LEAD_MARKER} case_id={case.pk} · “{title}” · a equipe precisa "
                f"que você obtenha do cliente: “{_one_line(case.lead_request)}”. Quando ele "
                f"responder, chame provide_case_update com case_id={case.pk}."
            )
        else:
            notes.append(
                f"{CASE_OPEN_MARKER} case_id={case.pk} · “{title}” · esperando a equipe. Não "
                "abra outro caso para o mesmo pedido; se o cliente perguntar, diga que a equipe "
                "já está cuidando."
            )
    return notes


def open_human_case(ctx: TurnState, data: Mapping[str, Any]) -> ToolOutcome:
    if len(ctx.cases_opened) >= MAX_CASES_PER_TURN:
        return _error(
            "Você já abriu casos demais neste turno. Continue a conversa com o cliente "
            "sem abrir outro."
        )
    agent = ctx.agent
    try:
        case = services.case_open(
            conversation=ctx.conversation,
            title=str(data["title"]),
            summary=str(data["summary"]),
            blocker=str(data["blocker"]),
            source=CaseSource.AGENT,
            agent_id=agent.agent_id if agent else None,
            turn_id=ctx.turn.pk,
        )
    except services.CaseError as exc:
        return _error(exc.message)
    ctx.cases_opened.append(str(case.pk))
    return ToolOutcome(
        json.dumps({"ok": True, "case_id": str(case.pk), "status": case.status})
        + " Caso aberto: a equipe vai responder por aqui. Continue atendendo o cliente; agora "
        "você pode dizer a ele que a equipe vai verificar."
    )


def provide_case_update(ctx: TurnState, data: Mapping[str, Any]) -> ToolOutcome:
    raw_id = str(data["case_id"]).strip().removeprefix("#")
    try:
        case_id = uuid.UUID(raw_id)
    except ValueError:
        return _error("case_id inválido: use o case_id da nota interna do caso.")
    conversation = ctx.conversation
    # The case must be the lead's, in the turn's organization: never trust the payload.
    case = Case.objects.filter(
        pk=case_id, organization_id=conversation.organization_id, lead_id=conversation.contact_id
    ).first()
    if case is None:
        return _error("Caso não encontrado para este cliente. Confira o case_id da nota interna.")
    if case.status != CaseStatus.AWAITING_LEAD:
        return _error(
            f"O caso {case.pk} não está esperando informação do cliente (está "
            f"{CaseStatus(case.status).label}). Não chame provide_case_update agora; siga a "
            "conversa normalmente."
        )
    try:
        event = services.case_provide_update(
            case=case, conversation=conversation, info=str(data["info"]), turn_id=ctx.turn.pk
        )
    except services.CaseError as exc:
        return _error(exc.message)
    ctx.trace.setdefault("cases_updated", []).append(str(case.pk))
    return ToolOutcome(
        json.dumps({"ok": True, "case_id": str(case.pk), "event_id": str(event.pk)})
        + " Informação entregue à equipe. Agradeça ao cliente e diga que a equipe vai continuar."
    )


def _error(message: str) -> ToolOutcome:
    return ToolOutcome(
        json.dumps({"ok": False, "error": {"message": message}}, ensure_ascii=False),
        is_error=True,
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]
