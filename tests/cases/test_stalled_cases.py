"""No case waits unseen (issue 12 item 6): the watcher brings cases stuck on the customer's
side back to the team, re-drives relays whose task never ran, and the case page says what
became of the team's answer."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.db import transaction
from django.utils import timezone

from accounts.models import AuditLog
from cases import notifications, services, tasks
from cases.models import Case, CaseEvent, CaseNotice, CaseReminder, CaseStatus
from cases.selectors import RelayState, relay_status
from conversation import tasks as turn_tasks
from conversation.models import Conversation, Message, Turn
from tests import factories
from tests.cases.conftest import open_case
from tests.cases.test_team_notifications import FakeAdapter, enable_notice


def watch(at) -> int:
    with time_machine.travel(at):
        return tasks.watch_stale_cases.apply().get()


def ask_customer(case, actor, capture) -> Case:
    with capture(execute=True):
        services.case_answer(case=case, actor=actor, action="need_lead_info", text="o CPF")
    case.refresh_from_db()
    return case


def customer_writes(case, body: str, at) -> Message:
    message = factories.make_message(case.conversation, body)
    Message.objects.filter(pk=message.pk).update(created_at=at)
    Conversation.objects.filter(pk=case.conversation_id).update(last_inbound_at=at)
    return message


# --- the customer answered, no provide_case_update followed ------------------------------


def test_an_answer_the_ai_never_brought_back_sends_the_case_to_the_team(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = ask_customer(
        open_case(conversation), cases_world.agent, django_capture_on_commit_callbacks
    )
    answered_at = case.waiting_since + timedelta(minutes=3)
    customer_writes(case, "123.456.789-00", answered_at)

    # Inside the grace the AI may still call provide_case_update: nothing moves.
    assert watch(answered_at + timedelta(minutes=5)) == 0
    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_LEAD

    assert watch(answered_at + timedelta(minutes=20)) == 1

    case.refresh_from_db()
    assert (case.status, case.attention) == (CaseStatus.AWAITING_HUMAN, "lead_answered")
    stalled = CaseEvent.objects.get(case=case, kind="stalled")
    # The team reads what the customer said, on the case itself.
    assert stalled.body == "123.456.789-00"
    assert stalled.metadata["reason"] == "lead_answered"
    assert (
        CaseReminder.objects.filter(
            case=case, wait_started_at=case.waiting_since, status="pending"
        ).count()
        == 3
    )
    assert AuditLog.objects.filter(action="case.back_to_team", resource_id=str(case.pk)).exists()
    # A second sweep moves nothing again.
    assert watch(answered_at + timedelta(minutes=40)) == 0
    assert CaseEvent.objects.filter(case=case, kind="stalled").count() == 1


def test_a_case_whose_customer_has_not_answered_stays_with_the_customer(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = ask_customer(
        open_case(conversation), cases_world.agent, django_capture_on_commit_callbacks
    )

    assert watch(case.waiting_since + timedelta(hours=2)) == 0
    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_LEAD


def test_the_ai_may_still_bring_the_answer_after_the_case_went_back(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = ask_customer(
        open_case(conversation), cases_world.agent, django_capture_on_commit_callbacks
    )
    customer_writes(case, "meu CPF é 123", case.waiting_since + timedelta(minutes=1))
    watch(case.waiting_since + timedelta(minutes=30))

    with transaction.atomic():
        services.case_provide_update(case=case, conversation=conversation, info="CPF 123")

    case.refresh_from_db()
    assert (case.status, case.attention) == (CaseStatus.AWAITING_HUMAN, "")
    assert CaseEvent.objects.filter(case=case, kind="lead_provided").count() == 1


def test_the_team_is_told_when_a_case_comes_back(
    conversation, cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    enable_notice(cases_world)
    adapter = FakeAdapter()
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: adapter)
    case = ask_customer(
        open_case(conversation), cases_world.agent, django_capture_on_commit_callbacks
    )
    customer_writes(case, "segue o CPF", case.waiting_since + timedelta(minutes=1))

    with django_capture_on_commit_callbacks(execute=True):
        watch(case.waiting_since + timedelta(minutes=30))

    notice = CaseNotice.objects.get(kind="back_to_team")
    assert notice.status == "sent"
    text = adapter.sent[-1][1]
    assert f"#{case.short_id}" in text and "voltou para a equipe" in text
    # Every notice says how to answer from WhatsApp.
    assert f"#{case.short_id} 1 texto" in text


# --- the team's question never reached the customer -------------------------------------


def test_a_question_that_never_reached_the_customer_sends_the_case_back(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = ask_customer(
        open_case(conversation), cases_world.agent, django_capture_on_commit_callbacks
    )
    # The relay went out and the provider refused it for good.
    Message.objects.filter(conversation=conversation, direction="outbound").update(status="failed")

    assert watch(case.waiting_since + timedelta(minutes=10)) == 1

    case.refresh_from_db()
    assert (case.status, case.attention) == (CaseStatus.AWAITING_HUMAN, "relay_not_delivered")


def test_a_delivered_question_keeps_the_case_with_the_customer(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = ask_customer(
        open_case(conversation), cases_world.agent, django_capture_on_commit_callbacks
    )
    Message.objects.filter(conversation=conversation, direction="outbound").update(
        status="delivered"
    )

    assert watch(case.waiting_since + timedelta(minutes=10)) == 0
    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_LEAD


# --- relays whose task never ran -----------------------------------------------------------


def test_a_relay_whose_task_was_lost_is_scheduled_again_and_sent_once(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    # The broker lost the task: the answer is committed, no turn ever started.
    event = services.case_answer(
        case=case, actor=cases_world.agent, action="resolved", text="Reembolso feito."
    )
    assert not Turn.objects.filter(trigger_kind="case_reply").exists()
    assert relay_status(event).state == RelayState.PENDING

    later = event.created_at + timedelta(minutes=10)
    with django_capture_on_commit_callbacks(execute=True):
        watch(later)
    with django_capture_on_commit_callbacks(execute=True):
        watch(later + timedelta(minutes=10))  # the turn exists now: not scheduled again

    assert Turn.objects.filter(trigger_kind="case_reply", trigger_key=str(event.pk)).count() == 1
    relayed = Message.objects.filter(conversation=conversation, direction="outbound")
    assert relayed.count() == 1 and "Reembolso feito." in relayed.get().body
    assert AuditLog.objects.filter(action="case.relays_redriven").count() == 1


# --- the page says the truth -----------------------------------------------------------------


def page(cases_world, case) -> str:
    client = cases_world.client_for(cases_world.viewer)
    return client.get(f"/casos/{case.pk}/").content.decode()


def test_the_case_page_says_whether_the_customer_got_the_answer(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    event = services.case_answer(
        case=case, actor=cases_world.agent, action="resolved", text="Feito."
    )
    assert "ainda não repassou" in page(cases_world, case)

    with django_capture_on_commit_callbacks(execute=True):
        turn_tasks.run_case_reply_turn.apply(args=[str(event.pk)])
    # The simulator confirms delivery at once; the page shows what the customer was told.
    html = page(cases_world, case)
    assert "O cliente recebeu a resposta da IA." in html
    assert "Novidades sobre" in html.split('id="case-relay-box"')[1].split("</div>")[0]

    relayed = Message.objects.filter(conversation=conversation, direction="outbound")
    for status, words in [
        ("queued", "na fila de envio"),
        ("sent", "o WhatsApp ainda não confirmou a entrega"),
        ("failed", "NÃO recebeu"),
    ]:
        relayed.update(status=status)
        html = page(cases_world, case)
        assert words in html, status
        assert "a IA repassa a sua nota" not in html


def test_a_case_back_with_the_team_says_why_in_list_and_detail(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = ask_customer(
        open_case(conversation), cases_world.agent, django_capture_on_commit_callbacks
    )
    customer_writes(case, "segue", timezone.now() - timedelta(hours=1))
    Case.objects.filter(pk=case.pk).update(waiting_since=timezone.now() - timedelta(hours=2))
    watch(timezone.now())
    client = cases_world.client_for(cases_world.viewer)

    listing = client.get("/casos/?estado=esperando-voce").content.decode()
    detail = page(cases_world, case)

    assert case.title in listing and "cliente respondeu" in listing
    assert "a IA não devolveu a resposta ao caso" in detail
