"""Webhook endpoints: authentication, validation, dedup, statuses, 404s — on real payloads."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import httpx
import pytest
import respx
from django.test import Client

from conversation.models import Message, MessageStatus, Turn
from conversation.outbox import outbound_enqueue
from tests import factories
from tests.conftest import simulator_post

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "whatsapp"


def waha_post(client, channel, body: bytes, secret: str):
    digest = hmac.new(secret.encode(), body, hashlib.sha512).hexdigest()
    return client.post(
        f"/webhooks/waha/{channel.pk}",
        data=body,
        content_type="application/json",
        HTTP_X_WEBHOOK_HMAC=digest,
        HTTP_X_WEBHOOK_HMAC_ALGORITHM="sha512",
    )


def meta_post(client, channel, body: bytes, secret: str):
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return client.post(
        f"/webhooks/meta/{channel.pk}",
        data=body,
        content_type="application/json",
        HTTP_X_HUB_SIGNATURE_256=f"sha256={digest}",
    )


def test_same_webhook_delivered_twice_stores_one_message_and_one_reply(
    world, django_capture_on_commit_callbacks
):
    client = Client()
    with django_capture_on_commit_callbacks(execute=True):
        first = simulator_post(client, world.channel_a, "oi", msg_id="dup-1")
    with django_capture_on_commit_callbacks(execute=True):
        second = simulator_post(client, world.channel_a, "oi", msg_id="dup-1")
    assert first.json()["stored"] == 1
    assert second.json() == {"ok": True, "stored": 0, "duplicates": 1, "statuses": 0}
    assert Message.objects.filter(direction="inbound").count() == 1
    assert Message.objects.filter(direction="outbound").count() == 1
    assert Turn.objects.count() == 1


def test_malformed_payload_gets_400_envelope_and_stores_nothing(world):
    response = Client().post(
        f"/webhooks/simulator/{world.channel_a.pk}",
        data=b"{not json",
        content_type="application/json",
        HTTP_X_SIMULATOR_SECRET=world.channel_a.webhook_secret,
    )
    assert response.status_code == 400
    assert set(response.json()["error"]) == {"code", "message"}
    assert Message.objects.count() == 0


def test_wrong_secret_gets_401_and_stores_nothing(world):
    response = Client().post(
        f"/webhooks/simulator/{world.channel_a.pk}",
        data=json.dumps({"from": "5511988887777", "text": "oi", "id": "x1"}),
        content_type="application/json",
        HTTP_X_SIMULATOR_SECRET="errado",
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_signature"
    assert Message.objects.count() == 0


def test_unknown_or_inactive_channel_gets_404(world):
    world.channel_a.is_active = False
    world.channel_a.save()
    inactive = simulator_post(Client(), world.channel_a, "oi", msg_id="i1")
    unknown = Client().post(
        "/webhooks/simulator/00000000-0000-0000-0000-000000000000",
        data=b"{}",
        content_type="application/json",
    )
    assert inactive.status_code == 404 and unknown.status_code == 404
    assert inactive.json()["error"]["code"] == "channel_not_found"


def test_provider_in_url_must_match_the_channel(world):
    response = waha_post(Client(), world.channel_a, b"{}", world.channel_a.webhook_secret)
    assert response.status_code == 404


def test_oversized_body_is_refused_with_413(world, settings):
    settings.WEBHOOK_MAX_BODY_BYTES = 100
    response = simulator_post(Client(), world.channel_a, "x" * 200, msg_id="big")
    assert response.status_code == 413
    assert Message.objects.count() == 0


def test_rate_limit_answers_429_per_channel(world, settings, one_rate_window):
    from django.core.cache import cache

    cache.clear()
    settings.WEBHOOK_RATE_LIMIT_PER_MINUTE = 2
    codes = [
        simulator_post(Client(), world.channel_a, "oi", msg_id=f"r{i}").status_code
        for i in range(3)
    ]
    other = simulator_post(Client(), world.channel_b, "oi", msg_id="other")
    cache.clear()
    assert codes == [200, 200, 429]
    assert other.status_code == 200


def test_waha_real_message_event_is_stored_and_from_me_starts_no_turn(
    world, django_capture_on_commit_callbacks
):
    channel = factories.make_channel(world.org_a, "waha", agent=world.agent_a)
    event = json.loads((FIXTURES / "waha" / "event_message_full_webjs_docs2023.json").read_text())
    event["payload"]["fromMe"] = False  # the recorded event is an echo; make it a customer's
    event["payload"]["_data"]["id"]["fromMe"] = False
    body = json.dumps(event).encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = waha_post(Client(), channel, body, channel.webhook_secret)
    assert response.status_code == 200, response.content
    inbound = Message.objects.get(channel=channel, direction="inbound")
    assert inbound.provider_message_id == event["payload"]["id"]

    echo = json.loads(body)
    echo["payload"]["id"] = "true_someone@c.us_ECHO1"
    echo["payload"]["fromMe"] = True
    with django_capture_on_commit_callbacks(execute=True):
        waha_post(Client(), channel, json.dumps(echo).encode(), channel.webhook_secret)
    from_me = Message.objects.get(provider_message_id="true_someone@c.us_ECHO1")
    assert from_me.direction == "outbound" and from_me.sender_kind == "human"
    assert not Turn.objects.filter(trigger_key=str(from_me.pk)).exists()


def test_meta_status_callback_moves_outbound_status_forward_only(world):
    channel = factories.make_channel(world.org_a, "meta", external_id="123")
    conversation = factories.make_conversation(channel)
    sent = factories.make_message(
        conversation,
        "olá",
        direction="outbound",
        sender_kind="ai",
        status=MessageStatus.SENT,
        provider_message_id="wamid.STATUS1",
    )

    def status_body(status: str) -> bytes:
        return json.dumps(
            {
                "object": "whatsapp_business_account",
                "entry": [
                    {
                        "id": "1",
                        "changes": [
                            {
                                "field": "messages",
                                "value": {
                                    "messaging_product": "whatsapp",
                                    "metadata": {
                                        "display_phone_number": "1",
                                        "phone_number_id": "123",
                                    },
                                    "statuses": [
                                        {
                                            "id": "wamid.STATUS1",
                                            "status": status,
                                            "timestamp": "1700000000",
                                            "recipient_id": "5511988887777",
                                        }
                                    ],
                                },
                            }
                        ],
                    }
                ],
            }
        ).encode()

    meta_post(Client(), channel, status_body("read"), channel.webhook_secret)
    meta_post(Client(), channel, status_body("delivered"), channel.webhook_secret)
    sent.refresh_from_db()
    assert sent.status == MessageStatus.READ


@pytest.mark.parametrize("provider", ["waha", "meta"])
def test_bad_signature_on_provider_webhooks_is_401(world, provider):
    channel = factories.make_channel(world.org_a, provider)
    body = b'{"event": "message"}'
    poster = waha_post if provider == "waha" else meta_post
    response = poster(Client(), channel, body, "not-the-secret")
    assert response.status_code == 401
    assert Message.objects.count() == 0


def test_meta_subscription_handshake_echoes_the_challenge_for_the_verify_token_only(world):
    channel = factories.make_channel(
        world.org_a, "meta", webhook_secret="app-secret", webhook_verify_token="verify-me"
    )
    url = f"/webhooks/meta/{channel.pk}"
    ok = Client().get(
        url, {"hub.mode": "subscribe", "hub.verify_token": "verify-me", "hub.challenge": "42"}
    )
    with_app_secret = Client().get(
        url, {"hub.mode": "subscribe", "hub.verify_token": "app-secret", "hub.challenge": "42"}
    )
    assert (ok.status_code, ok.content, ok["Content-Type"]) == (200, b"42", "text/plain")
    assert with_app_secret.status_code == 403
    assert with_app_secret.json()["error"]["code"] == "invalid_verify_token"


def test_meta_subscription_is_refused_while_no_verify_token_is_configured(world):
    channel = factories.make_channel(world.org_a, "meta", webhook_secret="app-secret")
    response = Client().get(
        f"/webhooks/meta/{channel.pk}",
        {"hub.mode": "subscribe", "hub.verify_token": "", "hub.challenge": "42"},
    )
    assert response.status_code == 403


def waha_sending_conversation(world):
    """A conversation on a WAHA channel the outbox sends through (http://waha.local)."""
    channel = factories.make_channel(
        world.org_a,
        "waha",
        agent=world.agent_a,
        external_id="default",
        api_base_url="http://waha.local",
        api_token="k",
    )
    return factories.make_conversation(channel, phone="5511988887777")


def test_the_echo_of_a_send_waha_accepted_without_an_id_gives_the_send_its_id(
    world, django_capture_on_commit_callbacks
):
    # WAHA (WEBJS) may answer sendText 201 with no body: the send is stored as sent under a
    # local "unknown-" id. Its ``fromMe`` echo then carries the real id: it is that send, not
    # a line typed on the business phone, and its receipts must find it.
    conversation = waha_sending_conversation(world)
    channel = conversation.channel
    with respx.mock() as mock:
        mock.post("http://waha.local/api/sendText").respond(201)
        with django_capture_on_commit_callbacks(execute=True):
            reply = outbound_enqueue(
                conversation=conversation, body="Seu pedido saiu.", sender_kind="ai"
            )
    reply.refresh_from_db()
    assert reply.status == "sent" and reply.provider_message_id.startswith("unknown-")

    event = json.loads((FIXTURES / "waha" / "event_message_full_webjs_docs2023.json").read_text())
    event["payload"].update(
        id="true_5511988887777@c.us_ECHO2",
        fromMe=True,
        body="Seu pedido saiu.",
        to="5511988887777@c.us",
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = waha_post(Client(), channel, json.dumps(event).encode(), channel.webhook_secret)

    assert response.status_code == 200
    reply.refresh_from_db()
    assert reply.provider_message_id == "true_5511988887777@c.us_ECHO2"
    assert list(
        Message.objects.filter(conversation=conversation, direction="outbound").values_list(
            "sender_kind", flat=True
        )
    ) == ["ai"]


def test_a_receipt_that_beats_the_sends_answer_is_applied_once_the_send_is_recorded(
    world, django_capture_on_commit_callbacks
):
    # WAHA posts its DEVICE ack (delivered) within milliseconds, often before sendText
    # answers with the id: the receipt matches no row yet. It must not be lost (answered
    # 200, the provider never sends it again).
    conversation = waha_sending_conversation(world)
    channel = conversation.channel
    sent_id = "true_5511988887777@c.us_EARLY1"
    ack = json.loads((FIXTURES / "waha" / "event_message_ack.json").read_text())
    ack["payload"].update(id=sent_id, ack=2, fromMe=True)
    ack["payload"].pop("ackName", None)

    def provider(request):
        early = waha_post(Client(), channel, json.dumps(ack).encode(), channel.webhook_secret)
        assert early.status_code == 200 and early.json()["statuses"] == 0  # nothing to match
        return httpx.Response(201, json={"id": sent_id})

    with respx.mock() as mock:
        mock.post("http://waha.local/api/sendText").mock(side_effect=provider)
        with django_capture_on_commit_callbacks(execute=True):
            reply = outbound_enqueue(conversation=conversation, body="Oi!", sender_kind="ai")

    reply.refresh_from_db()
    assert (reply.provider_message_id, reply.status) == (sent_id, "delivered")
