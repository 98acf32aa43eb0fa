"""``resolve_turn_agent``: which agent answers a turn (intent-router Task 4).

The decision, exactly as the spec orders it:

1. No active router on the channel → the channel's published agent (``no_router``).
2. Router with stickiness on, and the conversation's agent is still one of its members:
   classify anyway (that is how a change of subject is noticed). Another intent with
   confidence ≥ ``min_confidence`` → that intent's agent (``reclassified``); anything else
   → keep the conversation's agent (``sticky``, with the verdict's confidence). Two cues of
   the message's own words refine it (``stickiness.subject_move``): a follow-up that names
   no subject ("quanto custa?") stays with a conversation that has one, and is not even
   classified (no verdict could move it); one that opens with "outra coisa" /
   "aproveitando" moves from a lower confidence.
3. No sticky agent: an intent with confidence ≥ ``min_confidence`` → its agent
   (``classified``).
4. The classifier failed → the fallback agent (``classifier_failed``; generic without one).
5. No intent, or not confident enough → the fallback agent (``fallback``), else no agent
   at all (``no_match``: the turn answers with the generic assistant).
6. No signal (a turn not triggered by a customer message) → never classify: the sticky
   agent (the conversation's, while a member, stickiness on or off), else the fallback,
   else generic.

An unexpected error anywhere in the router path answers with the channel's agent and
outcome ``classifier_failed``: routing never takes a turn down.

The loaders and the classifier are injected (``ResolverDeps``) so the rule is tested
without a database or a model.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from conversation.agents import AgentConfig
from conversation.models import ChannelSession
from routers.classification import CascadeResult
from routers.classification.stickiness import NO_SUBJECT, keeps_subject_unread, subject_move
from routers.loaders import LoadedRouter

log = logging.getLogger(__name__)

Outcome = Literal[
    "no_router", "classified", "sticky", "reclassified", "fallback", "no_match", "classifier_failed"
]
UNEXPECTED_ERROR = "unexpected_error"


@dataclass(frozen=True)
class TurnAgentResolution:
    config: AgentConfig | None  # None: the turn answers with the generic assistant
    router_id: uuid.UUID | None
    intent_name: str | None
    confidence: float | None
    outcome: Outcome
    stage: str = "none"  # local | llm | none: who decided the classification
    latency_ms: int = 0
    error_code: str = ""
    # The change-of-subject cue that decided a sticky or reclassified turn against rule 2
    # alone (stickiness.NO_SUBJECT / OPENER), "" when rule 2 decided.
    cue: str = ""

    @property
    def agent_id(self) -> uuid.UUID | None:
        return self.config.agent_id if self.config is not None else None

    def trace(self) -> dict[str, Any]:
        """The routing decision for the turn's trace: ids and codes, never text."""
        if self.router_id is None and self.outcome == "no_router":
            return {"source": "channel" if self.config is not None else "generic"}
        data: dict[str, Any] = {
            "source": "router",
            "router_id": str(self.router_id) if self.router_id else None,
            "outcome": self.outcome,
            "intent": self.intent_name,
            "confidence": None if self.confidence is None else round(self.confidence, 3),
            "stage": self.stage,
            "agent_id": str(self.agent_id) if self.agent_id else None,
            "latency_ms": self.latency_ms,
        }
        if self.cue:
            data["cue"] = self.cue
        if self.error_code:
            data["error"] = self.error_code
        return data


@dataclass(frozen=True)
class TurnInput:
    channel: ChannelSession
    signal: str | None  # the customer's text this turn answers; None: nothing to classify
    sticky_agent_id: uuid.UUID | None  # Conversation.active_agent
    sticky_intent: str | None  # Conversation.active_intent ("" and None alike)


@dataclass(frozen=True)
class ResolverDeps:
    load_active_router: Callable[[ChannelSession], LoadedRouter | None]
    classify: Callable[[LoadedRouter, str], CascadeResult]
    load_agent_by_id: Callable[[uuid.UUID, uuid.UUID], AgentConfig | None]
    load_channel_agent: Callable[[ChannelSession], AgentConfig | None]


def resolve_turn_agent(turn: TurnInput, deps: ResolverDeps) -> TurnAgentResolution:
    """The agent for this turn and why. Never raises."""
    started = time.monotonic()
    router: LoadedRouter | None = None
    try:
        router = deps.load_active_router(turn.channel)
        if router is None:
            return TurnAgentResolution(
                config=deps.load_channel_agent(turn.channel),
                router_id=None,
                intent_name=None,
                confidence=None,
                outcome="no_router",
            )
        return _Route(router, turn, deps, started).decide()
    except Exception:
        log.exception(
            "router resolution failed",
            extra={
                "channel_id": str(turn.channel.pk),
                "router_id": str(router.id) if router else None,
            },
        )
        return TurnAgentResolution(
            config=_safe_channel_agent(turn.channel, deps),
            router_id=router.id if router else None,
            intent_name=None,
            confidence=None,
            outcome="classifier_failed",
            latency_ms=_ms(started),
            error_code=UNEXPECTED_ERROR,
        )


def _safe_channel_agent(channel: ChannelSession, deps: ResolverDeps) -> AgentConfig | None:
    try:
        return deps.load_channel_agent(channel)
    except Exception:
        log.exception("channel agent unavailable", extra={"channel_id": str(channel.pk)})
        return None


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


class _Route:
    """One pass of the decision rule over a router (kept as a class so each rule reads
    as one short method)."""

    def __init__(
        self, router: LoadedRouter, turn: TurnInput, deps: ResolverDeps, started: float
    ) -> None:
        self.router, self.turn, self.deps, self.started = router, turn, deps, started
        self.verdict: CascadeResult | None = None

    def decide(self) -> TurnAgentResolution:
        router, turn = self.router, self.turn
        # The conversation's agent, while it is still one of the router's; rule 2 sticks
        # to it only on a sticky router, rule 6 ("sticky se houver") on any.
        current_id = turn.sticky_agent_id if router.has_agent(turn.sticky_agent_id) else None
        sticky_id = current_id if router.sticky else None
        sticky_intent = turn.sticky_intent or None
        signal = (turn.signal or "").strip()

        if not signal:  # rule 6: never classify
            if current_id is not None:
                config = self._agent(current_id)
                if config is not None:
                    return self._result(config, "sticky", sticky_intent, None)
            return self._fallback("fallback")

        if sticky_id is not None and sticky_intent is not None and keeps_subject_unread(signal):
            # Rule 2 with its cue: no verdict can move this follow-up, so none is asked for
            # (no encoder pass, no model call; nothing to learn from a text that means
            # something only after the previous one). Without a subject on the table (the
            # agent came from a fallback) the message is the first subject: classified.
            config = self._agent(sticky_id)
            if config is not None:
                return self._result(config, "sticky", sticky_intent, None, NO_SUBJECT)

        verdict = self.verdict = self.deps.classify(router, signal)
        accepted = (
            verdict.status == "ok"
            and verdict.intent is not None
            and verdict.confidence >= router.min_confidence
        )
        if sticky_id is not None:  # rule 2
            moved, cue = (
                subject_move(
                    signal,
                    verdict.intent,
                    verdict.confidence,
                    sticky_intent=sticky_intent,
                    min_confidence=router.min_confidence,
                )
                if verdict.status == "ok"
                else (False, "")
            )
            if moved and verdict.intent is not None:
                switched = self._member_agent(verdict.intent)
                if switched is not None:
                    return self._result(
                        switched, "reclassified", verdict.intent, verdict.confidence, cue
                    )
            config = self._agent(sticky_id)
            if config is not None:
                return self._result(config, "sticky", sticky_intent, verdict.confidence, cue)
            # The sticky agent lost its published version: decide as if not sticky.

        if verdict.status == "failed":  # rule 4
            return self._fallback("classifier_failed")
        if accepted:  # rule 3
            config = self._member_agent(verdict.intent)
            if config is not None:
                return self._result(config, "classified", verdict.intent, verdict.confidence)
        return self._fallback("fallback")  # rule 5

    def _agent(self, agent_id: uuid.UUID | None) -> AgentConfig | None:
        if agent_id is None:
            return None
        return self.deps.load_agent_by_id(self.router.organization_id, agent_id)

    def _member_agent(self, intent_name: str | None) -> AgentConfig | None:
        member = self.router.member_for_intent(intent_name)
        return self._agent(member.agent_id) if member is not None else None

    def _fallback(self, outcome: Outcome) -> TurnAgentResolution:
        config = self._agent(self.router.fallback_agent_id)
        verdict = self.verdict
        intent = verdict.intent if verdict is not None else None
        confidence = verdict.confidence if verdict is not None else None
        if outcome == "fallback" and config is None:
            outcome = "no_match"
        # The intent is kept for telemetry (what the classifier thought), not for routing.
        return self._result(config, outcome, intent, confidence)

    def _result(
        self,
        config: AgentConfig | None,
        outcome: Outcome,
        intent_name: str | None,
        confidence: float | None,
        cue: str = "",
    ) -> TurnAgentResolution:
        verdict = self.verdict
        return TurnAgentResolution(
            cue=cue,
            config=config,
            router_id=self.router.id,
            intent_name=intent_name,
            confidence=confidence,
            outcome=outcome,
            stage=verdict.stage if verdict is not None else "none",
            latency_ms=_ms(self.started),
            error_code=verdict.error_code if verdict is not None else "",
        )
