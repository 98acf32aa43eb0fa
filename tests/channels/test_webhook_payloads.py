"""The webhook view on poison payloads, batches and numbers: 200 when something was accepted,
400 with a code when nothing was, never 5xx; statuses only move forward."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import DataError

from conversation import webhooks
from conversation.channels.base import (
    MAX_KIND_LENGTH,
    MAX_MESSAGE_ID_LENGTH,
    MAX_NAME_LENGTH,
    MAX_PHONE_LENGTH,
)
from conversation.models import Contact, Message, MessageStatus
from tests import factories

from ._webhooks import (
    META_NUMBER,
    WAHA_SESSION,
    meta_body,
    meta_post,
    meta_text,
    waha_ack,
    waha_message,
    waha_post,
)


@pytest.fixture
def meta(world: Any) -> Any:
    return factories.make_channel(world.org_a, "meta", external_id=META_NUMBER)


@pytest.fixture
def waha(world: Any) -> Any:
    return factories.make_channel(world.org_a, "waha", external_id=WAHA_SESSION)


def _ids(channel: Any) -> set[str]:
    return set(
        Message.objects.filter(channel=channel).values_list("provider_message_id", flat=True)
    )


def test_storage_bounds_mirror_the_model_columns():
    assert Message._meta.get_field("provider_message_id").max_length == MAX_MESSAGE_ID_LENGTH
    # A quoted id (``_parsing.optional_id``) is bounded like a message id.
    assert Message._meta.get_field("reply_to").max_length == MAX_MESSAGE_ID_LENGTH
    assert Contact._meta.get_field("phone").max_length == MAX_PHONE_LENGTH
    assert Contact._meta.get_field("name").max_length == MAX_NAME_LENGTH
    assert Message._meta.get_field("kind").max_length == MAX_KIND_LENGTH


def test_meta_batch_with_poison_events_stores_every_valid_one(meta):
    body = meta_body(
        [
            meta_text("wamid.OK1", body="primeira\x00"),
            meta_text("x" * 201),
            meta_text("wamid.LONGPHONE", sender="5" * 65),
            {"id": "wamid.NOSENDER", "type": "text", "timestamp": "1"},
            meta_text("wamid.OK2", body="segunda \ud800"),
        ]
    )

    response = meta_post(meta, json.dumps(body).encode())

    assert response.status_code == 200, response.content
    assert response.json() == {
        "ok": True,
        "stored": 2,
        "duplicates": 0,
        "statuses": 0,
        "rejected": 3,
    }
    assert _ids(meta) == {"wamid.OK1", "wamid.OK2"}
    bodies = sorted(Message.objects.filter(channel=meta).values_list("body", flat=True))
    assert bodies == ["primeira", "segunda \ufffd"]


def test_meta_body_whose_every_event_is_poison_answers_400_with_the_first_code(meta):
    body = meta_body([meta_text("x" * 300), meta_text("wamid.P", sender="9" * 80)])

    response = meta_post(meta, json.dumps(body).encode())

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_id"
    assert _ids(meta) == set()


def test_meta_events_for_another_phone_number_id_store_nothing(meta):
    other = meta_body([meta_text("wamid.FOR_B")], number="109876543210")
    response = meta_post(meta, json.dumps(other).encode())

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "wrong_channel"
    assert Message.objects.filter(provider_message_id="wamid.FOR_B").count() == 0
    assert Contact.objects.filter(phone="5511988887777").count() == 0


def test_meta_body_mixing_two_numbers_stores_only_this_channels_events(meta):
    body = meta_body([meta_text("wamid.OURS")])
    body["entry"] += meta_body([meta_text("wamid.THEIRS")], number="109876543210")["entry"]

    response = meta_post(meta, json.dumps(body).encode())

    assert (response.status_code, response.json()["rejected"]) == (200, 1)
    assert Message.objects.filter(provider_message_id__startswith="wamid.").count() == 1
    assert _ids(meta) == {"wamid.OURS"}


def test_waha_event_from_another_session_stores_nothing(waha):
    response = waha_post(
        waha, json.dumps(waha_message("false_x@c.us_S1", session="other")).encode()
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "wrong_channel"
    assert _ids(waha) == set()


def test_waha_event_of_the_channels_session_is_stored(waha):
    response = waha_post(waha, json.dumps(waha_message("false_x@c.us_S2")).encode())

    assert (response.status_code, response.json()["stored"]) == (200, 1)


def test_waha_event_with_an_overlong_id_is_a_400_not_a_500(waha):
    response = waha_post(waha, json.dumps(waha_message("i" * 250)).encode())

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_id"
    assert _ids(waha) == set()


def test_channel_without_an_external_id_cannot_check_the_number_and_accepts(world):
    unset = factories.make_channel(world.org_a, "meta")
    body = meta_body([meta_text("wamid.UNSET")], number="anything")

    response = meta_post(unset, json.dumps(body).encode())

    assert (response.status_code, response.json()["stored"]) == (200, 1)


def test_an_event_the_database_refuses_is_rejected_alone(meta, monkeypatch):
    real = webhooks.webhook_receive

    def refusing(*, channel: Any, parsed: Any, **options: Any) -> Any:
        if any(m.provider_message_id == "wamid.BAD" for m in parsed.messages):
            raise DataError("value too long for type character varying(200)")
        return real(channel=channel, parsed=parsed, **options)

    monkeypatch.setattr(webhooks, "webhook_receive", refusing)
    body = meta_body([meta_text("wamid.BAD"), meta_text("wamid.GOOD")])

    response = meta_post(meta, json.dumps(body).encode())

    assert (response.status_code, response.json()["rejected"]) == (200, 1)
    assert _ids(meta) == {"wamid.GOOD"}


def _sent(channel: Any, provider_id: str, status: str) -> Message:
    conversation = factories.make_conversation(channel, phone="5511900001111")
    return factories.make_message(
        conversation,
        "olá",
        direction="outbound",
        sender_kind="ai",
        status=status,
        provider_message_id=provider_id,
    )


@pytest.mark.parametrize("confirmed", [MessageStatus.DELIVERED, MessageStatus.READ])
def test_late_waha_ack_error_never_overwrites_a_confirmed_delivery(waha, confirmed):
    message = _sent(waha, "true_5511900001111@c.us_LATE", confirmed)

    response = waha_post(waha, json.dumps(waha_ack(message.provider_message_id, -1)).encode())

    message.refresh_from_db()
    assert response.status_code == 200
    assert (message.status, message.error_code) == (confirmed, "")


def test_waha_ack_error_after_sent_marks_the_message_failed(waha):
    message = _sent(waha, "true_5511900001111@c.us_FAIL", MessageStatus.SENT)

    waha_post(waha, json.dumps(waha_ack(message.provider_message_id, -1)).encode())

    message.refresh_from_db()
    assert message.status == MessageStatus.FAILED
    assert message.error_code


def test_out_of_order_acks_only_move_the_status_forward(waha):
    message = _sent(waha, "true_5511900001111@c.us_ORDER", MessageStatus.SENT)

    for ack in (3, 2, 1, -1):  # read, then the late delivered, sent and error
        waha_post(waha, json.dumps(waha_ack(message.provider_message_id, ack)).encode())

    message.refresh_from_db()
    assert message.status == MessageStatus.READ


def test_webhook_answers_200_once_stored_even_when_the_broker_refuses_the_publish(
    meta, settings, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    from kombu.exceptions import OperationalError

    from conversation.dispatch import task_named

    def broker_down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to redis:6379. Connection refused.")

    settings.TASKS_IN_PROCESS = False
    monkeypatch.setattr(task_named("conversation.run_inbound_turn"), "apply_async", broker_down)
    body = meta_body([meta_text("wamid.BROKER")])

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = meta_post(meta, json.dumps(body).encode())

    assert (response.status_code, response.json()["stored"]) == (200, 1)
    assert callbacks  # the publish did run on commit, and failed
    assert _ids(meta) == {"wamid.BROKER"}
    (record,) = [r for r in caplog.records if r.getMessage() == "task publish failed"]
    message = Message.objects.get(provider_message_id="wamid.BROKER")
    assert (record.task, record.task_args) == ("conversation.run_inbound_turn", [str(message.pk)])
