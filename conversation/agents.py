"""Reading an agent's published configuration (selectors).

``load_published_agent_config`` (by channel) and ``load_published_agent_config_by_id``
(by agent, used by the router for its members) share one mapping, so the two paths
can never disagree about what an agent is.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date

from django.conf import settings

from conversation.llm.catalog import choosable_models, enabled_models
from conversation.models import Agent, AgentVersion, ChannelSession


@dataclass(frozen=True)
class AgentConfig:
    agent_id: uuid.UUID | None  # None: the generic platform agent (no agent configured)
    version_id: uuid.UUID | None
    name: str
    prompt: str
    provider: str
    model: str
    max_steps: int
    history_window: int
    handoff_keywords: tuple[str, ...]
    handoff_tool_enabled: bool
    cases_enabled: bool
    runtime_profile: str
    runtime_mode: str
    # What the turn does when the model stays down (LlmUnavailableAction; DESIGN §10.4).
    llm_unavailable_action: str = "handoff"


def agent_config_from_version(agent: Agent, version: AgentVersion) -> AgentConfig:
    return AgentConfig(
        agent_id=agent.pk,
        version_id=version.pk,
        name=agent.name,
        prompt=version.prompt,
        provider=version.provider,
        model=version.model,
        max_steps=version.max_steps,
        history_window=version.history_window,
        handoff_keywords=tuple(str(k) for k in version.handoff_keywords or ()),
        handoff_tool_enabled=version.handoff_tool_enabled,
        cases_enabled=version.cases_enabled,
        runtime_profile=version.runtime_profile,
        runtime_mode=version.runtime_mode,
        llm_unavailable_action=version.llm_unavailable_action,
    )


def generic_model(org_settings: object = None) -> str:
    """The generic assistant's model within the organization's LLM settings:
    ``settings["llm"]["default_model"]`` when it is enabled, else the platform default when
    enabled, else the first enabled model the SDK still serves (routers issue 13: the
    generic agent used the platform default even where the organization disabled it)."""
    allowed = enabled_models(org_settings)
    llm = org_settings.get("llm") if isinstance(org_settings, dict) else None
    preferred = llm.get("default_model") if isinstance(llm, dict) else None
    for model in (preferred, settings.ANTHROPIC_DEFAULT_MODEL):
        if isinstance(model, str) and model and (allowed is None or model in allowed):
            return model
    choosable = choosable_models(org_settings, date.today())
    if choosable:
        return choosable[0][0]
    return sorted(allowed)[0] if allowed else settings.ANTHROPIC_DEFAULT_MODEL


def generic_agent_config(organization_name: str, org_settings: object = None) -> AgentConfig:
    """No agent for this turn: answer with the platform's generic assistant, on a model
    the organization's LLM settings allow."""
    return AgentConfig(
        agent_id=None,
        version_id=None,
        name="Assistente",
        prompt=(
            f"Você é o assistente virtual de {organization_name}. Responda em português do "
            "Brasil, com cordialidade e objetividade, usando a base de conhecimento."
        ),
        provider="anthropic",
        model=generic_model(org_settings),
        max_steps=4,
        history_window=20,
        handoff_keywords=(),
        handoff_tool_enabled=True,
        cases_enabled=False,
        runtime_profile="",
        runtime_mode="off",
    )


def load_published_agent_config(channel: ChannelSession) -> AgentConfig | None:
    """The channel's agent, as published. One query."""
    if channel.agent_id is None:
        return None
    return load_published_agent_config_by_id(channel.organization_id, channel.agent_id)


def load_published_agent_config_by_id(
    organization_id: uuid.UUID, agent_id: uuid.UUID
) -> AgentConfig | None:
    agent = (
        Agent.objects.filter(organization_id=organization_id, pk=agent_id)
        .select_related("published_version")
        .first()
    )
    if agent is None or agent.published_version is None:
        return None
    return agent_config_from_version(agent, agent.published_version)
