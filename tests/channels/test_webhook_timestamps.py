"""The 24-hour customer-service window runs from when the customer wrote (the provider's own
timestamp: Meta ``messages[].timestamp``, WAHA ``payload.timestamp``), not from when a late
webhook reached us — after a provider outage a message delivered hours late must not open
the window again. It never moves back, and a timestamp in the future or absurdly old (beyond
any redelivery) counts as the moment of delivery. Signed webhooks on the recorded payloads."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import respx
from django.utils import timezone

from conversation.models import Conversation, Message

from ._media_support import GRAPH, META_NUMBER, meta_agent_channel
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

HOUR = 3600


@pytest.fixture
def meta(world: Any) -> Any:
    return recorded_meta_channel(world)


@pytest.fixture
def waha(world: Any) -> Any:
    return recorded_waha_channel(world)


def _at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def _meta_message(message_id: str, wrote: int) -> bytes:
    raw = meta_text(message_id)
    raw["timestamp"] = str(wrote)  # Cloud API: unix seconds as a string
    return encode(meta_body([raw]))


def _conversation() -> Conversation:
    return Conversation.objects.get(contact__phone="5511988887777")


def test_a_meta_message_delivered_late_opens_the_window_from_when_the_customer_wrote(meta):
    wrote = int(time.time()) - 23 * HOUR

    response = meta_post(meta, _meta_message("wamid.LATE-1", wrote))

    assert response.status_code == 200
    assert _conversation().customer_wrote_at == _at(wrote)


def test_a_waha_message_delivered_late_counts_from_when_the_customer_wrote(waha):
    wrote = int(time.time()) - 5 * HOUR

    response = waha_post(waha, encode(waha_message("false_LATE-W1", timestamp=wrote)))

    assert response.status_code == 200
    (line,) = Message.objects.filter(provider_message_id="false_LATE-W1")
    assert line.conversation.customer_wrote_at == _at(wrote)


def test_a_late_message_never_moves_the_window_back(meta):
    recent = int(time.time()) - 60
    meta_post(meta, _meta_message("wamid.NOW-1", recent))

    response = meta_post(meta, _meta_message("wamid.LATE-2", recent - 3 * HOUR))

    assert response.status_code == 200
    assert Message.objects.filter(direction="inbound").count() == 2
    conversation = _conversation()
    assert conversation.customer_wrote_at == _at(recent)
    # The list still orders by arrival: the late line is the conversation's latest.
    assert conversation.last_message_at is not None
    assert conversation.last_message_at > _at(recent)


@pytest.mark.parametrize(
    "offset",
    [2 * 24 * HOUR, -8 * 24 * HOUR],  # Meta redelivers for 7 days at most
    ids=["future", "older-than-any-redelivery"],
)
def test_a_timestamp_in_the_future_or_absurdly_old_counts_as_the_delivery_time(meta, offset):
    before = timezone.now()

    meta_post(meta, _meta_message("wamid.ODD-1", int(time.time()) + offset))

    wrote = _conversation().customer_wrote_at
    assert wrote is not None
    assert before <= wrote <= timezone.now()


def test_a_reply_to_a_message_written_over_24_hours_ago_is_not_sent_as_free_text(
    world, django_capture_on_commit_callbacks
):
    channel = meta_agent_channel(world)
    wrote = int(time.time()) - 25 * HOUR
    with respx.mock(assert_all_called=False) as mock:
        graph = mock.post(f"{GRAPH}/{META_NUMBER}/messages").respond(
            200, json={"messaging_product": "whatsapp", "messages": [{"id": "wamid.OUT"}]}
        )
        with django_capture_on_commit_callbacks(execute=True):
            response = meta_post(channel, _meta_message("wamid.LATE-3", wrote))
        sent = [json.loads(c.request.content) for c in graph.calls]

    assert response.status_code == 200
    assert _conversation().customer_wrote_at == _at(wrote)
    # Meta would refuse free text (131047): the outbox does not even try it.
    assert not [body for body in sent if body.get("type") == "text"]
    assert not Message.objects.filter(direction="outbound", status__in=["sent", "delivered"])


# -- the rule itself (pure) ---------------------------------------------------------------

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
WEEK = timedelta(days=7)


@pytest.mark.parametrize(
    ("wrote", "expected"),
    [
        (NOW - timedelta(hours=30), NOW - timedelta(hours=30)),
        (NOW - WEEK, NOW - WEEK),
        (NOW, NOW),
        (NOW + timedelta(seconds=1), NOW),
        (NOW + timedelta(days=400), NOW),
        (NOW - WEEK - timedelta(seconds=1), NOW),
        (datetime(1970, 1, 20, tzinfo=UTC), NOW),  # milliseconds read as seconds
    ],
)
def test_customer_wrote_at_keeps_a_sane_provider_time(wrote, expected):
    from conversation.channels.base import MAX_DELIVERY_DELAY, customer_wrote_at

    assert MAX_DELIVERY_DELAY == WEEK
    assert customer_wrote_at(wrote, NOW) == expected
