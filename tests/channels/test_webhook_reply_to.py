"""The message a customer quoted is kept on their line (Meta ``context.id``, WAHA
``replyTo.id``): the timeline and the turn can tell which message they answered. Signed
webhooks on the recorded payloads."""

from __future__ import annotations

from typing import Any

import pytest

from conversation.models import Direction, Message, MessageStatus, SenderKind
from tests import factories

from ._media_support import META_NUMBER, meta_case
from ._support import encode
from ._webhooks import (
    meta_body,
    meta_post,
    meta_text,
    recorded_meta_channel,
    recorded_waha_channel,
    waha_message,
    waha_post,
)

GOWS_QUOTED_ID = "A55C8FEA23D0DCFCCD804555305A8696"  # the GOWS recording's replyTo.id


@pytest.fixture
def meta(world: Any) -> Any:
    return recorded_meta_channel(world)


@pytest.fixture
def waha(world: Any) -> Any:
    return recorded_waha_channel(world)


def _our_message(line: Message, provider_message_id: str) -> Message:
    return factories.make_message(
        line.conversation,
        "Seu pedido saiu para entrega.",
        direction=Direction.OUTBOUND,
        sender_kind=SenderKind.AI,
        status=MessageStatus.DELIVERED,
        provider_message_id=provider_message_id,
    )


def test_a_meta_reply_keeps_the_id_of_the_quoted_message(meta):
    response = meta_post(meta, encode(meta_case("reply", message_id="wamid.REPLY-1")))

    assert response.status_code == 200
    line = Message.objects.get(provider_message_id="wamid.REPLY-1")
    assert line.reply_to == "wamid.xyzxyz=="


def test_a_meta_line_quoting_nothing_has_no_reply_to(meta):
    meta_post(meta, encode(meta_body([meta_text("wamid.PLAIN-1")])))

    assert Message.objects.get(provider_message_id="wamid.PLAIN-1").reply_to is None


def test_the_quoted_message_is_found_when_it_is_ours(meta):
    first = meta_text("wamid.FIRST-1")
    meta_post(meta, encode(meta_body([first])))
    ours = _our_message(Message.objects.get(provider_message_id="wamid.FIRST-1"), "wamid.OUT-1")
    reply = meta_text("wamid.REPLY-2", body="sim, esse")
    reply["context"] = {"from": META_NUMBER, "id": "wamid.OUT-1"}

    meta_post(meta, encode(meta_body([reply])))

    line = Message.objects.get(provider_message_id="wamid.REPLY-2")
    assert line.reply_to == "wamid.OUT-1"
    assert line.quoted_message() == ours


def test_a_quote_of_a_message_we_never_stored_keeps_the_id_and_finds_nothing(meta):
    meta_post(meta, encode(meta_case("reply", message_id="wamid.REPLY-3")))

    line = Message.objects.get(provider_message_id="wamid.REPLY-3")
    assert (line.reply_to, line.quoted_message()) == ("wamid.xyzxyz==", None)


def test_a_waha_reply_keeps_the_quoted_id_and_finds_our_serialized_message(waha):
    response = waha_post(waha, encode(waha_message("false_REPLY-W1")))

    assert response.status_code == 200
    line = Message.objects.get(provider_message_id="false_REPLY-W1")
    assert line.reply_to == GOWS_QUOTED_ID
    # GOWS quotes the bare key id; our send stored WAHA's serialized id of the same message.
    ours = _our_message(line, f"true_5521977776666@c.us_{GOWS_QUOTED_ID}")
    assert line.quoted_message() == ours


def test_a_waha_line_quoting_nothing_has_no_reply_to(waha):
    waha_post(waha, encode(waha_message("false_PLAIN-W1", replyTo=None)))

    line = Message.objects.get(provider_message_id="false_PLAIN-W1")
    assert (line.reply_to, line.quoted_message()) == (None, None)
