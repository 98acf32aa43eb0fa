"""The case state machine (human-cases §3): every transition, its events and effects, and
illegal transitions that change nothing."""

from __future__ import annotations

import itertools

import pytest
from django.db import transaction
from django.utils import timezone

from accounts.models import AuditLog
from cases import services
from cases.models import (
    Case,
    CaseEvent,
    CaseFollowUp,
    CaseReminder,
    CaseStatus,
    HumanAction,
)
from conversation.hooks import cancel_pending_for_conversation
from conversation.models import SILENCED_FOREVER, Handoff, Turn
from tests.cases.conftest import open_case


def kinds(case: Case) -> list[str]:
    return list(case.events.order_by("created_at").values_list("kind", flat=True))


def answer(case: Case, actor, action: str, text: str = "feito", capture=None):
    if capture is None:
        return services.case_answer(case=case, actor=actor, action=action, text=text)
    with capture(execute=False):
        return services.case_answer(case=case, actor=actor, action=action, text=text)


def test_open_human_case_creates_awaiting_human_case_with_opened_event(conversation):
    case = open_case(conversation)

    assert case.status == CaseStatus.AWAITING_HUMAN
    assert case.lead_id == conversation.contact_id
    assert case.organization_id == conversation.organization_id
    assert case.closed_at is None and case.waiting_since == case.opened_at
    event = case.events.get()
    assert (event.kind, event.actor_kind, event.metadata["source"]) == ("opened", "agent", "agent")
    assert AuditLog.objects.filter(action="case.open", resource_id=str(case.pk)).exists()
    # The conversation with the lead goes on: opening a case silences nothing.
    conversation.refresh_from_db()
    assert conversation.status == "ai_handling" and conversation.bot_silenced_until is None


def test_context_snapshot_is_built_from_the_real_conversation(conversation):
    case = open_case(conversation)

    snapshot = case.context_snapshot
    assert snapshot["conversation_id"] == str(conversation.pk)
    assert snapshot["contact"]["phone"] == conversation.contact.phone
    assert [m["body"] for m in snapshot["messages"]] == ["Quero o reembolso do pedido 123"]


def test_resolve_from_awaiting_human_closes_the_case_and_queues_the_relay(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    with django_capture_on_commit_callbacks() as callbacks:
        event = services.case_answer(
            case=case, actor=cases_world.agent, action="resolved", text="Reembolso aprovado."
        )

    case.refresh_from_db()
    assert case.status == CaseStatus.RESOLVED and case.closed_at is not None
    assert kinds(case) == ["opened", "human_replied", "resolved"]
    assert (event.human_action, event.body, event.actor_user) == (
        "resolved",
        "Reembolso aprovado.",
        cases_world.agent,
    )
    assert len(callbacks) >= 1  # the case_reply_turn (and no follow-up)
    assert not CaseFollowUp.objects.filter(case=case, status="pending").exists()
    assert AuditLog.objects.filter(action="case.answer", actor=cases_world.agent).exists()


def test_need_lead_info_moves_to_awaiting_lead_and_arms_a_follow_up(conversation, cases_world):
    case = open_case(conversation)
    services.case_answer(
        case=case, actor=cases_world.agent, action="need_lead_info", text="O CPF do titular"
    )

    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_LEAD and case.closed_at is None
    assert case.lead_request == "O CPF do titular"
    assert kinds(case) == ["opened", "human_replied"]
    follow_up = CaseFollowUp.objects.get(case=case)
    assert follow_up.status == "pending" and follow_up.due_at > timezone.now()
    # The wait for the team ended: its reminders are cancelled.
    assert not CaseReminder.objects.filter(case=case, status="pending").exists()


def test_provide_update_from_awaiting_lead_returns_the_case_to_the_team(conversation, cases_world):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="need_lead_info", text="CPF")
    before = Case.objects.get(pk=case.pk).waiting_since

    with transaction.atomic():
        event = services.case_provide_update(
            case=case, conversation=conversation, info="123.456.789-00"
        )

    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_HUMAN
    assert (event.kind, event.actor_kind, event.body) == ("lead_provided", "lead", "123.456.789-00")
    assert event.metadata["fora_da_fronteira"] is False
    assert case.waiting_since > before  # the per-wait clock restarted
    assert CaseFollowUp.objects.get(case=case).status == "cancelled"
    assert CaseReminder.objects.filter(case=case, wait_started_at=case.waiting_since).count() == 3


def test_provide_update_only_from_awaiting_lead(conversation):
    case = open_case(conversation)
    events_before = kinds(case)

    with pytest.raises(services.IllegalTransition):
        services.case_provide_update(case=case, conversation=conversation, info="x")

    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_HUMAN
    assert kinds(case) == events_before


def test_provide_update_for_another_lead_is_refused(conversation, cases_world):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="need_lead_info", text="CPF")
    from tests import factories

    other = factories.make_conversation(cases_world.channel_a, phone="5511900001111")

    with pytest.raises(services.InvalidCaseInput):
        services.case_provide_update(case=case, conversation=other, info="x")
    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_LEAD


def test_escalate_hands_off_through_the_canonical_path_with_the_case_briefing(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    with django_capture_on_commit_callbacks(execute=True):
        services.case_answer(
            case=case,
            actor=cases_world.agent,
            action="escalate",
            text="Sem acesso ao sistema do banco.",
        )

    case.refresh_from_db()
    assert case.status == CaseStatus.ESCALATED and case.closed_at is not None
    assert kinds(case) == ["opened", "human_replied", "escalated"]
    handoff = Handoff.objects.get(conversation=conversation)
    assert handoff.reason_code == "caso_escalado"
    assert handoff.reason == "Sem acesso ao sistema do banco."
    # The briefing carries the case and a summary of the conversation (§7).
    assert case.title in handoff.briefing and case.blocker in handoff.briefing
    assert str(case.pk) in handoff.briefing
    assert "Quero o reembolso do pedido 123" in handoff.briefing
    conversation.refresh_from_db()
    assert conversation.status == "pending"
    assert conversation.bot_silenced_until == SILENCED_FOREVER
    # No AI turn for an escalation.
    assert not Turn.objects.filter(trigger_kind="case_reply").exists()


@pytest.mark.parametrize("reason", ["opt_out", "closed"])
def test_opt_out_or_closed_conversation_cancels_open_cases_and_follow_ups(
    conversation, cases_world, reason
):
    waiting_team = open_case(conversation, title="A")
    waiting_lead = open_case(conversation, title="B")
    services.case_answer(
        case=waiting_lead, actor=cases_world.agent, action="need_lead_info", text="CPF"
    )

    cancelled = cancel_pending_for_conversation(conversation, reason)

    assert cancelled == 1  # the follow-up of B
    for case in (waiting_team, waiting_lead):
        case.refresh_from_db()
        assert case.status == CaseStatus.CANCELLED and case.closed_at is not None
        assert kinds(case)[-1] == "cancelled"
    assert not CaseFollowUp.objects.filter(status="pending").exists()
    assert not CaseReminder.objects.filter(status="pending").exists()


def test_a_handoff_cancels_follow_ups_but_keeps_the_case_open(conversation, cases_world):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="need_lead_info", text="CPF")

    cancel_pending_for_conversation(conversation, "handoff")

    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_LEAD
    assert CaseFollowUp.objects.get(case=case).status == "cancelled"


CLOSED = [CaseStatus.RESOLVED, CaseStatus.ESCALATED, CaseStatus.CANCELLED]


def _case_in(conversation, actor, status: str) -> Case:
    case = open_case(conversation)
    if status == CaseStatus.AWAITING_LEAD:
        services.case_answer(case=case, actor=actor, action="need_lead_info", text="CPF")
    elif status == CaseStatus.RESOLVED:
        services.case_answer(case=case, actor=actor, action="resolved", text="ok")
    elif status == CaseStatus.ESCALATED:
        services.case_answer(case=case, actor=actor, action="escalate", text="não dá")
    elif status == CaseStatus.CANCELLED:
        services.case_cancel(case=case, reason="opt_out")
    case.refresh_from_db()
    assert case.status == status
    return case


@pytest.mark.parametrize(
    ("status", "action"),
    [
        *itertools.product(CLOSED, HumanAction.values),
        *((CaseStatus.AWAITING_LEAD, a) for a in HumanAction.values),
    ],
)
def test_illegal_human_action_raises_and_changes_nothing(conversation, cases_world, status, action):
    case = _case_in(conversation, cases_world.agent, status)
    events = CaseEvent.objects.filter(case=case).count()
    follow_ups = list(CaseFollowUp.objects.filter(case=case).values_list("status", flat=True))

    with pytest.raises(services.IllegalTransition) as error:
        services.case_answer(case=case, actor=cases_world.agent, action=action, text="x")

    assert "Não é possível" in error.value.message
    case.refresh_from_db()
    assert case.status == status
    assert CaseEvent.objects.filter(case=case).count() == events
    assert list(CaseFollowUp.objects.filter(case=case).values_list("status", flat=True)) == (
        follow_ups
    )


@pytest.mark.parametrize("status", CLOSED)
def test_closed_cases_cannot_be_cancelled_or_updated(conversation, cases_world, status):
    case = _case_in(conversation, cases_world.agent, status)

    assert services.case_cancel(case=case, reason="opt_out") is False
    with pytest.raises(services.IllegalTransition):
        services.case_provide_update(case=case, conversation=conversation, info="x")
    assert Case.objects.get(pk=case.pk).status == status


@pytest.mark.parametrize(
    ("action", "target"),
    [
        ("resolved", CaseStatus.RESOLVED),
        ("need_lead_info", CaseStatus.AWAITING_LEAD),
        ("escalate", CaseStatus.ESCALATED),
    ],
)
def test_a_flagged_unresponsive_case_lets_the_team_decide(
    conversation, cases_world, action, target
):
    case = _case_in(conversation, cases_world.agent, CaseStatus.AWAITING_LEAD)
    Case.objects.filter(pk=case.pk).update(lead_unresponsive=True)
    case.refresh_from_db()

    services.case_answer(case=case, actor=cases_world.agent, action=action, text="decidi")

    case.refresh_from_db()
    assert case.status == target
    assert case.lead_unresponsive is (action != "need_lead_info")


@pytest.mark.parametrize("text", ["", "   "])
def test_an_answer_needs_text(conversation, cases_world, text):
    case = open_case(conversation)
    with pytest.raises(services.InvalidCaseInput):
        services.case_answer(case=case, actor=cases_world.agent, action="resolved", text=text)
    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_HUMAN


def test_unknown_action_is_refused(conversation, cases_world):
    case = open_case(conversation)
    with pytest.raises(services.InvalidCaseInput):
        services.case_answer(case=case, actor=cases_world.agent, action="delete", text="x")


def test_second_answer_to_the_same_case_gets_a_clear_error(conversation, cases_world):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="resolved", text="ok")

    with pytest.raises(services.IllegalTransition):
        services.case_answer(case=case, actor=cases_world.admin, action="escalate", text="x")
    assert not Handoff.objects.exists()


def test_a_lead_may_have_several_open_cases(conversation):
    open_case(conversation, title="A")
    open_case(conversation, title="B")

    assert Case.objects.filter(lead=conversation.contact, status="awaiting_human").count() == 2
