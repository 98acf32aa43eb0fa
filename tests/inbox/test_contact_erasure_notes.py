"""Erasing a contact (LGPD) leaves none of the team's notes about them: a note written on
their profile or beside their conversation is their personal data. Another contact's notes
stay."""

from __future__ import annotations

import pytest

from conversation.privacy import contact_erase
from inbox import services
from inbox.models import InternalNote
from tests import factories

pytestmark = pytest.mark.django_db

MARKER = "cliente mora na Rua das Acácias 77, filha Bruna"


def test_erasing_a_contact_deletes_the_notes_on_them_and_on_their_conversations(world):
    erased = factories.make_conversation(world.channel_a, phone="5511912340101")
    other = factories.make_conversation(world.channel_a, phone="5511912340102")
    services.internal_note_add(
        contact=erased.contact, conversation=erased, actor=world.agent, body=MARKER
    )
    services.internal_note_add(
        contact=erased.contact, conversation=None, actor=world.agent, body=MARKER + " (perfil)"
    )
    kept = services.internal_note_add(
        contact=other.contact, conversation=other, actor=world.agent, body="outra pessoa"
    )

    contact_erase(contact=erased.contact, actor=world.admin)

    assert not InternalNote.objects.filter(body__contains="Acácias").exists()
    assert list(InternalNote.objects.values_list("pk", flat=True)) == [kept.pk]
