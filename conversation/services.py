"""Writes of the conversation app that people make through pages, API and admin:
agents and their versions, channels, the knowledge base. Each is one transaction
with an AuditLog row."""

from __future__ import annotations

import secrets
from typing import Any

from django.db import transaction
from django.db.models import Max

from accounts.models import Organization
from accounts.services import audit_log_write
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
)


def agent_create(
    *, organization: Organization, name: str, actor: Any, publish: bool = True, **version: Any
) -> Agent:
    with transaction.atomic():
        agent = Agent.objects.create(organization=organization, name=name)
        audit_log_write(
            organization=organization,
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
            organization=agent.organization_id,
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
            organization=agent.organization_id,
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
            organization=organization,
            actor=actor,
            action="channel.create",
            resource=channel,
            diff={"name": name, "provider": provider, **fields},
        )
    return channel


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
    with transaction.atomic():
        audit_log_write(
            organization=document.organization_id,
            actor=actor,
            action="knowledge.delete",
            resource=document,
            diff={"title": document.title},
        )
        document.delete()
