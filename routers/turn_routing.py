"""The router inside a turn (intent-router Task 5): resolve the agent, keep the
conversation's stickiness, and write one ``RouterDecision`` per routed turn.

Called by ``conversation.turns.resolve_turn_agent`` after the guards (a conversation a
human owns never gets here), inside the turn's transaction and its conversation lock.

Query budget per routed turn: the channel with its agent and its active router (one
query; members cached per stamp) · the chosen agent's published config · the
conversation's sticky columns (only when they change) · the decision insert. A members
cache miss adds one. Without a router, the first query is all: exactly what a turn read
before routers existed (the channel's agent).
"""

from __future__ import annotations

import logging
import uuid
from contextlib import nullcontext
from typing import Any

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from conversation.agents import (
    AgentConfig,
    load_published_agent_config,
    load_published_agent_config_by_id,
)
from conversation.llm.base import CallRecorder
from conversation.models import ChannelSession, Conversation, Turn
from routers.cascade_runner import classify_message
from routers.classification import CascadeResult
from routers.classification.learning import suggested_intent
from routers.loaders import ChannelRouting, LoadedRouter, load_channel_routing, remember_agent
from routers.models import RouterDecision
from routers.resolver import (
    UNEXPECTED_ERROR,
    ResolverDeps,
    TurnAgentResolution,
    TurnInput,
    resolve_turn_agent,
)
from routers.services.suggestions import suggestion_record

log = logging.getLogger(__name__)

# Outcomes whose intent is the conversation's subject from now on. A fallback keeps the
# agent sticky but not the intent the classifier was unsure about.
_SUBJECT_OUTCOMES = frozenset({"classified", "reclassified", "sticky"})


class _Seen:
    """What one turn's routing read: its channel routing and the classifier's verdict
    (the verdict feeds the suggestions; the resolution only keeps what routing needs)."""

    def __init__(self) -> None:
        self.routing: ChannelRouting | None = None
        self.verdict: CascadeResult | None = None
        self.signal: str = ""


def turn_deps(
    conversation: Conversation,
    *,
    recorder: CallRecorder,
    context: dict[str, Any],
    seen: _Seen | None = None,
) -> ResolverDeps:
    org_settings = conversation.organization.settings
    state = seen if seen is not None else _Seen()
    sticky_id, _intent = _sticky(conversation)

    def routing(channel: ChannelSession) -> ChannelRouting:
        # The router, the channel's agent and the sticky agent's version stamp come from
        # one query, read once per turn.
        if state.routing is None:
            state.routing = load_channel_routing(channel, sticky_agent_id=sticky_id)
        return state.routing

    def classify(router: LoadedRouter, text: str) -> CascadeResult:
        state.signal = text
        state.verdict = classify_message(
            router, text, recorder=recorder, org_settings=org_settings, context=context
        )
        return state.verdict

    def agent_by_id(organization_id: uuid.UUID, agent_id: uuid.UUID) -> AgentConfig | None:
        cached = state.routing.sticky_agent if state.routing is not None else None
        if cached is not None and cached.agent_id == agent_id:
            return cached
        config = load_published_agent_config_by_id(organization_id, agent_id)
        remember_agent(config)
        return config

    return ResolverDeps(
        load_active_router=lambda channel: routing(channel).router,
        classify=classify,
        load_agent_by_id=agent_by_id,
        load_channel_agent=lambda channel: routing(channel).channel_agent,
    )


def route_turn(
    *,
    conversation: Conversation,
    turn: Turn | None,
    signal: str | None,
    recorder: CallRecorder,
) -> TurnAgentResolution:
    """Resolve this turn's agent and record the decision. Never raises."""
    context = {
        "organization_id": str(conversation.organization_id),
        "conversation_id": str(conversation.pk),
        "turn_id": str(turn.pk) if turn else None,
    }
    sticky_id, sticky_intent = _sticky(conversation)
    turn_input = TurnInput(
        channel=conversation.channel,
        signal=signal,
        sticky_agent_id=sticky_id,
        sticky_intent=sticky_intent or None,
    )
    seen = _Seen()
    deps = turn_deps(conversation, recorder=recorder, context=context, seen=seen)
    try:
        # A savepoint: a database error swallowed inside the resolver must not poison
        # the turn's transaction — only when there is one. Outside it (the turn's decide
        # step) no transaction may stay open across the classifier's model call: on SQLite
        # (IMMEDIATE) it would hold the write lock, on PostgreSQL a pooled connection.
        guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
        with guard:
            resolution = resolve_turn_agent(turn_input, deps)
    except DatabaseError:
        log.exception("router resolution rolled back", extra=context)
        # The router is known when its row was read: the failed turn is still its decision.
        known = seen.routing.router if seen.routing is not None else None
        resolution = TurnAgentResolution(
            config=_channel_agent(conversation),
            router_id=known.id if known is not None else None,
            intent_name=None,
            confidence=None,
            outcome="classifier_failed",
            error_code=UNEXPECTED_ERROR,
        )
    if resolution.router_id is not None:
        _record(conversation, turn, resolution)
        _suggest(conversation, seen)
    return resolution


def _suggest(conversation: Conversation, seen: _Seen) -> None:
    """An LLM verdict on a message the local stage was unsure of becomes a suggested
    phrase for an admin to accept or reject (DESIGN §10.5); nothing is learned here."""
    router = seen.routing.router if seen.routing is not None else None
    verdict = seen.verdict
    if router is None or verdict is None:
        return
    intent = suggested_intent(verdict, min_confidence=router.min_confidence)
    if intent is None:
        return
    try:
        with transaction.atomic():
            suggestion_record(
                router=router,
                text=seen.signal,
                intent_name=intent,
                confidence=verdict.confidence,
                local_intent=verdict.local_intent,
                local_confidence=verdict.local_confidence,
                conversation_id=conversation.pk,
            )
    except DatabaseError:
        log.warning(
            "router suggestion not recorded", extra={"conversation_id": str(conversation.pk)}
        )


def _channel_agent(conversation: Conversation) -> Any:
    try:
        return load_published_agent_config(conversation.channel)
    except DatabaseError:
        return None


def _record(conversation: Conversation, turn: Turn | None, resolution: TurnAgentResolution) -> None:
    """Stickiness and telemetry; a failure here is logged and the turn goes on."""
    try:
        with transaction.atomic():
            if resolution.error_code != UNEXPECTED_ERROR:
                _keep_sticky(conversation, resolution)
            RouterDecision.objects.create(
                organization_id=conversation.organization_id,
                router_id=resolution.router_id,
                conversation_id=conversation.pk,
                turn=turn,
                intent_name=(resolution.intent_name or "")[:60],
                confidence=resolution.confidence,
                agent_id=resolution.agent_id,
                outcome=resolution.outcome,
                stage=resolution.stage,
                latency_ms=resolution.latency_ms,
                error_code=resolution.error_code[:64],
                cue=resolution.cue,
            )
    except DatabaseError:
        log.warning(
            "router decision not recorded",
            extra={"conversation_id": str(conversation.pk), "outcome": resolution.outcome},
        )


def _sticky(conversation: Conversation) -> tuple[uuid.UUID | None, str]:
    """The conversation's sticky agent and subject, none when staff resolved (closed) the
    conversation after they were set: "Handoff/fechamento limpa a atribuição" (spec), and
    closing happens outside routing, so a reopened conversation is routed afresh here."""
    set_at, resolved_at = conversation.active_agent_set_at, conversation.resolved_at
    if resolved_at is not None and (set_at is None or set_at <= resolved_at):
        return None, ""
    return conversation.active_agent_id, conversation.active_intent


def _keep_sticky(conversation: Conversation, resolution: TurnAgentResolution) -> None:
    agent_id: uuid.UUID | None = resolution.agent_id
    if agent_id is None:
        return  # generic answer: nothing to stick to
    intent = (resolution.intent_name or "") if resolution.outcome in _SUBJECT_OUTCOMES else ""
    if _sticky(conversation) == (agent_id, intent):
        return  # still the same agent and subject: no write
    now = timezone.now()
    Conversation.objects.filter(pk=conversation.pk).update(
        active_agent_id=agent_id, active_intent=intent[:120], active_agent_set_at=now
    )
    conversation.active_agent_id = agent_id
    conversation.active_intent = intent[:120]
    conversation.active_agent_set_at = now
