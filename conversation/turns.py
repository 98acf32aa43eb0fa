"""The turn pipeline: the one place that reads top to bottom.

    guards:  opt-out · human owns the conversation
    route:   the turn's agent
    guard:   handoff keywords → perform_human_handoff
    agent:   conversation runtime (agent versions with a runtime profile), then
             orchestrator (LLM tool loop: send_message, request_human_handoff,
             search_knowledge; open_human_case, provide_case_update when cases_enabled)
    send:    before-send gate chain (case-promise gate) → outbox

Cases re-enter here too: ``run_case_reply_turn`` (a person answered a case) and
``run_follow_up_turn`` (a case waiting for the customer is due a follow-up).

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

from cases import reentry as case_reentry
from cases import services as case_services
from cases import tools as case_tools
from cases.gates import case_promise_send_gate
from conversation import ai, knowledge
from conversation.agents import AgentConfig, generic_agent_config
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
from conversation.runtime_shell import RuntimeReply, runtime_step, with_orchestrator_note
from conversation.text import contains_keyword, normalize
from routers.turn import route_turn

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
    # Internal lines the model gets in the last user message (open cases; a case reply's
    # re-entry block instead of customer text). Outside the cached prefix.
    notes: list[str] = field(default_factory=list)
    reentry: str = ""
    # The runtime's state summary/directive when it fell back: an extra text block on the
    # customer's message for the orchestrator's call only (never stored).
    runtime_note: str = ""

    @property
    def ids(self) -> dict[str, str]:
        return {"conversation_id": str(self.conversation.pk), "turn_id": str(self.turn.pk)}

    def customer_text(self) -> str:
        return "\n".join(m.body for m in self.batch if m.body)


# A gate returns None to let the text go, or a teaching error for the model.
Gate = Callable[[TurnContext, str], str | None]
BEFORE_SEND_GATES: list[Gate] = [case_promise_send_gate]


def run_inbound_turn(message_id: str) -> Turn | None:
    """Answer the customer's message (and any lines typed with it). Idempotent."""
    started = time.monotonic()
    with transaction.atomic():
        claimed = _claim_turn(TriggerKind.INBOUND, message_id, messages__pk=message_id)
        if claimed is None:
            return None  # the message vanished, or a redelivered task: it had its turn
        conversation, turn = claimed
        unanswered = list(
            Message.objects.filter(
                conversation=conversation, direction=Direction.INBOUND, turn__isnull=True
            ).order_by("created_at")
        )
        position = next((i for i, m in enumerate(unanswered) if str(m.pk) == message_id), None)
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

    # Agent: the conversation runtime answers the turns it covers.
    if _run_runtime(ctx, agent):
        return TurnOutcome.RUNTIME

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
    """The agent that answers this turn: the channel's router when it has an active one
    (stickiness, classification, fallback; one RouterDecision per routed turn), else the
    channel's published agent; with neither, the generic assistant. Never raises."""
    conversation = ctx.conversation
    routed = route_turn(
        conversation=conversation,
        turn=ctx.turn,
        signal=ctx.customer_text() or None,  # no customer text (a case reply): no classifying
        recorder=ctx.ledger,
    )
    ctx.trace["route"] = routed.trace()
    return routed.config or generic_agent_config(conversation.organization.name)


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
    system: tuple[str, ...] = (f"Você é {agent.name}.\n{agent.prompt}",)
    if agent.cases_enabled:  # human-cases §5.2: tools + a resident block in the cached prefix
        tools.extend(case_tools.case_tools(ctx))
        system += (case_tools.CASES_SYSTEM_BLOCK,)
        ctx.notes = case_tools.case_notes(ctx.conversation)
    request = ModelRequest(
        purpose="orchestrator",
        model=agent.model,
        system=system,
        messages=(),
        max_tokens=1024,
        timeout_s=settings.ANTHROPIC_TIMEOUT_S,
        context=ai.record_context(organization_id=ctx.conversation.organization_id, **ctx.ids),
    )
    return run_tool_loop(
        client=client,
        base_request=request,
        history=with_orchestrator_note(build_history(ctx, agent.history_window), ctx.runtime_note),
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
    rows.append(("user", "\n".join([*ctx.notes, ctx.reentry or ctx.customer_text()])))
    merged: list[tuple[str, str]] = []
    for role, text in rows:
        if merged and merged[-1][0] == role:
            merged[-1] = (role, f"{merged[-1][1]}\n{text}")
        else:
            merged.append((role, text))
    while merged and merged[0][0] != "user":
        merged.pop(0)
    return [ChatMessage(role=role, content=text) for role, text in merged]  # type: ignore[arg-type]


def _run_runtime(ctx: TurnContext, agent: AgentConfig) -> bool:
    """The deterministic dialogue layer (conversation/runtime_shell); True when it answered.

    Shadow mode and fallbacks return False: the orchestrator answers (with the runtime's
    note only on a live fallback)."""
    step = runtime_step(
        conversation=ctx.conversation,
        turn=ctx.turn,
        agent=agent,
        text=ctx.customer_text(),
        batch_ids=[m.pk for m in ctx.batch],
        ledger=ctx.ledger,
    )
    if step is None:
        return False
    ctx.trace["runtime"] = step.trace
    answered = step.reply is not None and _send_runtime_reply(ctx, step.reply)
    step.commit(answered=answered)
    if not answered:
        ctx.runtime_note = step.orchestrator_note
    return answered


def _send_runtime_reply(ctx: TurnContext, reply: RuntimeReply) -> bool:
    """The runtime's text through the same gates as ``send_message``; False when vetoed."""
    for gate in BEFORE_SEND_GATES:
        if gate(ctx, reply.text) is not None:
            ctx.trace.setdefault("vetoes", []).append(getattr(gate, "code", gate.__name__))
            return False
    ctx.sent.append(
        outbound_enqueue(
            conversation=ctx.conversation,
            body=reply.text,
            sender_kind=SenderKind.AI,
            turn=ctx.turn,
            script_id=reply.script_id,
            script_version=reply.script_version,
        )
    )
    return True


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


# --- cases re-entering the conversation (human-cases §4.3, §3) ----------------------------


def _claim_turn(kind: str, key: str, **lookup: Any) -> tuple[Conversation, Turn] | None:
    """Lock the conversation found by ``lookup`` and create the turn keyed by its trigger —
    unless a turn already answered that trigger (a redelivered task) or the row vanished.
    One locking query (the already-answered check rides in it) and one insert."""
    conversation = (
        Conversation.objects.select_for_update(of=("self",))
        .select_related("contact", "channel", "organization")
        .annotate(already_turned=Exists(Turn.objects.filter(trigger_kind=kind, trigger_key=key)))
        .filter(**lookup)
        .first()
    )
    if conversation is None or conversation.already_turned:
        return None
    turn = Turn.objects.create(
        organization_id=conversation.organization_id,
        conversation=conversation,
        trigger_kind=kind,
        trigger_key=key,
    )
    return conversation, turn


def run_case_reply_turn(event_id: str) -> Turn | None:
    """Relay a person's case answer to the customer. Keyed by the ``human_replied`` event:
    a redelivered task never sends twice."""
    started = time.monotonic()
    with transaction.atomic():
        reply = case_reentry.load_reply(event_id)
        if reply is None:
            return None
        claimed = _claim_turn(TriggerKind.CASE_REPLY, event_id, pk=reply.conversation_id)
        if claimed is None:
            return None
        conversation, turn = claimed
        ctx = TurnContext(
            conversation=conversation,
            turn=turn,
            batch=[],
            ledger=ai.Ledger(
                organization_id=conversation.organization_id,
                conversation_id=conversation.pk,
                turn_id=turn.pk,
            ),
            trace={"case_id": str(reply.case.pk), "human_action": reply.event.human_action},
        )
        outcome = _decide_case_reply(ctx, reply)
        ctx.ledger.flush()
        if ctx.sent:
            conversation.save(update_fields=["last_message_at"])
        case_services.case_record_relay(
            case=reply.case, event=reply.event, sent=ctx.sent, turn=turn
        )
        return _finish(turn, outcome, started, ctx.trace, agent=ctx.agent)


def _decide_case_reply(ctx: TurnContext, reply: case_reentry.CaseReply) -> str:
    conversation, contact = ctx.conversation, ctx.conversation.contact
    if contact.opted_out_at is not None:
        ctx.trace["guard"] = "opted_out"
        return TurnOutcome.NO_REPLY
    if contact.force_human or (
        conversation.bot_silenced_until is not None
        and conversation.bot_silenced_until > timezone.now()
    ):
        ctx.trace["guard"] = "human_owned"
        return TurnOutcome.HUMAN_OWNED
    agent = case_reentry.turn_agent(reply, conversation)
    ctx.agent = agent
    ctx.trace["agent_id"] = str(agent.agent_id) if agent.agent_id else None
    ctx.trace["agent_version_id"] = str(agent.version_id) if agent.version_id else None
    # The offline model relays deterministically ([RELAY] lines); a real model composes.
    relay = ai.provider_name(agent.provider) == "offline"
    ctx.reentry = case_reentry.reentry_block(reply, relay=relay)
    loop = _run_orchestrator(ctx, agent)
    ctx.trace["loop"] = {"steps": loop.steps, "stop": loop.stop, "calls": loop.calls}
    if ctx.handed_off:
        return TurnOutcome.HANDOFF
    if loop.stop == "llm_error" and not ctx.sent:
        ctx.turn.error_code = loop.error_code
        return TurnOutcome.ERROR
    return TurnOutcome.REPLIED if ctx.sent else TurnOutcome.NO_REPLY


def run_follow_up_turn(follow_up_id: str) -> Turn | None:
    """A case waiting for the customer is due a follow-up: nudge them (inside WhatsApp's
    24-hour window, or with the channel's template), or flag the case once the attempts
    are spent. Keyed by the follow-up row."""
    started = time.monotonic()
    with transaction.atomic():
        conversation_id = case_services.follow_up_conversation_id(follow_up_id)
        if conversation_id is None:
            return None  # cancelled, already fired, or vanished
        claimed = _claim_turn(TriggerKind.FOLLOW_UP, follow_up_id, pk=conversation_id)
        if claimed is None:
            return None
        conversation, turn = claimed
        result = case_services.follow_up_fire(
            follow_up_id=follow_up_id, conversation=conversation, turn=turn
        )
        if result.sent:
            conversation.save(update_fields=["last_message_at"])
        outcome = TurnOutcome.REPLIED if result.sent else TurnOutcome.NO_REPLY
        return _finish(turn, outcome, started, result.trace)


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
