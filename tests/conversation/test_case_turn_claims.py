"""The two turns cases start hold their claims like the inbound turn does: a follow-up
whose claim was taken over ends quietly (it is not a task failure), and an attempt of a
case reply or a follow-up that fails after its claim counts toward ``TURN_MAX_ATTEMPTS`` —
so a poison trigger ends with the conversation at the team, instead of failing every
minute for ever with nobody told. Through the public path: the case answer (or the beat's
due follow-ups) enqueues the task, the sweeper re-drives it, a real turn runs."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from cases import services as case_services
from cases import tasks as case_tasks
from cases.models import CaseFollowUp
from conversation import tasks as turn_tasks
from conversation.models import Conversation, Handoff, Message, Turn
from conversation.sweeper import sweep_due_work
from conversation.turns import HANDOFF_NOTICE, pipeline
from tests import factories
from tests.cases.conftest import enable_cases, open_case

PHONE = "5511922221111"


@pytest.fixture
def case(world: Any) -> Any:
    """A case of org A's agent (cases on), opened in a conversation whose customer wrote an
    hour ago."""
    enable_cases(world.agent_a)
    conversation = factories.make_conversation(world.channel_a, phone=PHONE)
    factories.make_message(conversation, "Quero o reembolso do pedido 123")
    an_hour_ago = timezone.now() - timedelta(hours=1)
    Conversation.objects.filter(pk=conversation.pk).update(
        last_inbound_at=an_hour_ago, customer_wrote_at=an_hour_ago
    )
    conversation.refresh_from_db()
    return open_case(conversation)


def waiting_for_the_customer(case: Any, world: Any) -> CaseFollowUp:
    """The team asked the customer something: the case waits, its follow-up armed. (The
    relay turn's task is not run: only the follow-up matters here.)"""
    case_services.case_answer(
        case=case, actor=world.agent, action="need_lead_info", text="o CPF do titular."
    )
    return CaseFollowUp.objects.get(case=case, status="pending")


def outbound_bodies() -> list[str]:
    rows = Message.objects.filter(direction="outbound").order_by("created_at")
    return list(rows.values_list("body", flat=True))


def test_a_follow_up_whose_claim_was_taken_over_ends_quietly_and_writes_nothing(
    world, case, monkeypatch, caplog
):
    follow_up = waiting_for_the_customer(case, world)
    real = case_services.follow_up_fire

    def another_worker_takes_the_turn_over(**kwargs: Any) -> Any:
        result = real(**kwargs)
        Turn.objects.filter(pk=kwargs["turn"].pk).update(lease_token=uuid.uuid4())
        return result

    monkeypatch.setattr(case_services, "follow_up_fire", another_worker_takes_the_turn_over)
    with caplog.at_level(logging.INFO):
        result = turn_tasks.run_follow_up_turn.apply(args=[str(follow_up.pk)], throw=True).result

    assert result is None
    assert outbound_bodies() == []  # this attempt's nudge was never written
    assert "turn lost its claim: its outcome is dropped" in [r.getMessage() for r in caplog.records]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_case_reply_whose_guards_crash_counts_its_attempts_and_goes_to_the_team(
    world, case, settings, monkeypatch, django_capture_on_commit_callbacks
):
    # A bug in the case reply's claim-phase guards fails every delivery of the relay. Each
    # attempt must count, so that after TURN_MAX_ATTEMPTS the customer is told a person
    # takes over and the team gets the conversation — not a relay failing for ever.
    settings.TURN_MAX_ATTEMPTS = 3

    def crashes(ctx: Any) -> Any:
        raise ValueError("a bug this relay trips")

    monkeypatch.setattr(pipeline, "opted_out_guard", crashes)
    with django_capture_on_commit_callbacks(execute=True):  # the relay task: fails, logged
        event = case_services.case_answer(
            case=case, actor=world.agent, action="resolved", text="Reembolso aprovado."
        )
    turn = Turn.objects.get(trigger_kind="case_reply")  # the failed attempt left its turn
    assert (turn.trigger_key, turn.attempts, turn.status) == (str(event.pk), 1, "running")
    assert turn.lease_expires_at <= timezone.now()  # given back: the sweeper takes it over

    now = timezone.now()
    for sweep in range(1, 6):
        later = now + timedelta(seconds=sweep * 20)
        with (
            time_machine.travel(later, tick=False),
            django_capture_on_commit_callbacks(execute=True),
        ):
            sweep_due_work()

    turn.refresh_from_db()
    assert (turn.status, turn.outcome, turn.error_code) == (
        "failed",
        "handoff",
        "attempts_exhausted",
    )
    assert turn.attempts == settings.TURN_MAX_ATTEMPTS + 1
    assert outbound_bodies() == [HANDOFF_NOTICE]
    assert Handoff.objects.get().reason_code == "low_confidence"


def test_a_follow_up_that_fails_every_attempt_goes_to_the_team_and_stops_firing(
    world, case, settings, monkeypatch, django_capture_on_commit_callbacks
):
    # A bug in the case services fails every run of one follow-up. Before, each run rolled
    # back its own turn: nothing counted, the beat fired it again every minute, nobody knew.
    settings.TURN_MAX_ATTEMPTS = 3
    follow_up = waiting_for_the_customer(case, world)

    def crashes(**kwargs: Any) -> Any:
        raise ValueError("a bug this follow-up trips")

    monkeypatch.setattr(case_services, "follow_up_fire", crashes)
    start = follow_up.due_at + timedelta(minutes=1)
    for minute in range(6):  # the beat's due follow-ups, then the sweeper, once a minute
        with time_machine.travel(start + timedelta(minutes=minute), tick=False):
            with django_capture_on_commit_callbacks(execute=True):
                case_tasks.fire_due_follow_ups.apply()
            with django_capture_on_commit_callbacks(execute=True):
                sweep_due_work()

    turn = Turn.objects.get(trigger_kind="follow_up")
    assert (turn.status, turn.outcome, turn.error_code) == (
        "failed",
        "handoff",
        "attempts_exhausted",
    )
    assert turn.attempts == settings.TURN_MAX_ATTEMPTS + 1
    handoff = Handoff.objects.get()
    assert (handoff.status, handoff.reason_code) == ("open", "low_confidence")
    assert outbound_bodies() == []  # the customer asked nothing: no notice
    follow_up.refresh_from_db()
    assert follow_up.status == "cancelled"  # the handoff stopped it
    with time_machine.travel(start + timedelta(minutes=10), tick=False):
        assert case_tasks.fire_due_follow_ups.apply().get() == 0
