"""A reply that never reached the customer is seen where staff work: the inbox list marks
the conversation ("Resposta não entregue") while the outbox has given up on a reply of it —
at the retry horizon (the provider stayed down), or refused by the provider — until the
reply goes out after all or staff resolve the conversation. Through the public path: a
signed WAHA webhook, a real turn, the real outbox against a fake WAHA at the HTTP level,
the sweeper, and the inbox page."""

from __future__ import annotations

import itertools
import re
from typing import Any

import httpx
import pytest
import respx
from django.test import Client

from conversation.models import Message
from tests import factories
from tests.conversation._outbox_support import (
    WAHA_URL,
    drop_delayed,
    virtual_clock,
    waha_channel,
)
from tests.faults.harness import post_waha, waha_event

PHONE = "5511966665555"
CHAT = f"{PHONE}@c.us"
BADGE = "Resposta não entregue"
_ids = itertools.count(1)


@pytest.fixture(autouse=True)
def _no_wakeups_left_behind():
    yield
    drop_delayed()


@pytest.fixture
def waha(world):
    return waha_channel(world.org_a, agent=world.agent_a, webhook_secret="segredo-waha")


def customer_writes(channel: Any, text: str = "oi") -> None:
    event = waha_event(
        session=channel.external_id,
        phone=PHONE,
        text=text,
        message_id=f"false_{CHAT}_U{next(_ids)}",
    )
    assert post_waha(Client(), channel, event) == 200


def row_of(world: Any, conversation_id: Any) -> str:
    """The conversation's row in the inbox list, as a member sees it."""
    html = world.client_for(world.agent).get("/").content.decode()
    found = re.search(rf'id="conversation-row-{conversation_id}".*?</a>', html, re.S)
    assert found is not None
    return found.group(0)


@respx.mock
def test_a_reply_failed_at_the_retry_horizon_marks_the_conversation_until_it_goes_out(
    world, waha, settings, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    # The provider stays down longer than the retry horizon: the outbox gives up on the
    # reply (``failed``, ``retry_horizon``), then keeps re-sending it by itself in new
    # rounds while it probes the channel. Either way the customer has had no answer for a
    # whole horizon: staff must see it in the inbox, not only as a badge on one message.
    settings.OUTBOX_RETRY_HORIZON_S = 120
    up: list[int] = []

    def provider(request: httpx.Request) -> httpx.Response:
        if not up:
            return httpx.Response(503)
        return httpx.Response(201, json={"id": f"true_{CHAT}_UP{len(up)}"})

    respx.post(f"{WAHA_URL}/api/sendText").mock(side_effect=provider)
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        with django_capture_on_commit_callbacks(execute=True):
            customer_writes(waha, "cadê meu pedido?")
        conversation_id = Message.objects.get(direction="inbound").conversation_id
        clock.run(60, sweep_every=15)
        assert BADGE not in row_of(world, conversation_id)  # still within its horizon

        clock.run(240, sweep_every=15)  # past the horizon
        gave_up = [r for r in caplog.records if r.getMessage().startswith("outbound gave up")]
        assert gave_up, "the outbox never gave up"
        reply = Message.objects.get(direction="outbound")
        assert reply.status != "sent"
        assert BADGE in row_of(world, conversation_id)

        up.append(1)  # the provider answers again: the reply is re-sent by itself
        clock.run(120, sweep_every=15)
        reply.refresh_from_db()
        assert reply.status == "sent"
        assert BADGE not in row_of(world, conversation_id)


@respx.mock
def test_a_reply_the_provider_refused_marks_the_conversation_until_staff_resolve_it(
    world, waha, monkeypatch, django_capture_on_commit_callbacks
):
    respx.post(f"{WAHA_URL}/api/sendText").mock(
        return_value=httpx.Response(400, json={"message": "invalid chat id"})
    )
    with virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock:
        with django_capture_on_commit_callbacks(execute=True):
            customer_writes(waha)
        clock.run(30, sweep_every=15)
    reply = Message.objects.get(direction="outbound")
    assert (reply.status, reply.failure_reason) == ("failed", "rejected")
    assert BADGE in row_of(world, reply.conversation_id)

    staff = world.client_for(world.agent)
    response = staff.post(f"/caixa/conversas/{reply.conversation_id}/resolver/")
    assert response.status_code in (200, 302)
    assert BADGE not in row_of(world, reply.conversation_id)  # seen and dealt with


def test_the_mark_costs_no_query_per_row(world, django_assert_num_queries):
    from inbox import selectors
    from inbox.forms import ConversationListForm
    from tests.inbox.conftest import membership_of

    for i in range(3):
        conversation = factories.make_conversation(world.channel_a, phone=f"551190000000{i}")
        factories.make_message(
            conversation, "resposta", direction="outbound", sender_kind="ai", status="failed"
        )
    me = membership_of(world.agent)
    filters = ConversationListForm({}, choices=selectors.filter_choices(me)).filters()
    with django_assert_num_queries(2):  # the rows (with the mark), their labels
        rows = list(selectors.conversation_list(me, filters))
    assert [row.undelivered for row in rows] == [True, True, True]
