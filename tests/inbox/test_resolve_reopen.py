"""Resolve and reopen: staff resolve a conversation (it closes, its follow-ups and open
cases cancel through the registered ``closed`` hook, the runtime dialogue closes, an open
handoff goes back to the AI); the customer writing again reopens the same conversation."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from accounts.models import AuditLog
from cases.models import Case, CaseFollowUp
from conversation.handoff import perform_human_handoff
from conversation.models import Contact, Conversation, Handoff
from conversation.runtime import ConversationState, deserialize_state, serialize_state
from conversation.runtime.state import Channel
from conversation.runtime.state import ConversationStatus as RuntimeStatus
from inbox import services
from tests.cases.conftest import enable_cases, open_case
from tests.conftest import simulator_post
from tests.inbox.conftest import conversation_with

PHONE = "5511977776666"


def _resolve(world, conversation):
    return services.conversation_resolve(conversation=conversation, actor=world.agent)


def test_resolve_closes_the_conversation_and_audits_it(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    _resolve(world, conversation)
    conversation.refresh_from_db()
    assert conversation.status == "closed"
    assert conversation.resolved_by == world.agent and conversation.resolved_at is not None
    row = AuditLog.objects.get(action="conversation.resolve")
    assert row.actor == world.agent and row.diff["status"] == ["ai_handling", "closed"]


def test_resolve_cancels_pending_follow_ups_and_open_cases_through_the_hook(world):
    enable_cases(world.agent_a)
    conversation = conversation_with(world.channel_a, phone=PHONE, text="Quero reembolso")
    case = open_case(conversation)
    follow_up = CaseFollowUp.objects.create(
        organization=world.org_a,
        case=case,
        conversation=conversation,
        due_at=timezone.now() + timedelta(hours=1),
    )

    _resolve(world, conversation)

    follow_up.refresh_from_db()
    assert (follow_up.status, follow_up.cancel_reason) == ("cancelled", "closed")
    assert Case.objects.get(pk=case.pk).status == "cancelled"
    assert AuditLog.objects.get(action="conversation.resolve").diff["followups_cancelled"] == 1


def test_resolve_closes_the_runtime_dialogue(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    state = ConversationState(session_id=str(conversation.pk), channel=Channel.TEXT)
    Conversation.objects.filter(pk=conversation.pk).update(
        runtime_state={"live": serialize_state(state)}
    )
    conversation.refresh_from_db()

    _resolve(world, conversation)

    conversation.refresh_from_db()
    assert deserialize_state(conversation.runtime_state["live"]).status is RuntimeStatus.CLOSED


def test_resolve_drops_a_runtime_state_that_does_not_restore(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    Conversation.objects.filter(pk=conversation.pk).update(runtime_state={"live": "garbage"})
    conversation.refresh_from_db()
    _resolve(world, conversation)
    conversation.refresh_from_db()
    assert conversation.status == "closed" and conversation.runtime_state is None


def test_resolve_gives_an_open_handoff_back_to_the_ai(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    handoff = perform_human_handoff(conversation=conversation, reason_code="requested_human")
    conversation.refresh_from_db()

    _resolve(world, conversation)

    handoff.refresh_from_db()
    conversation.refresh_from_db()
    assert handoff.status == "returned"
    assert not Contact.objects.get(pk=conversation.contact_id).force_human
    assert conversation.bot_silenced_until is None and conversation.status == "closed"


def test_resolving_twice_writes_one_audit_row(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    _resolve(world, conversation)
    _resolve(world, Conversation.objects.get(pk=conversation.pk))
    assert AuditLog.objects.filter(action="conversation.resolve").count() == 1


def test_a_new_customer_message_reopens_the_resolved_conversation(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi", assigned_to=None)
    _resolve(world, conversation)

    response = simulator_post(
        world.client_for(world.admin), world.channel_a, "voltei", msg_id="m2", phone=PHONE
    )

    assert response.status_code == 200
    conversation.refresh_from_db()
    assert conversation.status == "ai_handling"
    assert Conversation.objects.filter(contact=conversation.contact).count() == 1
    assert conversation.messages.filter(body="voltei").exists()
    row = AuditLog.objects.get(action="conversation.reopen")
    assert row.actor_kind == "system" and row.diff["status"] == ["closed", "ai_handling"]


def test_a_reopened_conversation_keeps_its_assignee(world):
    from tests.inbox.conftest import membership_of

    agent = membership_of(world.agent)
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi", assigned_to=agent)
    _resolve(world, conversation)
    simulator_post(
        world.client_for(world.admin), world.channel_a, "voltei", msg_id="m2", phone=PHONE
    )
    assert Conversation.objects.get(pk=conversation.pk).assigned_to == agent


def test_a_human_only_contact_reopens_to_the_team(world, django_capture_on_commit_callbacks):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    _resolve(world, conversation)
    Contact.objects.filter(pk=conversation.contact_id).update(force_human=True)

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(
            world.client_for(world.admin), world.channel_a, "voltei", msg_id="m2", phone=PHONE
        )

    conversation.refresh_from_db()
    assert conversation.status == "pending"
    assert Handoff.objects.filter(conversation=conversation, status="open").exists()


def test_a_closed_conversation_nobody_resolved_is_not_reopened(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    Conversation.objects.filter(pk=conversation.pk).update(status="closed")

    simulator_post(
        world.client_for(world.admin), world.channel_a, "voltei", msg_id="m2", phone=PHONE
    )

    assert Conversation.objects.get(pk=conversation.pk).status == "closed"
    assert Conversation.objects.filter(contact=conversation.contact).count() == 2


def test_the_closed_filter_lists_resolved_conversations(world):
    resolved = conversation_with(world.channel_a, phone=PHONE, text="oi")
    other = conversation_with(world.channel_a, phone="5511900000002", text="oi")
    _resolve(world, resolved)
    html = world.client_for(world.viewer).get("/?status=closed").content.decode()
    assert f"/conversas/{resolved.pk}/" in html and f"/conversas/{other.pk}/" not in html


def test_resolve_page_refuses_a_viewer_and_another_org(world):
    mine = conversation_with(world.channel_a, phone=PHONE, text="oi")
    theirs = conversation_with(world.channel_b, phone=PHONE, text="oi")
    assert (
        world.client_for(world.viewer).post(f"/caixa/conversas/{mine.pk}/resolver/").status_code
        == 403
    )
    assert (
        world.client_for(world.agent).post(f"/caixa/conversas/{theirs.pk}/resolver/").status_code
        == 404
    )
    assert not Conversation.objects.filter(status="closed").exists()


def test_resolve_page_resolves_and_redirects_to_the_conversation(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    response = world.client_for(world.agent).post(f"/caixa/conversas/{conversation.pk}/resolver/")
    assert response.status_code == 302
    assert response["Location"] == f"/conversas/{conversation.pk}/"
    assert Conversation.objects.get(pk=conversation.pk).status == "closed"
