"""Two first messages of a known contact on a new channel at the same instant.

Both requests find no open conversation and insert one; the partial unique index
``uniq_open_conversation`` lets one win and the other retries on a savepoint and re-reads it.
Then the same for a phone nobody has seen: both insert the contact; the second waits on
``uniq_contact_phone``, fails once the first commits, and goes on with the contact it finds.
Only meaningful where transactions really overlap: PostgreSQL (SQLite serializes writers).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from conversation.models import Contact, Conversation, Message, Turn
from tests import factories

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs overlapping transactions"),
    pytest.mark.django_db(transaction=True),
]

ROUNDS = 6
PHONE = "5511977770000"


def _post_together(channel: Any, ids: list[str], phone: str = PHONE) -> list[int]:
    """POST one simulator message per id, all released at the same instant."""
    barrier = threading.Barrier(len(ids))
    codes: list[int] = []

    def send(message_id: str) -> None:
        body = json.dumps({"from": phone, "text": "oi, primeira vez aqui", "id": message_id})
        try:
            barrier.wait(timeout=10)
            response = Client(raise_request_exception=False).post(
                f"/webhooks/simulator/{channel.pk}",
                data=body,
                content_type="application/json",
                HTTP_X_SIMULATOR_SECRET=channel.webhook_secret,
            )
            codes.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(i,)) for i in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return codes


@pytest.fixture
def org(settings: Any) -> Any:
    settings.WEBHOOK_RATE_LIMIT_PER_MINUTE = 1_000_000
    org = factories.make_org("Corrida")
    Contact.objects.create(organization=org, phone=PHONE, name="Cliente conhecido")
    return org


def test_two_identical_first_messages_racing_store_one_and_never_500(org):
    agent = factories.make_agent(org, "Suporte")
    for round_ in range(ROUNDS):
        channel = factories.make_channel(org, agent=agent)  # new: no conversation yet

        codes = _post_together(channel, [f"race-{round_}", f"race-{round_}"])

        assert sorted(codes) == [200, 200], f"round {round_}: {codes}"
        assert Message.objects.filter(channel=channel, direction="inbound").count() == 1
        assert Conversation.objects.filter(channel=channel).count() == 1
    assert Contact.objects.filter(organization=org, phone=PHONE).count() == 1


def test_two_different_first_messages_racing_share_one_conversation(org):
    agent = factories.make_agent(org, "Suporte")
    for round_ in range(ROUNDS):
        channel = factories.make_channel(org, agent=agent)

        codes = _post_together(channel, [f"a-{round_}", f"b-{round_}"])

        assert sorted(codes) == [200, 200], f"round {round_}: {codes}"
        conversation = Conversation.objects.get(channel=channel)
        inbound = Message.objects.filter(channel=channel, direction="inbound")
        assert {m.conversation_id for m in inbound} == {conversation.pk}
        assert inbound.count() == 2


@pytest.mark.parametrize("same_event", [True, False], ids=["redelivery", "two-messages"])
def test_two_first_messages_of_a_new_phone_racing_make_one_contact_and_conversation(
    org: Any, same_event: bool
) -> None:
    agent = factories.make_agent(org, "Suporte")
    for round_ in range(ROUNDS):
        channel = factories.make_channel(org, agent=agent)
        phone = f"55119888800{round_:02d}"  # never seen by this organization
        ids = [f"new-{round_}"] * 2 if same_event else [f"new-a-{round_}", f"new-b-{round_}"]

        codes = _post_together(channel, ids, phone=phone)

        assert sorted(codes) == [200, 200], f"round {round_}: {codes}"
        assert Contact.objects.filter(organization=org, phone=phone).count() == 1
        conversation = Conversation.objects.get(channel=channel)
        inbound = Message.objects.filter(channel=channel, direction="inbound")
        assert inbound.count() == (1 if same_event else 2)
        assert {m.conversation_id for m in inbound} == {conversation.pk}


def test_a_turn_task_delivered_twice_at_once_answers_once_and_ends_quietly(org, caplog):
    from conversation.turns import run_inbound_turn

    channel = factories.make_channel(org, agent=factories.make_agent(org, "Suporte"))
    conversation = factories.make_conversation(channel, phone=PHONE)
    message = factories.make_message(conversation, "qual o horário?")
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def deliver() -> None:
        try:
            barrier.wait(timeout=10)
            run_inbound_turn(str(message.pk))
        except BaseException as exc:  # the duplicate must not raise (it did: uniq_turn_trigger)
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert Turn.objects.filter(trigger_key=str(message.pk)).count() == 1
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
