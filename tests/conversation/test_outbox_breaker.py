"""The per-channel circuit breaker, the resend after recovery and the sweeper."""

from __future__ import annotations

import json

import httpx
import pytest
import respx
from django.utils import timezone

from conversation import outbox
from conversation.models import ChannelSession, Message
from tests import factories
from tests.conversation._outbox_support import (
    WAHA_URL,
    drop_delayed,
    fake_waha,
    virtual_clock,
    waha_channel,
    waha_conversation,
)


@pytest.fixture(autouse=True)
def _no_wakeups_left_behind():
    yield
    drop_delayed()


def breaker(channel) -> tuple[str, int]:
    channel.refresh_from_db()
    return channel.breaker_state, channel.breaker_failures


def test_the_breaker_opens_after_consecutive_failures_and_holds_every_chain_of_the_channel(
    world, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.OUTBOX_BREAKER_THRESHOLD = 3
    settings.OUTBOX_BREAKER_COOLDOWN_S = 30
    channel = waha_channel(world.org_a)
    conversations = [waha_conversation(channel, phone=f"551196666000{i}") for i in range(4)]
    with (
        fake_waha() as provider,
        virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock,
    ):
        provider.down = True
        for conversation in conversations:
            clock.enqueue(conversation, "oi")
        assert provider.calls == 3  # the fourth reply found the breaker open
        assert breaker(channel) == ("open", 3)
        clock.run(29)
        assert provider.calls == 3  # nothing is attempted during the cool-down
        held = Message.objects.get(conversation=conversations[3])
        assert (held.status, held.attempts) == ("queued", 0)  # held, no attempt spent


def test_after_the_cool_down_one_probe_goes_out_and_a_failed_probe_reopens_the_breaker(
    world, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.OUTBOX_BREAKER_THRESHOLD = 2
    settings.OUTBOX_BREAKER_COOLDOWN_S = 30
    channel = waha_channel(world.org_a)
    conversations = [waha_conversation(channel, phone=f"551195555000{i}") for i in range(3)]
    with (
        fake_waha() as provider,
        virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock,
    ):
        provider.down = True
        for conversation in conversations:
            clock.enqueue(conversation, "oi")
        assert provider.calls == 2
        clock.run(32)  # the cool-down ends: the held chains wake, one of them probes
        assert provider.calls == 3
        channel.refresh_from_db()
        assert channel.breaker_state == "open"  # the probe failed: another cool-down
        assert channel.breaker_until > timezone.now()
        clock.run(31)
        assert provider.calls == 4  # one probe per cool-down, not one per conversation


def test_a_successful_probe_closes_the_breaker_and_resumes_every_chain_in_order(
    world, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.OUTBOX_BREAKER_THRESHOLD = 2
    settings.OUTBOX_BREAKER_COOLDOWN_S = 30
    channel = waha_channel(world.org_a)
    first, second = (waha_conversation(channel, phone=f"551194444000{i}") for i in range(2))
    with (
        fake_waha() as provider,
        virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock,
    ):
        provider.down = True
        clock.enqueue(first, "a1", "a2")
        clock.enqueue(second, "b1", "b2")
        assert breaker(channel)[0] == "open"
        provider.down = False
        clock.run(40)
    assert breaker(channel) == ("closed", 0)
    assert [t for t in provider.texts() if t.startswith("a")] == ["a1", "a2"]
    assert [t for t in provider.texts() if t.startswith("b")] == ["b1", "b2"]
    assert len(provider.sent) == 4
    assert set(Message.objects.values_list("status", flat=True)) == {"sent"}


def test_a_reply_held_past_its_horizon_fails_without_an_attempt(
    world, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.OUTBOX_BREAKER_THRESHOLD = 1
    settings.OUTBOX_BREAKER_COOLDOWN_S = 600
    settings.OUTBOX_RETRY_HORIZON_S = 120
    channel = waha_channel(world.org_a)
    opener, held = (waha_conversation(channel, phone=f"551193333000{i}") for i in range(2))
    with (
        fake_waha() as provider,
        virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock,
    ):
        provider.down = True
        clock.enqueue(opener, "abre o disjuntor")
        clock.enqueue(held, "espera")
        clock.run(700)  # the cool-down outlasts the horizon
        message = Message.objects.get(conversation=held)
    assert (message.status, message.failure_reason, message.attempts) == (
        "failed",
        "retry_horizon",
        0,
    )
    assert message.error_code == "circuit_open"
    assert provider.texts() == []


def test_replies_failed_while_the_provider_was_down_are_resent_once_and_in_order(
    world, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.OUTBOX_RETRY_HORIZON_S = 60
    settings.OUTBOX_BREAKER_COOLDOWN_S = 30
    channel = waha_channel(world.org_a)
    conversation = waha_conversation(channel)
    with (
        fake_waha() as provider,
        virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock,
    ):
        provider.down = True
        clock.enqueue(conversation, "um", "dois")
        clock.run(300, sweep_every=60)
        assert list(Message.objects.values_list("status", "failure_reason")) == [
            ("failed", "retry_horizon"),
            ("failed", "retry_horizon"),
        ]
        clock.enqueue(conversation, "três")  # written after the others failed
        provider.down = False
        clock.run(120, sweep_every=60)  # the sweeper finds the channel's probe due
    assert provider.texts() == ["um", "dois", "três"]  # once each, in the order written
    assert list(Message.objects.order_by("created_at").values_list("status", flat=True)) == [
        "sent",
        "sent",
        "sent",
    ]
    assert breaker(channel) == ("closed", 0)


def test_a_reply_the_provider_rejected_is_not_resent_after_recovery(
    world, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.OUTBOX_RETRY_HORIZON_S = 60
    channel = waha_channel(world.org_a)
    conversation = waha_conversation(channel)
    factories.make_message(
        conversation,
        "número inválido",
        direction="outbound",
        sender_kind="ai",
        status="failed",
        failure_reason="rejected",
        queued_at=timezone.now(),
    )
    with (
        fake_waha() as provider,
        virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock,
    ):
        clock.enqueue(conversation, "depois")
        clock.run(300, sweep_every=60)
    assert provider.texts() == ["depois"]


def test_the_sweeper_redrives_a_reply_whose_task_was_lost_in_every_organization(
    world, settings, django_capture_on_commit_callbacks
):
    settings.OUTBOX_SWEEP_GRACE_S = 30
    conversations = [
        waha_conversation(waha_channel(world.org_a)),
        waha_conversation(waha_channel(world.org_b)),
    ]
    with django_capture_on_commit_callbacks(execute=False):  # the broker lost both tasks
        for conversation in conversations:
            outbox.outbound_enqueue(conversation=conversation, body="oi", sender_kind="ai")
    now = timezone.now()
    with fake_waha() as provider:
        with django_capture_on_commit_callbacks(execute=True):
            assert outbox.sweep_due(now) == 0  # within the grace: its task may still run
        with django_capture_on_commit_callbacks(execute=True):
            assert outbox.sweep_due(now + timezone.timedelta(seconds=31)) == 2
        with django_capture_on_commit_callbacks(execute=True):
            assert outbox.sweep_due(now + timezone.timedelta(seconds=62)) == 0  # idempotent
    assert provider.texts() == ["oi", "oi"]
    assert set(Message.objects.values_list("status", flat=True)) == {"sent"}


def test_the_sweeper_leaves_a_channel_alone_while_its_breaker_holds_deliveries(
    world, settings, django_capture_on_commit_callbacks
):
    channel = waha_channel(world.org_a)
    conversation = waha_conversation(channel)
    with django_capture_on_commit_callbacks(execute=False):
        outbox.outbound_enqueue(conversation=conversation, body="oi", sender_kind="ai")
    now = timezone.now()
    ChannelSession.objects.filter(pk=channel.pk).update(
        breaker_state="open", breaker_until=now + timezone.timedelta(minutes=5)
    )
    later = now + timezone.timedelta(minutes=1)
    with django_capture_on_commit_callbacks(execute=True):
        assert outbox.sweep_due(later) == 0
        assert outbox.sweep_due(now + timezone.timedelta(minutes=6)) == 1  # the probe is due


def test_a_probe_the_provider_refuses_for_good_still_closes_the_breaker(
    world, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.OUTBOX_BREAKER_THRESHOLD = 1
    settings.OUTBOX_BREAKER_COOLDOWN_S = 30
    channel = waha_channel(world.org_a)
    bad, good = (waha_conversation(channel, phone=p) for p in ("5511900000001", "5511900000002"))
    answers = {
        "5511900000001@c.us": [httpx.Response(503), httpx.Response(400, json={"message": "x"})],
        "5511900000002@c.us": [httpx.Response(201, json={"id": "true_ok_1"})],
    }

    def provider(request: httpx.Request) -> httpx.Response:
        return answers[json.loads(request.content)["chatId"]].pop(0)

    with (
        respx.mock() as mock,
        virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock,
    ):
        mock.post(f"{WAHA_URL}/api/sendText").mock(side_effect=provider)
        clock.enqueue(bad, "para um número inválido")
        assert breaker(channel)[0] == "open"
        clock.run(32)  # the cool-down ends; the bad number's chain is the probe
        clock.enqueue(good, "para um número bom")
        clock.run(30)
    assert breaker(channel) == ("closed", 0)
    assert Message.objects.get(conversation=bad).failure_reason == "rejected"
    assert Message.objects.get(conversation=good).status == "sent"
