"""One WhatsApp customer is one contact, whether a payload carries their phone or only
WhatsApp's hidden "linked id" (the recorded NOWEB payloads with and without the phone
alternative, through the signed webhook): a conversation a person took over stays theirs
when the customer next writes by lid alone."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conversation.handoff import perform_human_handoff
from conversation.models import Contact, Conversation, HandoffReason, Message, Turn
from tests import factories

from ._support import encode, load_fixture
from ._webhooks import waha_post

LID = "4639135154355@lid"
PHONE = "5511988887777"  # the with-alt recording's phone alternative


@pytest.fixture
def waha(world: Any) -> Any:
    return factories.make_channel(
        world.org_a, "waha", agent=world.agent_a, external_id="loja-centro", webhook_secret="k"
    )


def _event(name: str, message_id: str) -> dict[str, Any]:
    event = copy.deepcopy(load_fixture(f"waha/{name}.json"))
    event["payload"]["id"] = message_id
    return event


def test_a_customer_seen_by_phone_then_by_lid_alone_is_one_contact_still_with_the_person(
    world, waha, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        waha_post(waha, encode(_event("composed_message_lid_noweb_with_alt", "false_A1")))
    contact = Contact.objects.get(organization=world.org_a)
    assert (contact.phone, contact.whatsapp_lid) == (PHONE, LID)
    conversation = Conversation.objects.get(contact=contact)
    perform_human_handoff(conversation=conversation, reason_code=HandoffReason.MANUAL)
    turns_before = Turn.objects.filter(outcome="replied").count()

    with django_capture_on_commit_callbacks(execute=True):
        response = waha_post(waha, encode(_event("composed_message_lid_only", "false_A2")))

    assert response.status_code == 200
    assert Contact.objects.filter(organization=world.org_a).count() == 1
    line = Message.objects.get(provider_message_id="false_A2")
    assert line.conversation_id == conversation.pk
    # The person still has it: no AI reply to the lid-only message.
    assert Turn.objects.filter(outcome="replied").count() == turns_before
    assert Turn.objects.filter(outcome="human_owned").exists()


def test_a_customer_first_seen_by_lid_alone_gets_their_phone_when_a_payload_reveals_it(
    world, waha, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        waha_post(waha, encode(_event("composed_message_lid_only", "false_B1")))
    first = Contact.objects.get(organization=world.org_a)
    assert (first.phone, first.whatsapp_lid) == (LID, LID)

    with django_capture_on_commit_callbacks(execute=True):
        waha_post(waha, encode(_event("composed_message_lid_noweb_with_alt", "false_B2")))

    (contact,) = Contact.objects.filter(organization=world.org_a)
    assert (contact.pk, contact.phone, contact.whatsapp_lid) == (first.pk, PHONE, LID)
    assert Conversation.objects.filter(contact=contact).count() == 1
