"""The agent's answer through the orchestrator: the request, the history, the tool loop
(``conversation.orchestrator``) and what its result means for the turn.

Tools: the turn's own (``tools.own_tools``), plus the case tools and their resident system
block when the agent version has ``cases_enabled`` (human-cases §5.2).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.db.compiled import CompiledQuery
from cases import tools as case_tools
from conversation import model_calls
from conversation.agents import AgentConfig, generic_model
from conversation.llm.base import ChatMessage, ModelRequest
from conversation.llm.catalog import enabled_models
from conversation.models import Direction, Message, TurnOutcome
from conversation.orchestrator import LoopResult, run_tool_loop

from .context import TurnContext
from .runtime_step import with_orchestrator_note
from .tools import own_tools
from .unavailable import model_unavailable

log = logging.getLogger(__name__)


def run_orchestrator(ctx: TurnContext, agent: AgentConfig) -> LoopResult:
    ctx.ledger.provider = model_calls.provider_name(agent.provider)
    client = model_calls.model_client(ctx.ledger, provider=agent.provider)
    tools = own_tools(ctx, agent)
    system: tuple[str, ...] = (f"Você é {agent.name}.\n{agent.prompt}",)
    # The reads before the first model call, in one short transaction (nothing in it waits
    # on the network): outside one, each read of a turn is a transaction of its own with
    # its tenant walls (``tenancy``), three round trips more apiece.
    with transaction.atomic():
        if agent.cases_enabled:  # human-cases §5.2: tools + a resident block in the prefix
            tools.extend(case_tools.case_tools(ctx))
            system += (case_tools.CASES_SYSTEM_BLOCK,)
            ctx.notes = case_tools.case_notes(ctx.conversation)
        history = with_orchestrator_note(build_history(ctx, agent.history_window), ctx.runtime_note)
    request = ModelRequest(
        purpose="orchestrator",
        model=_allowed_model(ctx, agent),
        system=system,
        messages=(),
        max_tokens=1024,
        timeout_s=settings.ANTHROPIC_TIMEOUT_S,
        context=model_calls.record_context(
            organization_id=ctx.conversation.organization_id, **ctx.ids
        ),
    )
    return run_tool_loop(
        client=client,
        base_request=request,
        history=history,
        tools=tools,
        max_steps=agent.max_steps,
    )


def _allowed_model(ctx: TurnContext, agent: AgentConfig) -> str:
    """The agent's model, or, when the organization no longer enables it (an admin narrowed
    ``settings["llm"]["enabled_models"]`` after the agent was published; the agent form keeps
    a model it may not offer again), the organization's generic model: the setting is a
    cost and data decision the turn must respect, and the customer is still answered."""
    org_settings = ctx.conversation.organization.settings
    allowed = enabled_models(org_settings)
    if allowed is None or agent.model in allowed or agent.provider != "anthropic":
        return agent.model
    model = generic_model(org_settings)
    ctx.trace["model_substituted"] = {"configured": agent.model, "used": model}
    log.warning(
        "agent model not enabled for the organization",
        extra={"configured": agent.model, "used": model, **ctx.ids},
    )
    return model


def loop_outcome(ctx: TurnContext, loop: LoopResult) -> str:
    """The turn's outcome once the orchestrator's loop is over (every turn that runs it).
    The model down, answering only in plain text, or spending every step on tools, with
    nothing said: never silence (``unavailable``)."""
    if ctx.handed_off:
        return TurnOutcome.HANDOFF
    if loop.stop in ("llm_error", "plain_text", "max_steps") and not ctx.sent:
        return model_unavailable(ctx, loop.error_code, timezone.now())
    return TurnOutcome.REPLIED if ctx.sent else TurnOutcome.NO_REPLY


def loop_trace(loop: LoopResult, *, detail: bool = True) -> dict[str, Any]:
    """The loop's telemetry: steps, stop and tool calls; with ``detail`` also the model
    error code and how much plain text the model wrote (discarded: tools only)."""
    trace: dict[str, Any] = {"steps": loop.steps, "stop": loop.stop, "calls": loop.calls}
    if detail:
        trace.update(error=loop.error_code, discarded_text_chars=loop.discarded_text_chars)
        if loop.nudged:
            trace["nudged"] = True
    return trace


_RECENT: dict[int, CompiledQuery[Message]] = {}


def _recent_query(conversation_id: uuid.UUID, window: int) -> QuerySet[Message]:
    return (
        Message.objects.filter(conversation_id=conversation_id)
        .order_by("-created_at")
        .only("direction", "body")[:window]
    )


def _recent_messages(window: int) -> CompiledQuery[Message]:
    """The conversation's ``window`` latest messages (direction and body only); compiled
    once per window size and thread (a window is an agent setting: a handful of values)."""
    query = _RECENT.get(window)
    if query is None:
        query = _RECENT.setdefault(
            window, CompiledQuery(lambda pk: _recent_query(pk, window), (uuid.UUID(int=1),))
        )
    return query


def build_history(ctx: TurnContext, window: int) -> list[ChatMessage]:
    """The last ``window`` messages as alternating user/assistant text, ending with the
    batch of lines this turn answers as one user message."""
    batch_ids = {m.pk for m in ctx.batch}
    wanted = window - len(ctx.batch)
    # The ``wanted`` latest messages outside the batch are all among the ``window`` latest
    # (the i-th latest outside it ranks at most i + len(batch) overall): one query of a
    # fixed shape per window, compiled once, instead of an exclusion list of varying length.
    recent = _recent_messages(window).all(ctx.conversation.pk) if wanted > 0 else []
    earlier = [m for m in recent if m.pk not in batch_ids][: max(wanted, 0)]
    rows: list[tuple[str, str]] = [
        ("user" if m.direction == Direction.INBOUND else "assistant", m.body)
        for m in reversed(earlier)
    ]
    rows.append(("user", "\n".join([*ctx.notes, ctx.reentry or ctx.customer_text()])))
    return [ChatMessage(role=role, content=text) for role, text in alternate(rows)]  # type: ignore[arg-type]


def alternate(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Consecutive rows of one role joined, starting at the first user row."""
    merged: list[tuple[str, str]] = []
    for role, text in rows:
        if merged and merged[-1][0] == role:
            merged[-1] = (role, f"{merged[-1][1]}\n{text}")
        else:
            merged.append((role, text))
    while merged and merged[0][0] != "user":
        merged.pop(0)
    return merged
