"""Internal notes sit in a conversation's timeline where they were written, and are never
messages: nothing of them reaches the customer."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.utils import timezone

from conversation.models import Message
from inbox import services
from tests import factories


def test_a_note_shows_between_the_messages_it_was_written_between(world):
    conversation = factories.make_conversation(world.channel_a)
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        factories.make_message(conversation, "quero trocar o pedido")
    with time_machine.travel(start + timedelta(minutes=1), tick=False):
        services.internal_note_add(
            contact=conversation.contact,
            conversation=conversation,
            actor=world.agent,
            body="cliente VIP, priorizar",
        )
    with time_machine.travel(start + timedelta(minutes=2), tick=False):
        factories.make_message(conversation, "pode ser amanhã?")

    html = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()
    first = html.index("quero trocar o pedido")
    note = html.index("cliente VIP, priorizar")
    last = html.index("pode ser amanhã?")
    assert first < note < last
    assert "Nota interna" in html[first:last]
    # A note is no message: the outbox never sees it.
    assert not Message.objects.filter(body__contains="VIP").exists()
