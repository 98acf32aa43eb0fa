"""Review r30: the team's WhatsApp notice is not lost with its task.

DESIGN §5: "The database is the source of truth for work; the broker only wakes workers.
Whatever a webhook or a service commits ... is picked up by a periodic sweeper if its task
never ran, ran on a worker that died, or failed while a provider was down." A case event that
tells the team (human-cases §9: a notice on opening, on each answer of the customer, and when
the case comes back to the team) is such work; the stale-case watcher is the sweeper."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import time_machine
from django.utils import timezone

from cases import notifications, services, tasks
from cases.models import CaseNotice, CaseNotificationSettings
from cases.services import stalled
from conversation.channels.base import SendResult
from tests import factories
from tests.cases.conftest import open_case

TEAM = "5511955554444"


def enable_notice(world: Any) -> None:
    CaseNotificationSettings.objects.update_or_create(
        organization=world.org_a,
        defaults={
            "whatsapp_enabled": True,
            "whatsapp_phone": TEAM,
            "whatsapp_channel": world.channel_a,
        },
    )


class FakeAdapter:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def send_text(self, config, *, to, body, last_inbound_at, now, reply_to=None) -> SendResult:
        self.sent.append((to, body))
        return SendResult(provider_message_id=f"fake-{len(self.sent)}")

    def send_template(self, config, *, to, template_name, language, parameters) -> SendResult:
        self.sent.append((to, f"template:{template_name}"))
        return SendResult(provider_message_id="fake-t")


def watch(at, capture) -> None:
    with capture(execute=True), time_machine.travel(at):
        tasks.watch_stale_cases.apply().get()


def test_a_notice_whose_task_was_lost_is_sent_by_the_watcher_once(
    conversation, cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    enable_notice(cases_world)
    adapter = FakeAdapter()
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: adapter)
    with django_capture_on_commit_callbacks(execute=False):  # the broker lost the task
        case = open_case(conversation)
    assert not CaseNotice.objects.exists()

    later = timezone.now() + timedelta(minutes=10)
    watch(later, django_capture_on_commit_callbacks)
    watch(
        later + timedelta(minutes=10), django_capture_on_commit_callbacks
    )  # the next sweep finds it sent

    notice = CaseNotice.objects.get()
    assert (notice.case_id, notice.status) == (case.pk, "sent")
    assert len(adapter.sent) == 1 and adapter.sent[0][0] == TEAM


def test_a_notice_stuck_pending_after_a_lost_retry_is_sent_by_the_watcher(
    conversation, cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    enable_notice(cases_world)
    adapter = FakeAdapter()
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: adapter)
    case = open_case(conversation)
    opened = case.events.get(kind="opened")
    # A first attempt failed retryably; its scheduled retry never ran.
    CaseNotice.objects.create(
        organization=case.organization,
        case=case,
        event=opened,
        kind="case_opened",
        phone=TEAM,
        channel=cases_world.channel_a,
        attempts=1,
        last_error="provider_unavailable",
    )

    watch(timezone.now() + timedelta(minutes=10), django_capture_on_commit_callbacks)

    assert CaseNotice.objects.get().status == "sent"
    assert len(adapter.sent) == 1


def test_a_lost_notice_of_a_case_no_longer_waiting_for_the_team_is_not_sent(
    conversation, cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    # A late "Novo caso" for a case a colleague already answered is noise, not a notice.
    enable_notice(cases_world)
    adapter = FakeAdapter()
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: adapter)
    with django_capture_on_commit_callbacks(execute=False):
        case = open_case(conversation)
        services.case_answer(case=case, actor=cases_world.agent, action="resolved", text="Ok.")

    watch(timezone.now() + timedelta(minutes=10), django_capture_on_commit_callbacks)

    assert adapter.sent == []


def test_the_watcher_sends_no_notice_when_the_team_has_none(
    conversation, cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    adapter = FakeAdapter()
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: adapter)
    with django_capture_on_commit_callbacks(execute=False):
        open_case(conversation)

    watch(timezone.now() + timedelta(minutes=10), django_capture_on_commit_callbacks)

    assert adapter.sent == [] and not CaseNotice.objects.exists()


def test_the_watcher_knows_every_event_that_tells_the_team():
    assert set(stalled.NOTICE_EVENT_KINDS) == set(notifications.KIND_OF_EVENT)


def test_an_answer_outside_the_asking_conversation_is_not_re_driven(
    conversation, cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    # §9: no notice for an answer that arrived outside the conversation it was asked in.
    enable_notice(cases_world)
    monkeypatch.setattr(notifications, "get_adapter", lambda provider: FakeAdapter())
    with django_capture_on_commit_callbacks(execute=True):
        case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="need_lead_info", text="CPF")
    conversation.status = "closed"
    conversation.save(update_fields=["status"])
    reopened = factories.make_conversation(cases_world.channel_a, phone=conversation.contact.phone)
    with django_capture_on_commit_callbacks(execute=False):
        services.case_provide_update(case=case, conversation=reopened, info="123")

    later = timezone.now() + timedelta(minutes=10)
    assert stalled._redrive_lost_notices(cases_world.org_a.pk, later) == 0
