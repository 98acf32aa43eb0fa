"""The classification test (intent-router Task 6): what the router would do with a message.
It records no decision; its model calls still land in the LlmCall ledger, since they cost
the same."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from accounts.models import Organization
from conversation import model_calls
from conversation.agents import load_published_agent_config_by_id
from routers.cascade_runner import classify_message
from routers.loaders import load_router
from routers.models import Router


@dataclass(frozen=True)
class RouterTestResult:
    """What the router would do with a message, without recording a decision."""

    intent_name: str | None
    confidence: float
    stage: str  # local | llm | none
    status: str  # ok | failed
    accepted: bool  # confident enough to route to the intent's agent
    agent_id: uuid.UUID | None
    agent_name: str
    uses_fallback: bool
    min_confidence: float
    error_code: str = ""

    @property
    def percent(self) -> int:
        return round(100 * self.confidence)


def router_classify_test(
    *, router: Router, organization: Organization, message: str
) -> RouterTestResult:
    """Classify ``message`` with the router's cascade and say which agent would answer."""
    loaded = load_router(router)
    ledger = model_calls.Ledger(
        organization_id=organization.pk, provider=model_calls.provider_name()
    )
    result = classify_message(
        loaded,
        message,
        recorder=ledger,
        org_settings=organization.settings,
        context={"organization_id": str(organization.pk), "purpose": "router_test"},
    )
    ledger.flush()
    accepted = (
        result.status == "ok"
        and result.intent is not None
        and result.confidence >= loaded.min_confidence
    )
    member = loaded.member_for_intent(result.intent) if accepted else None
    agent_id = member.agent_id if member else loaded.fallback_agent_id
    agent = load_published_agent_config_by_id(organization.pk, agent_id) if agent_id else None
    return RouterTestResult(
        intent_name=result.intent,
        confidence=result.confidence,
        stage=result.stage,
        status=result.status,
        accepted=member is not None,
        agent_id=agent.agent_id if agent else None,
        agent_name=agent.name if agent else "",
        uses_fallback=member is None and agent is not None,
        min_confidence=loaded.min_confidence,
        error_code=result.error_code,
    )
