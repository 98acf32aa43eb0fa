"""Telling the team (human-cases §9): the stale-case watcher with its per-wait clock and the
organization's cadence, and the opt-in WhatsApp notice (one per event, every attempt logged)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.db import connection, transaction

from accounts.models import AuditLog
from cases import notifications, services, tasks
from cases.models import (
    CaseNotice,
    CaseNoticeAttempt,
    CaseNotificationSettings,
    CaseReminder,
)
from conversation.channels.base import SendError, SendResult
from tests import factories
from tests.cases.conftest import open_case

# --- the stale-case watcher ---------------------------------------------------------------


def reminders(case, **filters: Any) -> list[tuple[int, str]]:
    rows = CaseReminder.objects.filter(case=case, **filters).order_by("wait_started_at", "sequence")
    return list(rows.values_list("sequence", "status"))


def watch(at) -> int:
    with time_machine.travel(at):
        return tasks.watch_stale_cases.apply().get()


def test_opening_a_case_arms_the_default_cadence_on_24h_three_reminders(conversation):
    case = open_case(conversation)

    rows = list(CaseReminder.objects.filter(case=case).order_by("sequence"))
    assert [r.sequence for r in rows] == [1, 2, 3]
    assert [r.due_at - case.waiting_since for r in rows] == [
        timedelta(hours=24),
        timedelta(hours=48),
        timedelta(hours=72),
    ]


def test_the_watcher_fires_due_reminders_once(conversation):
    case = open_case(conversation)

    assert watch(case.waiting_since + timedelta(hours=1)) == 0
    assert watch(case.waiting_since + timedelta(hours=25)) == 1
    assert watch(case.waiting_since + timedelta(hours=26)) == 0
    assert reminders(case) == [(1, "fired"), (2, "pending"), (3, "pending")]


def test_the_clock_restarts_when_the_case_comes_back_from_the_customer(conversation, cases_world):
    case = open_case(conversation)
    watch(case.waiting_since + timedelta(hours=25))
    with time_machine.travel(case.waiting_since + timedelta(hours=30)):
        services.case_answer(
            case=case, actor=cases_world.agent, action="need_lead_info", text="CPF"
        )
        services.case_provide_update(case=case, conversation=conversation, info="123")
    case.refresh_from_db()
    new_wait = case.waiting_since

    # 25 h after the first wait began but only 5 h into the new one: nothing is due.
    assert watch(new_wait + timedelta(hours=5)) == 0
    assert reminders(case, wait_started_at=new_wait) == [
        (1, "pending"),
        (2, "pending"),
        (3, "pending"),
    ]
    assert watch(new_wait + timedelta(hours=24, minutes=1)) == 1
    first_wait = CaseReminder.objects.filter(case=case).exclude(wait_started_at=new_wait)
    assert sorted(first_wait.values_list("sequence", "status")) == [
        (1, "fired"),
        (2, "cancelled"),
        (3, "cancelled"),
    ]


def test_a_case_waiting_for_the_customer_is_not_reminded(conversation, cases_world):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="need_lead_info", text="CPF")

    assert watch(case.waiting_since + timedelta(days=5)) == 0


def test_the_organizations_cadence_applies_and_reschedules_open_waits(conversation, cases_world):
    case = open_case(conversation)
    notifications.notification_settings_save(
        organization_id=cases_world.org_a.pk,
        actor=cases_world.admin,
        reminder_after_hours=2,
        reminder_count=1,
    )

    assert reminders(case) == [(1, "pending")]
    assert CaseReminder.objects.get(case=case).due_at == case.waiting_since + timedelta(hours=2)
    assert AuditLog.objects.filter(action="case_notifications.update").exists()
    second = open_case(conversation, title="outro")
    assert reminders(second) == [(1, "pending")]


def test_turning_reminders_off_cancels_them(conversation, cases_world):
    case = open_case(conversation)
    notifications.notification_settings_save(
        organization_id=cases_world.org_a.pk, actor=cases_world.admin, reminders_enabled=False
    )

    assert reminders(case) == []
    assert reminders(open_case(conversation, title="outro")) == []


def test_each_organization_has_its_own_cadence(conversation, cases_world):
    CaseNotificationSettings.objects.create(organization=cases_world.org_b, reminder_count=1)
    other = open_case(factories.make_conversation(cases_world.channel_b))

    assert len(reminders(open_case(conversation))) == 3
    assert len(reminders(other)) == 1


# --- the WhatsApp notice -------------------------------------------------------------------


def enable_notice(world: Any, channel: Any = None) -> None:
    CaseNotificationSettings.objects.update_or_create(
        organization=world.org_a,
        defaults={
            "whatsapp_enabled": True,
            "whatsapp_phone": "5511955554444",
            "whatsapp_channel": channel or world.channel_a,
        },
    )


class FakeAdapter:
    """Stands in for the channel adapter: records sends, fails as told."""

    def __init__(self, failures: list[SendError] | None = None) -> None:
        self.sent: list[tuple[str, str]] = []
        self.failures = list(failures or [])

    def send_text(self, config, *, to, body, last_inbound_at, now, reply_to=None) -> SendResult:
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append((to, body))
        return SendResult(provider_message_id=f"fake-{len(self.sent)}")

    def send_template(self, config, *, to, template_name, language, parameters) -> SendResult:
        self.sent.append((to, f"template:{template_name}"))
        return SendResult(provider_message_id="fake-t")


def test_no_notice_unless_the_admin_opted_in(conversation, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        open_case(conversation)

    assert not CaseNotice.objects.exists()


def test_a_case_opening_notifies_the_team_once(
    conversation, cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    enable_notice(cases_world)
    adapter = FakeAdapter()
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: adapter)
    with django_capture_on_commit_callbacks(execute=True):
        case = open_case(conversation)
    opened = case.events.get(kind="opened")
    tasks.deliver_case_notice.apply(args=[str(opened.pk)])  # a redelivered task

    notice = CaseNotice.objects.get()
    assert (notice.event_id, notice.kind, notice.status, notice.attempts) == (
        opened.pk,
        "case_opened",
        "sent",
        1,
    )
    assert adapter.sent == [("5511955554444", notifications.notice_text(opened))]
    assert case.title in adapter.sent[0][1]
    assert list(CaseNoticeAttempt.objects.values_list("number", "outcome")) == [(1, "sent")]


def test_the_customers_answer_notifies_the_team_again(
    conversation, cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    enable_notice(cases_world)
    adapter = FakeAdapter()
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: adapter)
    with django_capture_on_commit_callbacks(execute=True):
        case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="need_lead_info", text="CPF")
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        services.case_provide_update(case=case, conversation=conversation, info="123.456")

    assert list(CaseNotice.objects.order_by("created_at").values_list("kind", flat=True)) == [
        "case_opened",
        "lead_provided",
    ]
    assert "123.456" in adapter.sent[-1][1]


def test_an_answer_outside_the_asking_conversation_sends_no_notice(
    conversation, cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    enable_notice(cases_world)
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: FakeAdapter())
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="need_lead_info", text="CPF")
    conversation.status = "closed"
    conversation.save(update_fields=["status"])
    reopened = factories.make_conversation(cases_world.channel_a, phone=conversation.contact.phone)

    with django_capture_on_commit_callbacks(execute=True):
        event = services.case_provide_update(case=case, conversation=reopened, info="123")

    assert event.metadata["fora_da_fronteira"] is True
    case.refresh_from_db()
    assert case.status == "awaiting_human"
    assert not CaseNotice.objects.filter(kind="lead_provided").exists()


def test_every_attempt_is_logged_and_retryable_failures_are_retried_then_given_up(
    conversation, cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    enable_notice(cases_world)
    failure = SendError("down", retryable=True, code="provider_unavailable")
    adapter = FakeAdapter([failure, failure, failure])
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: adapter)
    case = open_case(conversation)
    opened = case.events.get(kind="opened")

    outcomes = [notifications.notice_deliver(str(opened.pk)) for _ in range(4)]

    assert [o.status for o in outcomes] == ["pending", "pending", "failed", "failed"]
    assert outcomes[0].retry_in > 0
    assert list(CaseNoticeAttempt.objects.values_list("number", "outcome", "error_code")) == [
        (1, "failed", "provider_unavailable"),
        (2, "failed", "provider_unavailable"),
        (3, "failed", "provider_unavailable"),
    ]
    assert adapter.sent == []


def test_the_official_api_refuses_free_text_to_the_staff_number_and_it_is_logged(
    conversation, cases_world
):
    meta = factories.make_channel(cases_world.org_a, provider="meta", external_id="123")
    enable_notice(cases_world, channel=meta)
    case = open_case(conversation)

    outcome = notifications.notice_deliver(str(case.events.get(kind="opened").pk))

    assert outcome.status == "failed"
    attempt = CaseNoticeAttempt.objects.get()
    assert (attempt.outcome, attempt.error_code) == ("failed", "outside_service_window")


class LockCheckingAdapter(FakeAdapter):
    """Fails the test if the provider is called with a transaction (and its row lock) open."""

    def send_text(self, config, *, to, body, last_inbound_at, now, reply_to=None) -> SendResult:
        assert not connection.in_atomic_block, "a transaction is open across the provider call"
        return super().send_text(config, to=to, body=body, last_inbound_at=last_inbound_at, now=now)


@pytest.mark.django_db(transaction=True)
def test_the_notice_is_sent_with_no_transaction_open_and_recorded_after(
    conversation, cases_world, monkeypatch
):
    # DESIGN §5: no database lock is held across the network (a slow provider would hold a
    # connection and the notice row for its whole timeout).
    enable_notice(cases_world)
    adapter = LockCheckingAdapter()
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: adapter)
    case = open_case(conversation)
    opened = case.events.get(kind="opened")

    outcome = notifications.notice_deliver(str(opened.pk))
    again = notifications.notice_deliver(str(opened.pk))  # a redelivery sends nothing more

    assert (outcome.status, again.status) == ("sent", "sent")
    assert len(adapter.sent) == 1
    assert list(CaseNoticeAttempt.objects.values_list("number", "outcome")) == [(1, "sent")]
