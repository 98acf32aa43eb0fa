"""Review r31: staff resolving a conversation ends the router's agent assignment.

Spec (intent-router, global constraints): "stickiness = ... a conversa guarda o agente
escolhido ... Handoff/fechamento limpa a atribuição." A handoff clears
``active_agent``/``active_intent``/``active_agent_set_at``; resolving (closing) must too, so
nothing read after the resolve (the list's agent, its agent filter) still names the agent of
the closed subject, and the audit row says which assignment the resolve ended."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from accounts.models import AuditLog
from conversation.models import Conversation, Turn
from inbox import services
from tests import factories
from tests.conftest import simulator_post
from tests.routers.factories import SUPORTE, VENDAS, make_router

PHONE = "5511955554444"


@pytest.fixture
def routed(world, django_capture_on_commit_callbacks) -> dict[str, Any]:
    """A conversation a real turn routed to the support agent (channel agent: Recepção)."""
    recepcao = factories.make_agent(world.org_a, "Recepção")
    vendas = factories.make_agent(world.org_a, "Vendas")
    suporte = factories.make_agent(world.org_a, "Suporte técnico")
    channel = factories.make_channel(world.org_a, agent=recepcao)
    make_router(channel, [(vendas, VENDAS), (suporte, SUPORTE)])
    with django_capture_on_commit_callbacks(execute=True):
        response = simulator_post(
            Client(), channel, "meu sistema não abre, está dando erro", msg_id="r31-1", phone=PHONE
        )
    assert response.status_code == 200
    conversation = Conversation.objects.get(channel=channel)
    assert conversation.active_agent_id == suporte.pk  # the router's choice, sticky
    assert Turn.objects.filter(conversation=conversation).count() == 1
    return {"conversation": conversation, "suporte": suporte, "recepcao": recepcao}


def test_resolving_clears_the_conversations_sticky_agent(world, routed):
    conversation = routed["conversation"]

    services.conversation_resolve(conversation=conversation, actor=world.agent)

    conversation.refresh_from_db()
    assert conversation.status == "closed"
    assert conversation.active_agent_id is None
    assert conversation.active_intent == ""
    assert conversation.active_agent_set_at is None


def test_the_resolve_audit_row_names_the_assignment_it_ended(world, routed):
    conversation = routed["conversation"]

    services.conversation_resolve(conversation=conversation, actor=world.agent)

    diff = AuditLog.objects.get(action="conversation.resolve").diff
    assert diff["status"] == ["ai_handling", "closed"]
    assert diff["active_agent"] == [str(routed["suporte"].pk), None]
    assert diff["active_intent"] == ["suporte", ""]


def test_a_resolve_of_a_conversation_no_router_assigned_records_no_assignment(world):
    conversation = factories.make_conversation(world.channel_a, phone=PHONE)

    services.conversation_resolve(conversation=conversation, actor=world.agent)

    diff = AuditLog.objects.get(action="conversation.resolve").diff
    assert "active_agent" not in diff and "active_intent" not in diff


def test_the_list_no_longer_files_a_resolved_conversation_under_the_routed_agent(world, routed):
    conversation = routed["conversation"]
    client = world.client_for(world.viewer)
    by_support = f"/?status=closed&agente={routed['suporte'].pk}"

    services.conversation_resolve(conversation=conversation, actor=world.agent)

    # The list's agent is "the agent that answers now": after the resolve the next message
    # is routed afresh, so the support agent no longer answers this conversation.
    html = client.get(by_support).content.decode()
    assert f"conversation-row-{conversation.pk}" not in html
