"""Factories for the shared tenant world: org A (admin, manager, agent, viewer) and org B."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from django.contrib.auth import get_user_model

from accounts.models import Membership, Organization
from conversation.models import (
    Agent,
    AgentVersion,
    ChannelSession,
    Contact,
    Conversation,
    Direction,
    KnowledgeDocument,
    Message,
    MessageStatus,
    SenderKind,
    Turn,
)

_seq = itertools.count(1)
PASSWORD = "senha-de-teste-123"


def make_org(name: str = "Org") -> Organization:
    n = next(_seq)
    return Organization.objects.create(name=f"{name} {n}", slug=f"org-{n}")


def make_user(org: Organization, role: str, username: str | None = None) -> Any:
    user = get_user_model().objects.create_user(
        username=username or f"{role}-{next(_seq)}", password=PASSWORD
    )
    Membership.objects.create(organization=org, user=user, role=role)
    return user


def make_agent(org: Organization, name: str = "Suporte", **version: Any) -> Agent:
    agent = Agent.objects.create(organization=org, name=name)
    fields = {"prompt": f"Você atende como {name}.", "provider": "offline", **version}
    v = AgentVersion.objects.create(organization=org, agent=agent, number=1, **fields)
    agent.published_version = v
    agent.save(update_fields=["published_version"])
    return agent


def make_channel(
    org: Organization, provider: str = "simulator", agent: Agent | None = None, **fields: Any
) -> ChannelSession:
    defaults = {"name": f"Canal {next(_seq)}", "webhook_secret": "segredo-do-canal"}
    defaults.update(fields)
    return ChannelSession.objects.create(
        organization=org, provider=provider, agent=agent, **defaults
    )


def make_conversation(channel: ChannelSession, phone: str = "5511988887777") -> Conversation:
    contact, _ = Contact.objects.get_or_create(organization=channel.organization, phone=phone)
    return Conversation.objects.create(
        organization=channel.organization, channel=channel, contact=contact
    )


def make_message(conversation: Conversation, body: str = "oi", **fields: Any) -> Message:
    defaults: dict[str, Any] = {
        "direction": Direction.INBOUND,
        "sender_kind": SenderKind.CUSTOMER,
        "status": MessageStatus.RECEIVED,
    }
    defaults.update(fields)
    return Message.objects.create(
        organization=conversation.organization,
        conversation=conversation,
        channel=conversation.channel,
        body=body,
        **defaults,
    )


def make_turn(conversation: Conversation, **fields: Any) -> Turn:
    """A finished inbound turn of ``conversation`` (a unique trigger key per row)."""
    defaults: dict[str, Any] = {
        "trigger_kind": "inbound_message",
        "trigger_key": f"k-{uuid.uuid4().hex}",
        "status": "done",
        "outcome": "replied",
        "latency_ms": 30,
    }
    defaults.update(fields)
    return Turn.objects.create(
        organization=conversation.organization, conversation=conversation, **defaults
    )


def make_document(org: Organization, title: str, body: str) -> KnowledgeDocument:
    return KnowledgeDocument.objects.create(organization=org, title=title, body=body)
