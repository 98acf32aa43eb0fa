"""The outbox: stored first, delivered in order, retried with backoff, never lost."""

from __future__ import annotations

import json

import httpx
import pytest
import respx
from django.utils import timezone

from conversation.handoff import perform_human_handoff
from conversation.models import HandoffReason, Message, SenderKind
from conversation.outbox import outbound_enqueue
from tests import factories
from tests.conversation._outbox_support import drop_delayed, virtual_clock

WAHA_URL = "http://waha.local"


@pytest.fixture(autouse=True)
def _no_wakeups_left_behind():
    yield
    drop_delayed()


def waha_conversation(world):
    channel = factories.make_channel(
        world.org_a, "waha", external_id="default", api_base_url=WAHA_URL, api_token="k"
    )
    return factories.make_conversation(channel, phone="5511977776666")


@respx.mock
def test_provider_outage_retries_until_the_horizon_then_marks_failed_and_keeps_the_message(
    world, settings, monkeypatch, django_capture_on_commit_callbacks
):
    # Issue 10 changed this behaviour: no fixed budget of attempts any more (it was
    # OUTBOX_MAX_ATTEMPTS=3 → 3 calls here); retries back off until the retry horizon.
    settings.OUTBOX_RETRY_HORIZON_S = 60
    settings.OUTBOX_BREAKER_THRESHOLD = 1000  # this test is about the backoff alone
    route = respx.post(f"{WAHA_URL}/api/sendText").mock(return_value=httpx.Response(503))
    conversation = waha_conversation(world)
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        clock.enqueue(conversation, "Seu pedido saiu.")
        clock.run(59)
        assert Message.objects.get().status == "queued"  # still trying inside the horizon
        clock.run(600)
    message = Message.objects.get()
    assert (message.status, message.failure_reason, message.body) == (
        "failed",
        "retry_horizon",
        "Seu pedido saiu.",
    )
    assert message.error_code == "provider_unavailable"
    assert route.call_count == message.attempts > 3  # more than the old budget, then it stops


@respx.mock
def test_provider_back_after_an_outage_delivers_in_order(
    world, monkeypatch, django_capture_on_commit_callbacks
):
    route = respx.post(f"{WAHA_URL}/api/sendText")
    route.side_effect = [
        httpx.Response(503),
        httpx.Response(201, json={"id": {"_serialized": "true_5511977776666@c.us_A1"}}),
        httpx.Response(201, json={"id": {"_serialized": "true_5511977776666@c.us_A2"}}),
    ]
    conversation = waha_conversation(world)
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        clock.enqueue(conversation, "primeira", "segunda")
        clock.run(60)
    sent_texts = [json_body(call)["text"] for call in route.calls]
    assert sent_texts == ["primeira", "primeira", "segunda"]
    assert list(Message.objects.order_by("created_at").values_list("status", flat=True)) == [
        "sent",
        "sent",
    ]


@respx.mock
def test_permanent_provider_error_is_not_retried(
    world, monkeypatch, django_capture_on_commit_callbacks
):
    route = respx.post(f"{WAHA_URL}/api/sendText").mock(
        return_value=httpx.Response(400, json={"message": "bad chat id"})
    )
    conversation = waha_conversation(world)
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        clock.enqueue(conversation, "oi")
        clock.run(3600)
    assert route.call_count == 1
    message = Message.objects.get()
    assert (message.status, message.failure_reason) == ("failed", "rejected")


@respx.mock
def test_meta_free_text_outside_the_24h_window_is_refused_before_any_call(
    world, django_capture_on_commit_callbacks
):
    route = respx.route(host="graph.facebook.com")
    channel = factories.make_channel(world.org_a, "meta", external_id="123", api_token="t")
    conversation = factories.make_conversation(channel)
    conversation.customer_wrote_at = timezone.now() - timezone.timedelta(hours=25)
    conversation.save()
    with django_capture_on_commit_callbacks(execute=True):
        outbound_enqueue(conversation=conversation, body="Oi, ainda precisa?", sender_kind="ai")
    message = Message.objects.get()
    assert (message.status, message.error_code) == ("refused", "outside_service_window")
    assert route.call_count == 0


def json_body(call) -> dict:
    return json.loads(call.request.content)


@respx.mock
def test_an_ai_reply_is_not_sent_once_a_person_took_the_conversation_over(
    world, monkeypatch, django_capture_on_commit_callbacks
):
    # The AI's reply waits out an outage; meanwhile a person of the team takes the
    # conversation (the customer is theirs now). When the provider is back the AI reply is
    # refused before any call; what the person's side sends still goes out.
    route = respx.post(f"{WAHA_URL}/api/sendText")
    route.side_effect = [
        httpx.Response(503),
        httpx.Response(201, json={"id": {"_serialized": "true_5511977776666@c.us_H1"}}),
    ]
    conversation = waha_conversation(world)
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        (ai_reply,) = clock.enqueue(conversation, "Seu reembolso foi pago, ok?")
        with django_capture_on_commit_callbacks(execute=True):
            perform_human_handoff(conversation=conversation, reason_code=HandoffReason.MANUAL)
            system = outbound_enqueue(
                conversation=conversation,
                body="Uma pessoa da equipe vai seguir com você.",
                sender_kind=SenderKind.SYSTEM,
            )
        clock.run(120)
    ai_reply.refresh_from_db()
    system.refresh_from_db()
    assert (ai_reply.status, ai_reply.error_code) == ("refused", "human_owns")
    assert system.status == "sent"
    sent = [json_body(call)["text"] for call in route.calls]
    assert sent == ["Seu reembolso foi pago, ok?", "Uma pessoa da equipe vai seguir com você."]
    assert route.call_count == 2  # the refused reply never reached the provider again


@respx.mock
def test_the_last_words_of_a_turn_that_handed_off_itself_are_sent(
    world, django_capture_on_commit_callbacks
):
    route = respx.post(f"{WAHA_URL}/api/sendText").mock(
        return_value=httpx.Response(201, json={"id": {"_serialized": "true_x@c.us_H2"}})
    )
    conversation = waha_conversation(world)
    turn = factories.make_turn(conversation, outcome="handoff")
    with django_capture_on_commit_callbacks(execute=True):
        perform_human_handoff(conversation=conversation, reason_code=HandoffReason.LOW_CONFIDENCE)
        farewell = outbound_enqueue(
            conversation=conversation,
            body="Vou te passar para uma pessoa da equipe.",
            sender_kind=SenderKind.AI,
            turn=turn,
        )
    farewell.refresh_from_db()
    assert farewell.status == "sent" and route.call_count == 1
