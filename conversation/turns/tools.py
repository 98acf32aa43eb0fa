"""The orchestrator's own tools (specs and handlers) and the one way AI text leaves a turn.

``send_through_gates`` is the single send path for model-written text: the runtime's
reply and the ``send_message`` tool both go through the before-send gates (today the
case-promise gate, ``cases.promise_gate``) and then the outbox (written when the turn
finishes, like the handoff of ``request_human_handoff``: ``TurnContext.defer``). A gate
returns None to let the text go, or a teaching error for the model; the turn records the
gate's ``code`` on ``TurnContext.vetoes``. The case tools come from ``cases.tools``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cases.promise_gate import GateHandoff, case_promise_send_gate
from conversation import knowledge
from conversation.agents import AgentConfig
from conversation.channels._parsing import clean_text
from conversation.handoff import perform_human_handoff
from conversation.llm.base import ToolSpec
from conversation.models import HandoffReason, SenderKind
from conversation.orchestrator import Tool, ToolOutcome

from .context import Reply, TurnContext
from .guards import HANDOFF_NOTICE, send_system

# A gate returns None to let the text go, a teaching error for the model, or a
# ``GateHandoff``: the text must not go and the conversation goes to the team.
Gate = Callable[[TurnContext, str], str | GateHandoff | None]
BEFORE_SEND_GATES: list[Gate] = [case_promise_send_gate]

SEND_MESSAGE = ToolSpec(
    name="send_message",
    description=(
        "Envia uma mensagem de WhatsApp ao cliente. É a ÚNICA forma de falar com ele: "
        "texto fora desta ferramenta é descartado. Mensagens curtas, em português do Brasil. "
        "Um envio aceito encerra o turno: use antes as outras ferramentas de que precisar "
        "(busca, casos); para mandar mais de uma mensagem, chame-a várias vezes na mesma "
        "resposta."
    ),
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 4000}},
        "required": ["text"],
        "additionalProperties": False,
    },
)
REQUEST_HUMAN_HANDOFF = ToolSpec(
    name="request_human_handoff",
    description=(
        "Passa a conversa para uma pessoa da equipe; a IA sai da conversa. Use quando o "
        "cliente pedir atendente (motivo_codigo=requested_human) ou quando a etapa exigir a "
        "equipe (critical_stage). Sem motivo_codigo, registra low_confidence."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "motivo_codigo": {
                "type": "string",
                "enum": ["requested_human", "critical_stage", "low_confidence"],
            },
            "por_que": {"type": "string", "maxLength": 1000},
            "reason": {"type": "string", "maxLength": 1000},
        },
        "required": [],
        "additionalProperties": False,
    },
)
SEARCH_KNOWLEDGE = ToolSpec(
    name="search_knowledge",
    description=(
        "Busca na base de conhecimento da empresa. Use antes de responder dúvidas sobre "
        "produtos, preços, prazos e políticas; responda só com o que encontrar."
    ),
    input_schema={
        "type": "object",
        "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 500}},
        "required": ["query"],
        "additionalProperties": False,
    },
)

# The tool result of a send after the turn handed the conversation to the team.
HANDED_OFF_RESULT_PT = (
    "Mensagem NÃO enviada: a conversa já foi passada para a equipe humana neste turno."
)


@dataclass(frozen=True)
class Vetoed:
    """A gate stopped the text: ``problem`` is the teaching error for the model."""

    code: str
    problem: str
    handed_off: bool = False  # the text was replaced by the handoff notice: the turn ends


def send_through_gates(
    ctx: TurnContext, text: str, *, script_id: str = "", script_version: str = ""
) -> Reply | Vetoed:
    """Send model-written ``text`` to the customer unless a before-send gate vetoes it.
    It reaches the outbox when the turn finishes (``TurnContext.send``)."""
    for gate in BEFORE_SEND_GATES:
        problem = gate(ctx, text)
        if isinstance(problem, GateHandoff):
            return _hand_off_instead(ctx, problem)
        if problem is not None:
            code = getattr(gate, "code", gate.__name__)
            ctx.vetoes.append(code)
            return Vetoed(code=code, problem=problem)
    return ctx.send(Reply(text, SenderKind.AI, script_id=script_id, script_version=script_version))


def _hand_off_instead(ctx: TurnContext, verdict: GateHandoff) -> Vetoed:
    """The gate refused the text and asked for the team (a promise of human action from an
    agent without cases, DESIGN §10.3): the customer gets the handoff notice instead, and
    the canonical handoff is an effect of the turn, recorded under its reason code."""
    ctx.vetoes.append(verdict.code)
    if not ctx.handed_off:
        send_system(ctx, HANDOFF_NOTICE)
        ctx.defer(
            lambda: perform_human_handoff(
                conversation=ctx.conversation, reason_code=verdict.code, reason=verdict.reason
            )
        )
        ctx.handed_off = True
        ctx.trace["handoff"] = verdict.code
    return Vetoed(code=verdict.code, problem=verdict.problem, handed_off=True)


def own_tools(ctx: TurnContext, agent: AgentConfig) -> list[Tool]:
    """``send_message``, ``request_human_handoff`` (when the agent allows it) and
    ``search_knowledge``, bound to this turn."""
    tools = [Tool(SEND_MESSAGE, lambda data: _tool_send_message(ctx, data))]
    if agent.handoff_tool_enabled:
        tools.append(Tool(REQUEST_HUMAN_HANDOFF, lambda data: _tool_handoff(ctx, data)))
    tools.append(Tool(SEARCH_KNOWLEDGE, lambda data: _tool_search(ctx, data)))
    return tools


def _tool_send_message(ctx: TurnContext, data: Any) -> ToolOutcome:
    """An accepted send ends the loop (``terminal``): the model's answer to "sent" was only
    ever ``end_turn`` — a second round trip to the model (~1 s, and its tokens) before the
    turn could finish and the reply leave. Calls of the same response still all run, so
    several messages, or a case opened beside the reply, go in one step; a vetoed send is
    an error the model answers, so the loop goes on."""
    if ctx.handed_off:
        # A handoff earlier in this turn (e.g. the call before this one in the same
        # response): the person takes the conversation over and the bot is silent.
        return ToolOutcome(HANDED_OFF_RESULT_PT, is_error=True, terminal=True)
    # What the customer would get: no NUL, no lone surrogate (PostgreSQL stores neither).
    text = clean_text(str(data["text"])).strip()
    if not text:
        return ToolOutcome("A mensagem está vazia: escreva o texto para o cliente.", is_error=True)
    sent = send_through_gates(ctx, text)
    if isinstance(sent, Vetoed):
        return ToolOutcome(sent.problem, is_error=True, terminal=sent.handed_off)
    return ToolOutcome(f"Mensagem enviada (nº {len(ctx.sent)} deste turno).", terminal=True)


def _tool_handoff(ctx: TurnContext, data: Any) -> ToolOutcome:
    code = data.get("motivo_codigo") or HandoffReason.LOW_CONFIDENCE
    reason = str(data.get("por_que") or data.get("reason") or "")
    if not ctx.sent:
        send_system(ctx, HANDOFF_NOTICE)
    ctx.defer(
        lambda: perform_human_handoff(
            conversation=ctx.conversation, reason_code=code, reason=reason
        )
    )
    ctx.handed_off = True
    ctx.trace["handoff"] = code
    return ToolOutcome("Conversa passada para a equipe humana.", terminal=True)


def _tool_search(ctx: TurnContext, data: Any) -> ToolOutcome:
    hits = knowledge.search_knowledge(ctx.conversation.organization_id, str(data["query"]))
    ctx.trace.setdefault("knowledge_hits", []).append([str(h.document_id) for h in hits])
    return ToolOutcome(knowledge.format_hits(hits))
