"""Assignment: to a member or to the team, on take-over, audited, never across orgs."""

from __future__ import annotations

import pytest

from accounts.models import AuditLog
from conversation.models import Conversation, Handoff
from inbox import services
from tests.inbox.conftest import conversation_with, membership_of


def test_assign_gives_the_conversation_to_a_member_and_audits_it(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001")
    agent = membership_of(world.agent)

    services.conversation_assign(conversation=conversation, assignee=agent, actor=world.admin)

    assert Conversation.objects.get(pk=conversation.pk).assigned_to == agent
    row = AuditLog.objects.get(action="conversation.assign")
    assert row.actor == world.admin and row.resource_id == str(conversation.pk)
    assert row.diff["assigned_to"] == [None, str(agent.pk)]


def test_assign_to_nobody_hands_it_back_to_the_team(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001")
    services.conversation_assign(
        conversation=conversation, assignee=membership_of(world.agent), actor=world.admin
    )
    services.conversation_assign(conversation=conversation, assignee=None, actor=world.admin)
    assert Conversation.objects.get(pk=conversation.pk).assigned_to is None
    assert AuditLog.objects.filter(action="conversation.assign").count() == 2


def test_assign_to_the_same_member_writes_nothing(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001")
    agent = membership_of(world.agent)
    services.conversation_assign(conversation=conversation, assignee=agent, actor=world.admin)
    services.conversation_assign(conversation=conversation, assignee=agent, actor=world.admin)
    assert AuditLog.objects.filter(action="conversation.assign").count() == 1


def test_assign_refuses_a_member_of_another_org_and_a_viewer(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001")
    for who in (world.outsider, world.viewer):
        with pytest.raises(services.InboxError):
            services.conversation_assign(
                conversation=conversation, assignee=membership_of(who), actor=world.admin
            )
    assert Conversation.objects.get(pk=conversation.pk).assigned_to is None
    assert not AuditLog.objects.filter(action="conversation.assign").exists()


def test_assign_page_posts_a_member_and_returns_the_panel(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001")
    manager = membership_of(world.manager)
    response = world.client_for(world.agent).post(
        f"/caixa/conversas/{conversation.pk}/responsavel/",
        {"responsavel": str(manager.pk)},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert 'id="inbox-panel"' in response.content.decode()
    assert Conversation.objects.get(pk=conversation.pk).assigned_to == manager


def test_assign_page_ignores_a_member_of_another_org(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001")
    response = world.client_for(world.agent).post(
        f"/caixa/conversas/{conversation.pk}/responsavel/",
        {"responsavel": str(membership_of(world.outsider).pk)},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert Conversation.objects.get(pk=conversation.pk).assigned_to is None


def test_assign_page_refuses_a_viewer(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001")
    response = world.client_for(world.viewer).post(f"/caixa/conversas/{conversation.pk}/para-mim/")
    assert response.status_code == 403
    assert Conversation.objects.get(pk=conversation.pk).assigned_to is None


def test_assign_me_of_another_org_is_404(world):
    theirs = conversation_with(world.channel_b, phone="5511900000001")
    response = world.client_for(world.agent).post(f"/caixa/conversas/{theirs.pk}/para-mim/")
    assert response.status_code == 404
    assert Conversation.objects.get(pk=theirs.pk).assigned_to is None


def test_take_over_assigns_the_conversation_to_who_took_it(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001", text="oi")
    response = world.client_for(world.agent).post(f"/conversas/{conversation.pk}/assumir/")
    assert response.status_code == 302
    conversation.refresh_from_db()
    assert conversation.assigned_to == membership_of(world.agent)
    assert conversation.status == "pending"
    assert Handoff.objects.filter(conversation=conversation, status="open").exists()
    actions = set(AuditLog.objects.values_list("action", flat=True))
    assert {"handoff.perform", "conversation.assign"} <= actions


def test_an_ai_handoff_stays_with_the_team(world):
    from conversation.handoff import perform_human_handoff

    conversation = conversation_with(world.channel_a, phone="5511900000001", text="oi")
    perform_human_handoff(conversation=conversation, reason_code="requested_human")
    assert Conversation.objects.get(pk=conversation.pk).assigned_to is None
