from __future__ import annotations

import pytest
import respx

from conversation.channels.base import ChannelConfig, SignatureError, WebhookError
from conversation.channels.simulator import SimulatorAdapter

from ._support import FIXED_NOW, encode

CONFIG = ChannelConfig(provider="simulator", external_id="sim-1")
VALID = {"from": "5511988887777", "name": "Maria", "text": "Oi, tudo bem?", "id": "c-01HZX7"}


@pytest.fixture
def adapter(fixed_clock) -> SimulatorAdapter:
    return SimulatorAdapter(clock=fixed_clock)


def test_parse_valid_message_from_the_simulator_page(adapter):
    (message,) = adapter.parse_webhook(encode(VALID)).messages

    assert message.provider_message_id == "c-01HZX7"
    assert message.from_phone == "5511988887777"
    assert message.from_name == "Maria"
    assert message.body == "Oi, tudo bem?"
    assert message.kind == "text"
    assert message.from_me is False
    assert message.timestamp == FIXED_NOW


def test_parse_name_is_optional_and_reply_to_is_kept(adapter):
    data = {k: v for k, v in VALID.items() if k != "name"} | {"reply_to": "sim-abc123"}

    (message,) = adapter.parse_webhook(encode(data)).messages

    assert (message.from_name, message.reply_to) == ("", "sim-abc123")


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"from": None}, "invalid_sender"),
        ({"from": "+5511988887777"}, "invalid_sender"),
        ({"from": "55 11 98888"}, "invalid_sender"),
        ({"from": "1234567"}, "invalid_sender"),
        ({"from": "٥٥١١٩٨٨٨٨٧٧٧٧"}, "invalid_sender"),  # non-ASCII digits
        ({"text": ""}, "invalid_text"),
        ({"text": "   "}, "invalid_text"),
        ({"text": 42}, "invalid_text"),
        ({"text": "a" * 4097}, "invalid_text"),
        ({"id": ""}, "missing_id"),
        ({"id": "has space"}, "missing_id"),
        ({"id": "x" * 129}, "missing_id"),
        ({"id": 7}, "missing_id"),
        ({"name": 3}, "invalid_name"),
        ({"name": "n" * 101}, "invalid_name"),
        ({"reply_to": "a b"}, "invalid_reply_to"),
        ({"extra": True}, "unknown_field"),
    ],
)
def test_parse_rejects_anything_outside_the_documented_shape(adapter, change, code):
    with pytest.raises(WebhookError) as caught:
        adapter.parse_webhook(encode(VALID | change))

    assert caught.value.code == code


@pytest.mark.parametrize("missing", ["from", "text", "id"])
def test_parse_requires_from_text_and_id(adapter, missing):
    data = {k: v for k, v in VALID.items() if k != missing}

    with pytest.raises(WebhookError) as caught:
        adapter.parse_webhook(encode(data))

    assert caught.value.code == "missing_field"
    assert missing in caught.value.message


def test_parse_accepts_the_longest_allowed_text(adapter):
    (message,) = adapter.parse_webhook(encode(VALID | {"text": "a" * 4096})).messages

    assert len(message.body) == 4096


def test_verify_signature_accepts_the_shared_secret(adapter):
    adapter.verify_signature(headers={"X-Simulator-Secret": "s3cret"}, body=b"{}", secret="s3cret")
    adapter.verify_signature(headers={"x-simulator-secret": "s3cret"}, body=b"{}", secret="s3cret")


@pytest.mark.parametrize(
    ("headers", "secret"),
    [
        ({"X-Simulator-Secret": "wrong"}, "s3cret"),
        ({"X-Simulator-Secret": "s3cre"}, "s3cret"),
        ({"X-Simulator-Secret": "sëcret"}, "s3cret"),
        ({}, "s3cret"),
        ({"X-Simulator-Secret": ""}, ""),
    ],
)
def test_verify_signature_rejects_wrong_missing_or_unconfigured_secret(adapter, headers, secret):
    with pytest.raises(SignatureError):
        adapter.verify_signature(headers=headers, body=b"{}", secret=secret)


def test_send_text_makes_no_request_and_reports_delivered(adapter):
    # respx is active with no route: any HTTP request would fail the test.
    with respx.mock:
        first = adapter.send_text(
            CONFIG, to="5511988887777", body="Olá", last_inbound_at=None, now=FIXED_NOW
        )
        second = adapter.send_text(
            CONFIG, to="5511988887777", body="Olá", last_inbound_at=None, now=FIXED_NOW
        )

    assert first.status == "delivered"
    assert first.provider_message_id.startswith("sim-")
    assert first.provider_message_id != second.provider_message_id


def test_send_template_makes_no_request_and_reports_delivered(adapter):
    with respx.mock:
        result = adapter.send_template(
            CONFIG, to="5511988887777", template_name="t", language="pt_BR", parameters=["x"]
        )

    assert result.status == "delivered"
    assert result.provider_message_id.startswith("sim-")
