"""Writes of the conversation app that people make through pages, API and admin:
agents and their versions, channels, the knowledge base. Each is one transaction
with an AuditLog row."""

from __future__ import annotations

import secrets
from typing import Any

from django.db import transaction
from django.db.models import Max

from accounts.models import Organization
from accounts.services import audit_log_write, audited_delete
from conversation.models import Agent, AgentVersion, ChannelSession, KnowledgeDocument

VERSION_FIELDS = (
    "prompt",
    "provider",
    "model",
    "max_steps",
    "history_window",
    "handoff_keywords",
    "handoff_tool_enabled",
    "cases_enabled",
    "runtime_profile",
    "runtime_mode",
    "llm_unavailable_action",
)

_UNSET: Any = object()  # "not given", where None is a value (no agent)


def agent_create(
    *, organization: Organization, name: str, actor: Any, publish: bool = True, **version: Any
) -> Agent:
    with transaction.atomic():
        agent = Agent.objects.create(organization=organization, name=name)
        audit_log_write(
            actor=actor,
            action="agent.create",
            resource=agent,
            diff={"name": name},
        )
        created = agent_version_create(agent=agent, actor=actor, **version)
        if publish:
            agent_publish(agent=agent, version=created, actor=actor)
    return agent


def agent_version_create(*, agent: Agent, actor: Any, **fields: Any) -> AgentVersion:
    """Editing an agent = a new immutable version (unpublished until ``agent_publish``).
    Fields not given are carried over from the latest version."""
    unknown = set(fields) - set(VERSION_FIELDS)
    if unknown:
        raise ValueError(f"unknown agent version fields: {sorted(unknown)}")
    with transaction.atomic():
        Agent.objects.select_for_update().filter(pk=agent.pk).first()  # serialize numbering
        latest = agent.versions.order_by("-number").first()
        base = {f: getattr(latest, f) for f in VERSION_FIELDS} if latest else {}
        base.update(fields)
        number = (agent.versions.aggregate(n=Max("number"))["n"] or 0) + 1
        version = AgentVersion.objects.create(
            organization_id=agent.organization_id,
            agent=agent,
            number=number,
            created_by=actor if getattr(actor, "is_authenticated", False) else None,
            **base,
        )
        changed = [f for f in VERSION_FIELDS if getattr(latest, f, None) != getattr(version, f)]
        audit_log_write(
            actor=actor,
            action="agent.version_create",
            resource=version,
            diff={"number": number, "changed": changed},
        )
    return version


def agent_publish(*, agent: Agent, version: AgentVersion, actor: Any) -> Agent:
    """Move the agent's pointer; the next turn uses the new version."""
    if version.agent_id != agent.pk:
        raise ValueError("version belongs to another agent")
    with transaction.atomic():
        previous = agent.published_version_id
        agent.published_version = version
        agent.save(update_fields=["published_version"])
        audit_log_write(
            actor=actor,
            action="agent.publish",
            resource=agent,
            diff={"from": str(previous) if previous else None, "to": str(version.pk)},
        )
    return agent


def channel_create(
    *, organization: Organization, name: str, provider: str, actor: Any, **fields: Any
) -> ChannelSession:
    with transaction.atomic():
        fields.setdefault("webhook_secret", secrets.token_urlsafe(24))
        channel = ChannelSession.objects.create(
            organization=organization, name=name, provider=provider, **fields
        )
        audit_log_write(
            actor=actor,
            action="channel.create",
            resource=channel,
            diff={"name": name, "provider": provider, **fields},
        )
    return channel


# Channel settings the pages change; the three secrets are in ``CHANNEL_SECRETS``: a blank
# value given for one of them means "keep the stored one" (a page never shows it back).
CHANNEL_SETTINGS = ("name", "external_id", "phone_number", "business_account_id", "api_base_url")
CHANNEL_SECRETS = ("api_token", "webhook_secret", "webhook_verify_token")


def channel_update(
    *,
    channel: ChannelSession,
    actor: Any,
    name: str = "",
    agent: Agent | None = _UNSET,
    **fields: Any,
) -> ChannelSession:
    """Change the settings, secrets and agent given (a blank ``name`` keeps the name); the
    audit diff names the changed fields, never a secret's value."""
    if name.strip():
        fields["name"] = name
    unknown = set(fields) - set(CHANNEL_SETTINGS) - set(CHANNEL_SECRETS)
    if unknown:
        raise ValueError(f"unknown channel fields: {sorted(unknown)}")
    if isinstance(agent, Agent) and agent.organization_id != channel.organization_id:
        raise ValueError("agent of another organization")
    with transaction.atomic():
        diff: dict[str, Any] = {}
        for name, value in fields.items():
            value = str(value or "").strip()
            if name in CHANNEL_SECRETS:
                if value and value != getattr(channel, name):
                    setattr(channel, name, value)
                    diff[name] = "changed"  # masked by audit_log_write as well
            elif value != getattr(channel, name):
                diff[name] = {"from": getattr(channel, name), "to": value}
                setattr(channel, name, value)
        if agent is not _UNSET and getattr(agent, "pk", None) != channel.agent_id:
            diff["agent_id"] = {
                "from": str(channel.agent_id) if channel.agent_id else None,
                "to": str(agent.pk) if isinstance(agent, Agent) else None,
            }
            channel.agent = agent if isinstance(agent, Agent) else None
        if not diff:
            return channel
        updated = [k if k != "agent_id" else "agent" for k in diff]
        channel.save(update_fields=updated)
        audit_log_write(
            actor=actor,
            action="channel.update",
            resource=channel,
            diff={"changed": sorted(updated)},
        )
    return channel


def channel_set_active(*, channel: ChannelSession, actor: Any, is_active: bool) -> ChannelSession:
    """An inactive channel refuses its webhooks (404) and sends nothing."""
    with transaction.atomic():
        if channel.is_active == bool(is_active):
            return channel
        channel.is_active = bool(is_active)
        channel.save(update_fields=["is_active"])
        audit_log_write(
            actor=actor,
            action="channel.activate" if is_active else "channel.deactivate",
            resource=channel,
            diff={"is_active": channel.is_active},
        )
    return channel


def channel_new_webhook_secret(*, channel: ChannelSession, actor: Any) -> str:
    """A new secret the provider must be given, returned once for the page to show.

    WAHA and the simulator: the webhook HMAC key. Meta signs with the app secret (the
    admin types it), so for Meta this is the subscription's verify token."""
    field = "webhook_verify_token" if channel.provider == "meta" else "webhook_secret"
    secret = secrets.token_urlsafe(32)
    with transaction.atomic():
        setattr(channel, field, secret)
        channel.save(update_fields=[field])
        audit_log_write(
            actor=actor,
            action="channel.secret_rotate",
            resource=channel,
            diff={"field": field},
        )
    return secret


def knowledge_document_save(
    *,
    organization: Organization,
    actor: Any,
    title: str,
    body: str,
    document: KnowledgeDocument | None = None,
    is_active: bool = True,
) -> KnowledgeDocument:
    with transaction.atomic():
        if document is None:
            document = KnowledgeDocument.objects.create(
                organization=organization, title=title, body=body, is_active=is_active
            )
            action = "knowledge.create"
        else:
            document.title, document.body, document.is_active = title, body, is_active
            document.save(update_fields=["title", "body", "is_active", "updated_at"])
            action = "knowledge.update"
        audit_log_write(
            organization=organization,
            actor=actor,
            action=action,
            resource=document,
            diff={"title": title, "is_active": is_active},
        )
    return document


def knowledge_document_delete(*, document: KnowledgeDocument, actor: Any) -> None:
    audited_delete(document, actor=actor, action="knowledge.delete", diff={"title": document.title})
