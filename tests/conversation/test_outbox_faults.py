"""The outbox under faults that end in an unknown or stale state: the provider took the
message but its answer was lost, the database blinked between the send and its record, a
receipt of an old send arrives for a message staff re-queued, the channel's credentials
expired. Each is driven through the public path (signed webhooks, a real turn, the real
outbox against a fake WAHA at the HTTP level), with one virtual clock for retries."""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx
import pytest
import respx
from django.db import OperationalError
from django.test import Client

from conversation.models import Message, Turn
from conversation.outbox import chain, message_resend
from tests.conversation._outbox_support import (
    WAHA_URL,
    drop_delayed,
    virtual_clock,
    waha_channel,
)
from tests.faults.harness import post_waha as harness_post_waha
from tests.faults.harness import waha_event

PHONE = "5511977776666"
CHAT = f"{PHONE}@c.us"
_ids = itertools.count(1)


@pytest.fixture(autouse=True)
def _no_wakeups_left_behind():
    yield
    drop_delayed()


@pytest.fixture
def waha(world):
    """A WAHA channel of the world's agent, sending to ``WAHA_URL``."""
    return waha_channel(world.org_a, agent=world.agent_a, webhook_secret="segredo-waha")


def post_waha(channel: Any, event: dict[str, Any]) -> int:
    return harness_post_waha(Client(), channel, event)


def customer_writes(channel: Any, text: str = "oi") -> int:
    event = waha_event(
        session=channel.external_id,
        phone=PHONE,
        text=text,
        message_id=f"false_{CHAT}_C{next(_ids)}",
    )
    return post_waha(channel, event)


def echo_of(channel: Any, text: str, provider_id: str) -> dict[str, Any]:
    """WAHA's ``fromMe`` event for a message the business number sent."""
    event = waha_event(session=channel.external_id, phone=PHONE, text=text, message_id=provider_id)
    event["payload"].update(fromMe=True, to=CHAT)
    return event


def outbound() -> list[tuple[str, str, str]]:
    return list(
        Message.objects.filter(direction="outbound")
        .order_by("created_at")
        .values_list("sender_kind", "status", "provider_message_id")
    )


# --- the provider took it, the answer never came back ---------------------------------------


@respx.mock
def test_a_send_whose_answer_was_lost_is_not_sent_again_once_its_echo_came_back(
    world, waha, monkeypatch, django_capture_on_commit_callbacks
):
    # WAHA accepts the reply and posts its ``fromMe`` echo at once, but the HTTP answer of
    # sendText is lost (read timeout). The outbox must not send the customer the same reply
    # again: the echo is the proof it went out.
    accepted: list[str] = []

    def provider(request: httpx.Request) -> httpx.Response:
        text = json.loads(request.content)["text"]
        accepted.append(text)
        if len(accepted) == 1:
            provider_id = f"true_{CHAT}_ECHO{len(accepted)}"
            assert post_waha(waha, echo_of(waha, text, provider_id)) == 200
            raise httpx.ReadTimeout("the answer was lost", request=request)
        return httpx.Response(201, json={"id": f"true_{CHAT}_OK{len(accepted)}"})

    respx.post(f"{WAHA_URL}/api/sendText").mock(side_effect=provider)
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        with django_capture_on_commit_callbacks(execute=True):
            assert customer_writes(waha) == 200
        clock.run(600, sweep_every=15)

    assert len(accepted) == 1, accepted  # the customer got the reply once
    assert outbound() == [("ai", "sent", f"true_{CHAT}_ECHO1")]  # one row: ours, with the id
    assert Turn.objects.get().outcome == "replied"


# --- the database blinked between the send and its record ------------------------------------


@respx.mock
def test_a_send_the_provider_took_is_recorded_after_a_database_blink_not_sent_again(
    world, waha, monkeypatch, django_capture_on_commit_callbacks
):
    # The provider took the reply (no echo: Meta sends none), then the database connection
    # dropped as the outbox wrote down the answer. The send's outcome is known in memory: it
    # must be written once the database answers again, never re-sent after the lease.
    accepted: list[str] = []

    def provider(request: httpx.Request) -> httpx.Response:
        accepted.append(json.loads(request.content)["text"])
        return httpx.Response(201, json={"id": f"true_{CHAT}_DB{len(accepted)}"})

    real = chain.record_sent
    blinks: list[int] = []

    def record_after_a_blink(*args: Any, **kwargs: Any) -> Any:
        if not blinks:
            blinks.append(1)
            raise OperationalError("server closed the connection unexpectedly")
        return real(*args, **kwargs)

    monkeypatch.setattr(chain, "record_sent", record_after_a_blink)
    respx.post(f"{WAHA_URL}/api/sendText").mock(side_effect=provider)
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        with django_capture_on_commit_callbacks(execute=True):
            assert customer_writes(waha) == 200
        clock.run(600, sweep_every=15)

    assert blinks == [1]
    assert len(accepted) == 1, accepted
    assert outbound() == [("ai", "sent", f"true_{CHAT}_DB1")]


# --- a receipt of the old send, for a message staff put back in the chain ---------------------


def ack_of(channel: Any, provider_id: str, ack: int) -> dict[str, Any]:
    """WAHA's ``message.ack`` for one of our sends (-1: failed, 2: delivered, 3: read)."""
    return {
        "event": "message.ack",
        "session": channel.external_id,
        "engine": "WEBJS",
        "payload": {"id": provider_id, "from": CHAT, "fromMe": True, "ack": ack},
    }


@respx.mock
def test_a_late_receipt_of_the_failed_send_does_not_undo_the_staff_resend(
    world, waha, monkeypatch, django_capture_on_commit_callbacks
):
    # The reply went out and WAHA reported it failed (ack -1). Staff press "Reenviar"; the
    # provider is briefly down, so the resend waits in the chain. WAHA then re-posts the old
    # ack -1 (webhooks are redelivered): it is about the old send, not the one in the chain.
    responses = iter(
        [
            httpx.Response(201, json={"id": f"true_{CHAT}_OLD"}),
            httpx.Response(503),
            httpx.Response(201, json={"id": f"true_{CHAT}_NEW"}),
        ]
    )
    route = respx.post(f"{WAHA_URL}/api/sendText").mock(side_effect=lambda _r: next(responses))
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        with django_capture_on_commit_callbacks(execute=True):
            assert customer_writes(waha) == 200
            assert post_waha(waha, ack_of(waha, f"true_{CHAT}_OLD", -1)) == 200
        reply = Message.objects.get(direction="outbound")
        assert (reply.status, reply.failure_reason) == ("failed", "provider_status")

        with django_capture_on_commit_callbacks(execute=True):
            assert message_resend(message=reply, actor=world.agent)  # the provider is down
        assert Message.objects.get(pk=reply.pk).status == "queued"  # backing off
        with django_capture_on_commit_callbacks(execute=True):
            assert post_waha(waha, ack_of(waha, f"true_{CHAT}_OLD", -1)) == 200  # redelivered
        clock.run(600, sweep_every=15)

    reply.refresh_from_db()
    assert route.call_count == 3
    assert (reply.status, reply.provider_message_id) == ("sent", f"true_{CHAT}_NEW")


# --- the channel's credentials stopped working ---------------------------------------------


@respx.mock
def test_replies_refused_for_the_channels_credentials_go_out_once_they_are_fixed(
    world, waha, monkeypatch, django_capture_on_commit_callbacks
):
    # WAHA answers 401 (its API key was rotated; a Meta token expired the same way): no
    # message of the channel can go out, whatever its text. That is the channel being down,
    # not this reply being refused: it waits, and goes out once an admin fixes the key.
    fixed: list[int] = []

    def provider(request: httpx.Request) -> httpx.Response:
        if not fixed:
            return httpx.Response(401, json={"message": "Unauthorized"})
        return httpx.Response(201, json={"id": f"true_{CHAT}_AUTH"})

    route = respx.post(f"{WAHA_URL}/api/sendText").mock(side_effect=provider)
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        with django_capture_on_commit_callbacks(execute=True):
            assert customer_writes(waha) == 200
        clock.run(300, sweep_every=15)
        refused = route.call_count
        assert Message.objects.get(direction="outbound").status == "queued"
        fixed.append(1)  # the admin saved the new key
        clock.run(600, sweep_every=15)

    assert refused < 20  # the breaker held the channel: probes, not a storm
    assert outbound() == [("ai", "sent", f"true_{CHAT}_AUTH")]


# --- a file staff uploaded is not there when the delivery runs --------------------------------


@respx.mock
def test_an_uploaded_file_the_worker_cannot_read_fails_at_once_and_does_not_block_the_chat(
    world, waha, settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    # Staff send a PDF from the conversation page; the worker that delivers it cannot read
    # the stored file (local MEDIA_ROOT on the web host, a bucket rule that removed it). The
    # file will not come back by retrying: the message fails at once, with a reason staff
    # can read, and the AI's reply written after it is not held behind it for hours.
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.MEDIA_ROOT = str(tmp_path)
    texts = itertools.count(1)
    respx.post(f"{WAHA_URL}/api/sendText").mock(
        side_effect=lambda _r: httpx.Response(201, json={"id": f"true_{CHAT}_T{next(texts)}"})
    )
    sent_file = respx.post(f"{WAHA_URL}/api/sendFile").respond(201, json={"id": "x"})
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        with django_capture_on_commit_callbacks(execute=True):
            assert customer_writes(waha, "oi") == 200
        conversation = Message.objects.get(direction="inbound").conversation
        with django_capture_on_commit_callbacks(execute=False):  # the delivery waits
            world.client_for(world.agent).post(
                f"/conversas/{conversation.pk}/arquivo/",
                {
                    "kind": "document",
                    "file": SimpleUploadedFile("boleto.pdf", b"%PDF-1.4", "application/pdf"),
                },
            )
        document = Message.objects.get(kind="document")
        document.media_file.storage.delete(document.media_file.name)  # not on this host
        with django_capture_on_commit_callbacks(execute=True):
            assert customer_writes(waha, "mandou?") == 200
        clock.run(60, sweep_every=15)

    document.refresh_from_db()
    assert (document.status, document.failure_reason) == ("failed", "rejected")
    assert document.error_code == "media_unavailable"
    assert sent_file.call_count == 0
    replies = Message.objects.filter(direction="outbound", sender_kind="ai")
    assert set(replies.values_list("status", flat=True)) == {"sent"}


# --- the id the provider gave is already on another of our messages --------------------------


@respx.mock
def test_a_send_whose_id_another_reply_already_holds_is_recorded_not_sent_every_minute(
    world, waha, monkeypatch, django_capture_on_commit_callbacks
):
    # WAHA (WEBJS) took the first reply without telling its id (stored under a local
    # ``unknown-`` id). The second reply has the same text; its ``fromMe`` echo arrives
    # before the send's answer and, by its text, gives its id to the first reply. Then the
    # send answers with that id: already held. The provider took the message — it must be
    # recorded as sent, never left ``sending`` and re-sent once its lease lapses.
    accepted: list[str] = []

    def provider(request: httpx.Request) -> httpx.Response:
        text = json.loads(request.content)["text"]
        accepted.append(text)
        if len(accepted) == 1:
            return httpx.Response(201)  # no body: the id is unknown
        provider_id = f"true_{CHAT}_SECOND{len(accepted)}"
        assert post_waha(waha, echo_of(waha, text, provider_id)) == 200
        return httpx.Response(201, json={"id": provider_id})

    respx.post(f"{WAHA_URL}/api/sendText").mock(side_effect=provider)
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        with django_capture_on_commit_callbacks(execute=True):
            assert customer_writes(waha, "oi") == 200
        clock.run(5)
        with django_capture_on_commit_callbacks(execute=True):
            assert customer_writes(waha, "oi") == 200
        clock.run(600, sweep_every=15)

    assert len(accepted) == 2, accepted  # one send per reply, none repeated
    assert [status for _, status, _ in outbound()] == ["sent", "sent"]
