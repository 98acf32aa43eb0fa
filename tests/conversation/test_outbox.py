"""The outbox: stored first, delivered in order, retried with backoff, never lost."""

from __future__ import annotations

import httpx
import respx
from django.utils import timezone

from conversation import dispatch
from conversation.models import Message
from conversation.outbox import outbound_enqueue
from tests import factories

WAHA_URL = "http://waha.local"


def waha_conversation(world):
    channel = factories.make_channel(
        world.org_a, "waha", external_id="default", api_base_url=WAHA_URL, api_token="k"
    )
    return factories.make_conversation(channel, phone="5511977776666")


def run_all_delayed(capture) -> None:
    while dispatch.pending_delayed():
        with capture(execute=True):
            dispatch.run_delayed()


@respx.mock
def test_provider_outage_retries_then_marks_failed_and_keeps_the_message(
    world, settings, django_capture_on_commit_callbacks
):
    settings.OUTBOX_MAX_ATTEMPTS = 3
    route = respx.post(f"{WAHA_URL}/api/sendText").mock(return_value=httpx.Response(503))
    conversation = waha_conversation(world)
    with django_capture_on_commit_callbacks(execute=True):
        outbound_enqueue(conversation=conversation, body="Seu pedido saiu.", sender_kind="ai")
    run_all_delayed(django_capture_on_commit_callbacks)
    message = Message.objects.get()
    assert route.call_count == 3
    assert (message.status, message.attempts, message.body) == ("failed", 3, "Seu pedido saiu.")


@respx.mock
def test_provider_back_after_an_outage_delivers_in_order(world, django_capture_on_commit_callbacks):
    route = respx.post(f"{WAHA_URL}/api/sendText")
    route.side_effect = [
        httpx.Response(503),
        httpx.Response(201, json={"id": {"_serialized": "true_5511977776666@c.us_A1"}}),
        httpx.Response(201, json={"id": {"_serialized": "true_5511977776666@c.us_A2"}}),
    ]
    conversation = waha_conversation(world)
    with django_capture_on_commit_callbacks(execute=True):
        outbound_enqueue(conversation=conversation, body="primeira", sender_kind="ai")
        outbound_enqueue(conversation=conversation, body="segunda", sender_kind="ai")
    run_all_delayed(django_capture_on_commit_callbacks)
    sent_texts = [json_body(call)["text"] for call in route.calls]
    assert sent_texts == ["primeira", "primeira", "segunda"]
    assert list(Message.objects.order_by("created_at").values_list("status", flat=True)) == [
        "sent",
        "sent",
    ]


@respx.mock
def test_permanent_provider_error_is_not_retried(world, django_capture_on_commit_callbacks):
    route = respx.post(f"{WAHA_URL}/api/sendText").mock(
        return_value=httpx.Response(400, json={"message": "bad chat id"})
    )
    conversation = waha_conversation(world)
    with django_capture_on_commit_callbacks(execute=True):
        outbound_enqueue(conversation=conversation, body="oi", sender_kind="ai")
    run_all_delayed(django_capture_on_commit_callbacks)
    assert route.call_count == 1
    assert Message.objects.get().status == "failed"


@respx.mock
def test_meta_free_text_outside_the_24h_window_is_refused_before_any_call(
    world, django_capture_on_commit_callbacks
):
    route = respx.route(host="graph.facebook.com")
    channel = factories.make_channel(world.org_a, "meta", external_id="123", api_token="t")
    conversation = factories.make_conversation(channel)
    conversation.last_inbound_at = timezone.now() - timezone.timedelta(hours=25)
    conversation.save()
    with django_capture_on_commit_callbacks(execute=True):
        outbound_enqueue(conversation=conversation, body="Oi, ainda precisa?", sender_kind="ai")
    message = Message.objects.get()
    assert (message.status, message.error_code) == ("refused", "outside_service_window")
    assert route.call_count == 0


def json_body(call) -> dict:
    import json

    return json.loads(call.request.content)
