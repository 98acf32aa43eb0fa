"""``ParsedWebhook.addressed_to``: events for another business number are refused, not stored
under this channel; and ``clean_text`` leaves nothing storage cannot hold (pure: no Django)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversation.channels import get_adapter
from conversation.channels._parsing import clean_text
from conversation.channels.base import InboundMessage, ParsedWebhook, RejectedEvent, StatusUpdate

WHEN = datetime(2026, 3, 10, tzinfo=UTC)


def _message(message_id: str, ref: str) -> InboundMessage:
    return InboundMessage(
        provider_message_id=message_id,
        from_phone="5511988887777",
        body="oi",
        timestamp=WHEN,
        channel_ref=ref,
    )


def _status(message_id: str, ref: str) -> StatusUpdate:
    return StatusUpdate(
        provider_message_id=message_id, status="read", timestamp=WHEN, channel_ref=ref
    )


def test_addressed_to_keeps_this_numbers_events_and_refuses_the_others():
    earlier = RejectedEvent(code="invalid_id", reason="too long", where="payload")
    parsed = ParsedWebhook(
        messages=(_message("m-ours", "123"), _message("m-other", "999"), _message("m-none", "")),
        statuses=(_status("s-ours", "123"), _status("s-other", "999")),
        rejected=(earlier,),
    )

    kept = parsed.addressed_to(" 123 ")

    assert [m.provider_message_id for m in kept.messages] == ["m-ours"]
    assert [s.provider_message_id for s in kept.statuses] == ["s-ours"]
    assert kept.rejected[0] == earlier
    assert [(r.code, r.where, r.event_id) for r in kept.rejected[1:]] == [
        ("wrong_channel", "message", "m-other"),
        ("wrong_channel", "message", "m-none"),
        ("wrong_channel", "status", "s-other"),
    ]
    assert kept.accepted == 2


def test_addressed_to_returns_the_same_value_when_everything_matches():
    parsed = ParsedWebhook(messages=(_message("m", "wapi"),))

    assert parsed.addressed_to("wapi") is parsed


@pytest.mark.parametrize(
    ("provider", "names"), [("meta", True), ("waha", True), ("simulator", False)]
)
def test_only_providers_whose_payload_names_the_number_are_checked(provider, names):
    assert get_adapter(provider).addresses_channel is names


@given(st.text())
def test_clean_text_output_always_encodes_to_utf8_without_nul(value):
    cleaned = clean_text(value)

    assert "\x00" not in cleaned
    cleaned.encode("utf-8")
    assert clean_text(cleaned) == cleaned  # idempotent: a redelivery cleans to the same id


def test_clean_text_keeps_valid_astral_characters_and_marks_lone_surrogates():
    assert clean_text("a\x00b\ud800c😀") == "ab\ufffdc😀"
