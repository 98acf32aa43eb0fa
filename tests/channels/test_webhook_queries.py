"""The webhook's statements, pinned: every message a business receives pays them, and the
ack must stay cheap at hundreds per second (bench/load.py). Counted by Django's capture:
ORM queries and transaction control (BEGIN/SAVEPOINT/COMMIT where the backend issues them);
the tenant walls' settings go on the raw connection and are not counted."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from conversation import dispatch
from conversation.models import Message
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def channel(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    settings.WEBHOOK_RATE_LIMIT_PER_MINUTE = 1_000_000
    # The webhook only schedules the turn: keep the in-process runner from running it here.
    monkeypatch.setattr(dispatch, "_send", lambda task, args, countdown: None)
    org = factories.make_org("Contagem")
    return factories.make_channel(org, agent=factories.make_agent(org, "Suporte"))


def _post(channel: Any, phone: str, message_id: str) -> tuple[int, list[str]]:
    body = json.dumps({"from": phone, "text": "oi", "id": message_id})
    with CaptureQueriesContext(connection) as captured:
        response = Client().post(
            f"/webhooks/simulator/{channel.pk}",
            data=body,
            content_type="application/json",
            HTTP_X_SIMULATOR_SECRET=channel.webhook_secret,
        )
    return response.status_code, [q["sql"].split()[0].upper() for q in captured]


def _data(statements: list[str]) -> list[str]:
    return [s for s in statements if s in {"SELECT", "INSERT", "UPDATE", "DELETE"}]


def test_a_customer_writing_again_costs_four_statements_and_no_savepoint(channel):
    _post(channel, "5511911112222", "first")  # the first message opens the conversation
    _post(channel, "5511911112222", "warm")  # this process now knows the channel's org

    status, statements = _post(channel, "5511911112222", uuid.uuid4().hex)

    assert status == 200
    # The channel; the open conversation with its contact and the duplicate check; the
    # message; the conversation's last-message times.
    assert _data(statements) == ["SELECT", "SELECT", "INSERT", "UPDATE"]
    assert "SAVEPOINT" not in statements


def test_a_redelivery_costs_two_statements_and_stores_nothing(channel):
    _post(channel, "5511911113333", "once")
    _post(channel, "5511911113333", "warm")

    status, statements = _post(channel, "5511911113333", "once")

    assert status == 200
    assert _data(statements) == ["SELECT", "SELECT"]
    assert Message.objects.filter(channel=channel, provider_message_id="once").count() == 1


def test_a_first_time_customer_costs_six_statements_and_one_savepoint(channel):
    _post(channel, "5511911114444", "warm")  # this process now knows the channel's org

    status, statements = _post(channel, "5511911115555", uuid.uuid4().hex)

    assert status == 200
    # The channel; the open-conversation lookup (none); the contact's get-or-create (a
    # select, then its insert on a savepoint: a concurrent first message of the same phone
    # must not break the transaction); the conversation, born with the message's times;
    # the message. No duplicate check, no reopen lookup, no update.
    assert _data(statements) == ["SELECT", "SELECT", "SELECT", "INSERT", "INSERT", "INSERT"]
    assert statements.count("SAVEPOINT") == 1
    conversation = Message.objects.get(
        provider_message_id__isnull=False, conversation__contact__phone="5511911115555"
    ).conversation
    assert conversation.last_inbound_at is not None
    assert conversation.last_message_at == conversation.last_inbound_at
