"""Follow-ups with the customer while a case waits for them (human-cases §3, §10.4)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from accounts.models import AuditLog
from cases import services, tasks
from cases.models import Case, CaseEvent, CaseFollowUp, CaseReminder, CaseStatus
from conversation import tasks as turn_tasks
from conversation import turns
from conversation.handoff import conversation_take_over, handoff_return_to_ai
from conversation.models import Conversation, Message, Turn
from conversation.privacy import contact_erase
from tests.cases.conftest import open_case


@pytest.fixture
def waiting(conversation, cases_world):
    """A case waiting for the customer, who last wrote an hour ago."""
    conversation.last_inbound_at = conversation.customer_wrote_at = timezone.now() - timedelta(
        hours=1
    )
    conversation.save(update_fields=["last_inbound_at", "customer_wrote_at"])
    case = open_case(conversation)
    services.case_answer(
        case=case, actor=cases_world.agent, action="need_lead_info", text="o CPF do titular."
    )
    case.refresh_from_db()
    return case


def pending(case: Case) -> CaseFollowUp:
    return CaseFollowUp.objects.get(case=case, status="pending")


def fire(case: Case) -> Turn | None:
    return turns.run_follow_up_turn(str(pending(case).pk))


def test_entering_awaiting_lead_arms_one_follow_up(waiting):
    follow_up = pending(waiting)
    assert follow_up.conversation_id == waiting.conversation_id
    expected = follow_up.created_at + services.follow_up_delay()
    assert abs((follow_up.due_at - expected).total_seconds()) < 5


def test_inside_the_24h_window_the_follow_up_is_free_text(waiting):
    follow_up = pending(waiting)
    turn = fire(waiting)

    assert (turn.trigger_kind, turn.trigger_key, turn.outcome) == (
        "follow_up",
        str(follow_up.pk),
        "replied",
    )
    message = Message.objects.get(direction="outbound", turn=turn)
    assert message.template_name == ""
    assert "ainda preciso de uma informação sua: o CPF do titular." in message.body
    follow_up.refresh_from_db()
    assert follow_up.status == "sent"
    waiting.refresh_from_db()
    assert waiting.followup_attempts == 1
    event = CaseEvent.objects.get(case=waiting, kind="lead_asked")
    assert (event.metadata["delivery"], event.metadata["attempt"]) == ("text", 1)
    assert pending(waiting).pk != follow_up.pk  # the next check is armed


def on_provider(case: Case, provider: str) -> None:
    channel = case.conversation.channel
    channel.provider = provider
    channel.save(update_fields=["provider"])


def test_outside_the_window_the_channels_follow_up_template_is_used(waiting):
    on_provider(waiting, "meta")  # the Cloud API's 24-hour window
    Conversation.objects.filter(pk=waiting.conversation_id).update(
        customer_wrote_at=timezone.now() - timedelta(hours=30)
    )
    channel = waiting.conversation.channel
    channel.templates = [{"name": "lembrete_caso", "language": "pt_BR", "purpose": "follow_up"}]
    channel.save(update_fields=["templates"])

    turn = fire(waiting)

    message = Message.objects.get(direction="outbound", turn=turn)
    assert message.template_name == "lembrete_caso"
    event = CaseEvent.objects.get(case=waiting, kind="lead_asked")
    assert event.metadata["delivery"] == "template"


def test_outside_the_window_without_a_template_nothing_is_sent_and_the_case_says_so(waiting):
    on_provider(waiting, "meta")
    Conversation.objects.filter(pk=waiting.conversation_id).update(
        customer_wrote_at=timezone.now() - timedelta(hours=30)
    )
    follow_up = pending(waiting)

    turn = fire(waiting)

    assert turn.outcome == "no_reply"
    assert not Message.objects.filter(direction="outbound", turn=turn).exists()
    follow_up.refresh_from_db()
    assert follow_up.status == "not_sent"
    event = CaseEvent.objects.get(case=waiting, kind="lead_asked")
    assert event.metadata["reason"] == "outside_service_window_no_template"
    assert "janela de 24 horas" in event.body


@pytest.mark.parametrize("provider", ["waha", "simulator"])
def test_a_channel_with_no_24h_window_sends_the_follow_up_as_text_a_day_later(waiting, provider):
    # WAHA is WhatsApp Web: no service window, no templates (DESIGN §5).
    on_provider(waiting, provider)
    Conversation.objects.filter(pk=waiting.conversation_id).update(
        customer_wrote_at=timezone.now() - timedelta(hours=30)
    )

    turn = fire(waiting)

    message = Message.objects.get(direction="outbound", turn=turn)
    assert message.template_name == ""
    assert "o CPF do titular." in message.body
    event = CaseEvent.objects.get(case=waiting, kind="lead_asked")
    assert event.metadata["delivery"] == "text"


def test_after_n_unanswered_attempts_the_case_goes_back_to_the_team_flagged(waiting):
    assert services.follow_up_max_attempts() == 2  # the spec's default N
    fire(waiting)
    fire(waiting)
    waiting.refresh_from_db()
    assert waiting.followup_attempts == 2 and not waiting.lead_unresponsive
    asked_at = waiting.waiting_since

    fire(waiting)

    waiting.refresh_from_db()
    # In the team's queue ("Esperando você"), flagged, with a new wait and its reminders.
    assert waiting.status == CaseStatus.AWAITING_HUMAN
    assert waiting.lead_unresponsive is True and waiting.attention == "lead_unresponsive"
    assert waiting.waiting_since > asked_at
    assert CaseReminder.objects.filter(
        case=waiting, wait_started_at=waiting.waiting_since, status="pending"
    ).exists()
    assert CaseEvent.objects.filter(case=waiting, kind="lead_unresponsive").count() == 1
    assert not CaseFollowUp.objects.filter(case=waiting, status="pending").exists()
    assert Message.objects.filter(direction="outbound", sender_kind="system").count() == 2
    assert AuditLog.objects.filter(action="case.back_to_team").count() == 1


def test_a_customer_who_wrote_since_the_check_was_armed_gets_no_nudge(waiting):
    follow_up = pending(waiting)
    Conversation.objects.filter(pk=waiting.conversation_id).update(
        last_inbound_at=timezone.now() + timedelta(seconds=1)
    )

    turn = fire(waiting)

    assert turn.outcome == "no_reply"
    follow_up.refresh_from_db()
    assert follow_up.status == "answered"
    waiting.refresh_from_db()
    assert waiting.followup_attempts == 0
    assert pending(waiting)  # re-armed


@pytest.mark.parametrize("how", ["provide", "resolve", "escalate", "cancel", "opt_out"])
def test_follow_ups_are_cancelled_when_the_case_moves_on(waiting, cases_world, how):
    follow_up = pending(waiting)
    if how == "provide":
        services.case_provide_update(
            case=waiting, conversation=waiting.conversation, info="123.456.789-00"
        )
    elif how == "cancel":
        services.case_cancel(case=waiting, reason="closed")
    elif how == "opt_out":
        from conversation.hooks import cancel_pending_for_conversation

        cancel_pending_for_conversation(waiting.conversation, "opt_out")
    else:
        Case.objects.filter(pk=waiting.pk).update(lead_unresponsive=True)
        waiting.refresh_from_db()
        action = "resolved" if how == "resolve" else "escalate"
        services.case_answer(case=waiting, actor=cases_world.agent, action=action, text="x")

    follow_up.refresh_from_db()
    assert follow_up.status == "cancelled"
    assert turns.run_follow_up_turn(str(follow_up.pk)) is None
    assert not Turn.objects.filter(trigger_kind="follow_up").exists()


def test_a_redelivered_follow_up_task_never_sends_twice(waiting):
    follow_up = pending(waiting)
    turn_tasks.run_follow_up_turn.apply(args=[str(follow_up.pk)])
    turn_tasks.run_follow_up_turn.apply(args=[str(follow_up.pk)])

    assert Turn.objects.filter(trigger_key=str(follow_up.pk)).count() == 1
    assert Message.objects.filter(direction="outbound", sender_kind="system").count() == 1


def test_no_nudge_while_a_human_owns_the_conversation(waiting):
    Conversation.objects.filter(pk=waiting.conversation_id).update(
        bot_silenced_until=timezone.now() + timedelta(hours=2)
    )
    follow_up = pending(waiting)

    turn = fire(waiting)

    assert turn.outcome == "no_reply"
    follow_up.refresh_from_db()
    assert follow_up.status == "cancelled"
    assert not Message.objects.filter(direction="outbound").exists()


def test_a_closed_conversation_cancels_the_case_when_its_follow_up_comes_due(waiting):
    Conversation.objects.filter(pk=waiting.conversation_id).update(status="closed")

    fire(waiting)

    waiting.refresh_from_db()
    assert waiting.status == CaseStatus.CANCELLED


def test_the_beat_sweep_fires_only_due_follow_ups(waiting, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.fire_due_follow_ups.apply().get() == 0
    assert not Turn.objects.filter(trigger_kind="follow_up").exists()

    due = pending(waiting).due_at + timedelta(minutes=1)
    with time_machine.travel(due), django_capture_on_commit_callbacks(execute=True):
        assert tasks.fire_due_follow_ups.apply().get() == 1

    assert Turn.objects.filter(trigger_kind="follow_up", outcome="replied").count() == 1


def test_a_case_waiting_on_the_customer_gets_its_follow_up_back_when_the_ai_does(
    waiting, cases_world
):
    # A person takes the conversation (its follow-ups are cancelled), then gives it back:
    # the case still waits on the customer, so it is followed up again, not left waiting
    # for ever unflagged (no follow-up, no flag, no answer the page accepts).
    conversation = waiting.conversation
    handoff = conversation_take_over(conversation=conversation, actor=cases_world.agent)
    assert not CaseFollowUp.objects.filter(case=waiting, status="pending").exists()

    handoff_return_to_ai(handoff=handoff, actor=cases_world.agent)

    follow_up = pending(waiting)
    expected = timezone.now() + services.follow_up_delay()
    assert abs((follow_up.due_at - expected).total_seconds()) < 5
    turn = fire(waiting)
    assert Message.objects.filter(direction="outbound", turn=turn).exists()
    assert AuditLog.objects.get(action="handoff.return_to_ai").diff == {"followups_resumed": 1}


def test_erasing_the_customer_cancels_their_open_cases(waiting, cases_world):
    contact_erase(contact=waiting.conversation.contact, actor=cases_world.admin)

    waiting.refresh_from_db()
    assert waiting.status == CaseStatus.CANCELLED
    assert not CaseReminder.objects.filter(case=waiting, status="pending").exists()
