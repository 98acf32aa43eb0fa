"""The turn pipeline: the one place that reads top to bottom.

    guards:  opt-out · human owns the conversation
    route:   the turn's agent
    guard:   handoff keywords → perform_human_handoff
    agent:   orchestrator (LLM tool loop: send_message, request_human_handoff,
             search_knowledge)
    send:    before-send gate chain → outbox

A turn is keyed by its trigger (unique trigger kind + key), holds a lock on its
conversation row while it decides, and records a decision trace made of ids and
codes — never the customer's text.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists
from django.utils import timezone

from conversation import ai, knowledge
from conversation.agents import AgentConfig, generic_agent_config, load_published_agent_config
from conversation.handoff import handoff_touch, perform_human_handoff
from conversation.hooks import cancel_pending_for_conversation
from conversation.llm.base import ChatMessage, ModelRequest, ToolSpec
from conversation.models import (
    Conversation,
    Direction,
    HandoffReason,
    Message,
    SenderKind,
    TriggerKind,
    Turn,
    TurnOutcome,
    TurnStatus,
)
from conversation.orchestrator import LoopResult, Tool, ToolOutcome, run_tool_loop
from conversation.outbox import outbound_enqueue
from conversation.text import contains_keyword, normalize

log = logging.getLogger(__name__)

OPT_OUT_KEYWORDS = ("parar", "sair", "stop", "descadastrar")
OPT_IN_KEYWORDS = ("voltar",)
OPT_OUT_CONFIRMATION = (
    "Pronto! Você não vai mais receber mensagens nossas por aqui. "
    "Se mudar de ideia, é só mandar VOLTAR."
)
OPT_IN_CONFIRMATION = "Que bom ter você de volta! Como posso ajudar?"
HANDOFF_NOTICE = (
    "Certo! Vou chamar uma pessoa da nossa equipe para continuar o seu atendimento por aqui."
)


@dataclass
class TurnContext:
    conversation: Conversation
    turn: Turn
    batch: list[Message]
    ledger: ai.Ledger
    agent: AgentConfig | None = None
    sent: list[Message] = field(default_factory=list)
    handed_off: bool = False
    trace: dict[str, Any] = field(default_factory=dict)

    @property
    def ids(self) -> dict[str, str]:
        return {"conversation_id": str(self.conversation.pk), "turn_id": str(self.turn.pk)}

    def customer_text(self) -> str:
        return "\n".join(m.body for m in self.batch if m.body)


# A gate returns None to let the text go, or a teaching error for the model.
Gate = Callable[[TurnContext, str], str | None]
BEFORE_SEND_GATES: list[Gate] = []


def run_inbound_turn(message_id: str) -> Turn | None:
    """Answer the customer's message (and any lines typed with it). Idempotent."""
    started = time.monotonic()
    with transaction.atomic():
        conversation = (
            Conversation.objects.select_for_update(of=("self",))
            .select_related("contact", "channel", "organization")
            .annotate(
                already_turned=Exists(
                    Turn.objects.filter(trigger_kind=TriggerKind.INBOUND, trigger_key=message_id)
                )
            )
            .filter(messages__pk=message_id)
            .first()
        )
        if conversation is None:
            return None  # the message vanished: nothing to answer
        if conversation.already_turned:
            return None  # a redelivered task: this message already had its turn
        unanswered = list(
            Message.objects.filter(
                conversation=conversation, direction=Direction.INBOUND, turn__isnull=True
            ).order_by("created_at")
        )
        position = next((i for i, m in enumerate(unanswered) if str(m.pk) == message_id), None)
        turn = Turn.objects.create(
            organization_id=conversation.organization_id,
            conversation=conversation,
            trigger_kind=TriggerKind.INBOUND,
            trigger_key=message_id,
        )
        if position is None or position < len(unanswered) - 1:
            # Another line came in after this one (or a later turn already took this
            # one): the turn of the last line answers them all.
            return _finish(turn, TurnOutcome.MERGED, started, {"merged": True})
        batch = unanswered
        Message.objects.filter(pk__in=[m.pk for m in batch]).update(turn=turn)
        ctx = TurnContext(
            conversation=conversation,
            turn=turn,
            batch=batch,
            ledger=ai.Ledger(
                organization_id=conversation.organization_id,
                conversation_id=conversation.pk,
                turn_id=turn.pk,
            ),
            trace={"batch": len(batch)},
        )
        outcome = _decide(ctx)
        ctx.ledger.flush()
        if ctx.sent:
            conversation.save(update_fields=["last_message_at"])
        return _finish(turn, outcome, started, ctx.trace, agent=ctx.agent)


def _decide(ctx: TurnContext) -> str:
    conversation, contact = ctx.conversation, ctx.conversation.contact
    text = ctx.customer_text()
    now = timezone.now()

    # Guard 1: opt-out keywords (and opting back in).
    if normalize(text) in OPT_OUT_KEYWORDS:
        return _opt_out(ctx, now)
    if contact.opted_out_at is not None:
        if normalize(text) in OPT_IN_KEYWORDS:
            contact.opted_out_at = None
            contact.save(update_fields=["opted_out_at"])
            _send_system(ctx, OPT_IN_CONFIRMATION)
            ctx.trace["guard"] = "opt_in"
            return TurnOutcome.REPLIED
        ctx.trace["guard"] = "opted_out"
        return TurnOutcome.NO_REPLY

    # Guard 2: a human owns the conversation — never classified, never answered by AI.
    if contact.force_human or (
        conversation.bot_silenced_until is not None and conversation.bot_silenced_until > now
    ):
        handoff_touch(conversation)
        ctx.trace["guard"] = "human_owned"
        return TurnOutcome.HUMAN_OWNED

    # Route: the turn's agent.
    agent = resolve_turn_agent(ctx)
    ctx.agent = agent
    ctx.trace["agent_id"] = str(agent.agent_id) if agent.agent_id else None
    ctx.trace["agent_version_id"] = str(agent.version_id) if agent.version_id else None

    # Guard 3: the customer asks for a human in the agent's own words.
    keyword = contains_keyword(text, agent.handoff_keywords)
    if keyword is not None:
        _send_system(ctx, HANDOFF_NOTICE)
        perform_human_handoff(
            conversation=conversation,
            reason_code=HandoffReason.REQUESTED_HUMAN,
            reason="Palavra de transbordo do agente.",
        )
        ctx.trace["guard"] = "handoff_keyword"
        return TurnOutcome.HANDOFF

    # Agent: the orchestrator.
    loop = _run_orchestrator(ctx, agent)
    ctx.trace["loop"] = {
        "steps": loop.steps,
        "stop": loop.stop,
        "calls": loop.calls,
        "error": loop.error_code,
        "discarded_text_chars": loop.discarded_text_chars,
    }
    if ctx.handed_off:
        return TurnOutcome.HANDOFF
    if loop.stop == "llm_error" and not ctx.sent:
        ctx.turn.error_code = loop.error_code
        return TurnOutcome.ERROR
    return TurnOutcome.REPLIED if ctx.sent else TurnOutcome.NO_REPLY


def resolve_turn_agent(ctx: TurnContext) -> AgentConfig:
    """The agent that answers this turn: the channel's published agent, else generic."""
    conversation = ctx.conversation
    agent = load_published_agent_config(conversation.channel)
    ctx.trace["route"] = {"source": "channel" if agent else "generic"}
    return agent or generic_agent_config(conversation.organization.name)


def _opt_out(ctx: TurnContext, now: Any) -> str:
    contact = ctx.conversation.contact
    ctx.trace["guard"] = "opt_out"
    if contact.opted_out_at is not None:
        return TurnOutcome.OPTED_OUT  # already out: one confirmation only
    contact.opted_out_at = now
    contact.save(update_fields=["opted_out_at"])
    ctx.trace["followups_cancelled"] = cancel_pending_for_conversation(ctx.conversation, "opt_out")
    _send_system(ctx, OPT_OUT_CONFIRMATION)
    return TurnOutcome.OPTED_OUT


def _send_system(ctx: TurnContext, text: str) -> None:
    ctx.sent.append(
        outbound_enqueue(
            conversation=ctx.conversation, body=text, sender_kind=SenderKind.SYSTEM, turn=ctx.turn
        )
    )


# --- the orchestrator and its tools --------------------------------------------------

SEND_MESSAGE = ToolSpec(
    name="send_message",
    description=(
        "Envia uma mensagem de WhatsApp ao cliente. É a ÚNICA forma de falar com ele: "
        "texto fora desta ferramenta é descartado. Mensagens curtas, em português do Brasil."
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


def _run_orchestrator(ctx: TurnContext, agent: AgentConfig) -> LoopResult:
    ctx.ledger.provider = ai.provider_name(agent.provider)
    client = ai.model_client(ctx.ledger, provider=agent.provider)
    tools = [Tool(SEND_MESSAGE, lambda data: _tool_send_message(ctx, data))]
    if agent.handoff_tool_enabled:
        tools.append(Tool(REQUEST_HUMAN_HANDOFF, lambda data: _tool_handoff(ctx, data)))
    tools.append(Tool(SEARCH_KNOWLEDGE, lambda data: _tool_search(ctx, data)))
    request = ModelRequest(
        purpose="orchestrator",
        model=agent.model,
        system=(f"Você é {agent.name}.\n{agent.prompt}",),
        messages=(),
        max_tokens=1024,
        timeout_s=settings.ANTHROPIC_TIMEOUT_S,
        context=ai.record_context(organization_id=ctx.conversation.organization_id, **ctx.ids),
    )
    return run_tool_loop(
        client=client,
        base_request=request,
        history=build_history(ctx, agent.history_window),
        tools=tools,
        max_steps=agent.max_steps,
    )


def build_history(ctx: TurnContext, window: int) -> list[ChatMessage]:
    """The last ``window`` messages as alternating user/assistant text, ending with the
    batch of lines this turn answers as one user message."""
    batch_ids = {m.pk for m in ctx.batch}
    earlier = list(
        Message.objects.filter(conversation=ctx.conversation)
        .exclude(pk__in=batch_ids)
        .order_by("-created_at")
        .only("direction", "body")[: max(window - len(ctx.batch), 0)]
    )
    rows: list[tuple[str, str]] = [
        ("user" if m.direction == Direction.INBOUND else "assistant", m.body)
        for m in reversed(earlier)
    ]
    rows.append(("user", ctx.customer_text()))
    merged: list[tuple[str, str]] = []
    for role, text in rows:
        if merged and merged[-1][0] == role:
            merged[-1] = (role, f"{merged[-1][1]}\n{text}")
        else:
            merged.append((role, text))
    while merged and merged[0][0] != "user":
        merged.pop(0)
    return [ChatMessage(role=role, content=text) for role, text in merged]  # type: ignore[arg-type]


def _tool_send_message(ctx: TurnContext, data: Any) -> ToolOutcome:
    text = str(data["text"]).strip()
    for gate in BEFORE_SEND_GATES:
        problem = gate(ctx, text)
        if problem is not None:
            ctx.trace.setdefault("vetoes", []).append(getattr(gate, "code", gate.__name__))
            return ToolOutcome(problem, is_error=True)
    message = outbound_enqueue(
        conversation=ctx.conversation, body=text, sender_kind=SenderKind.AI, turn=ctx.turn
    )
    ctx.sent.append(message)
    return ToolOutcome(f"Mensagem enviada (id {message.pk}).")


def _tool_handoff(ctx: TurnContext, data: Any) -> ToolOutcome:
    code = data.get("motivo_codigo") or HandoffReason.LOW_CONFIDENCE
    reason = str(data.get("por_que") or data.get("reason") or "")
    if not ctx.sent:
        _send_system(ctx, HANDOFF_NOTICE)
    perform_human_handoff(conversation=ctx.conversation, reason_code=code, reason=reason)
    ctx.handed_off = True
    ctx.trace["handoff"] = code
    return ToolOutcome("Conversa passada para a equipe humana.", terminal=True)


def _tool_search(ctx: TurnContext, data: Any) -> ToolOutcome:
    hits = knowledge.search_knowledge(ctx.conversation.organization_id, str(data["query"]))
    ctx.trace.setdefault("knowledge_hits", []).append([str(h.document_id) for h in hits])
    return ToolOutcome(knowledge.format_hits(hits))


def _finish(
    turn: Turn,
    outcome: str,
    started: float,
    trace: dict[str, Any],
    *,
    agent: AgentConfig | None = None,
) -> Turn:
    turn.status = TurnStatus.DONE
    turn.outcome = outcome
    turn.trace = trace
    turn.latency_ms = int((time.monotonic() - started) * 1000)
    turn.finished_at = timezone.now()
    turn.agent_version_id = agent.version_id if agent else None
    turn.save(
        update_fields=[
            "status",
            "outcome",
            "trace",
            "latency_ms",
            "finished_at",
            "agent_version",
            "error_code",
        ]
    )
    log.info(
        "turn finished",
        extra={
            "turn_id": str(turn.pk),
            "conversation_id": str(turn.conversation_id),
            "outcome": outcome,
            "latency_ms": turn.latency_ms,
        },
    )
    return turn
