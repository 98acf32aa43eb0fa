"""LGPD erasure and retention reach a message's media (the stored file, the provider's ids
and URLs, the filename, a template's parameters) and the contact's cases."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from cases.models import Case, CaseEvent
from cases.privacy import CASE_ERASED_TITLE
from cases.services import case_open
from conversation.models import Message
from conversation.privacy import ERASED_TEXT, contact_erase, retention_apply
from tests import factories


@pytest.fixture(autouse=True)
def _media_root(settings: Any, tmp_path: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path)


def _voice_note(conversation: Any) -> Message:
    message = Message.objects.create(
        organization=conversation.organization,
        conversation=conversation,
        channel=conversation.channel,
        direction="inbound",
        sender_kind="customer",
        body="[áudio]",
        kind="audio",
        status="received",
        media_id="1234567890987654321",
        media_url="https://lookaside.fbsbx.com/x?mid=1",
        media_mime="audio/ogg",
        media_filename="voz-ana.ogg",
        media_meta={"voice": True, "sha256": "abc"},
        template_params=["Ana"],
    )
    message.media_file.save("voz.ogg", ContentFile(b"OggS"), save=True)
    return message


def test_erasing_a_contact_deletes_its_files_and_media_references(world):
    conversation = factories.make_conversation(world.channel_a, phone="5511911112222")
    message = _voice_note(conversation)
    stored = message.media_file.name
    assert default_storage.exists(stored)

    result = contact_erase(contact=conversation.contact, actor=world.admin)

    message.refresh_from_db()
    assert result.media_files == 1
    assert not default_storage.exists(stored)
    assert message.body == ERASED_TEXT
    assert (message.media_id, message.media_url, message.media_filename, message.media_mime) == (
        "",
        "",
        "",
        "",
    )
    assert message.media_meta == {} and message.template_params == []
    assert not message.media_file
    assert message.kind == "audio"  # the row and its kind stay: counts stay right


def test_erasing_a_contact_blanks_what_its_cases_say(world):
    conversation = factories.make_conversation(world.channel_a, phone="5511933334444")
    case = case_open(
        conversation=conversation,
        title="Troca do pedido da Ana",
        summary="Ana, CPF 123, quer trocar o pedido 77",
        blocker="Precisa de aprovação",
    )
    other = case_open(
        conversation=factories.make_conversation(world.channel_a, phone="5511955556666"),
        title="Outro cliente",
        summary="fica",
        blocker="fica",
    )

    result = contact_erase(contact=conversation.contact, actor=world.admin)

    case.refresh_from_db()
    assert (case.title, case.summary, case.blocker) == (
        CASE_ERASED_TITLE,
        ERASED_TEXT,
        ERASED_TEXT,
    )
    assert case.context_snapshot == {} and case.lead_request == ""
    assert result.other_rows >= 1
    assert Case.objects.get(pk=other.pk).title == "Outro cliente"
    assert Case.objects.count() == 2  # rows stay for the counts
    # The append-only timeline too: no event keeps what the contact said or was told.
    events = list(CaseEvent.objects.filter(case=case))
    assert events and all((e.body, e.metadata) == (ERASED_TEXT, {}) for e in events)
    kept = CaseEvent.objects.filter(case=other)
    assert kept.exists() and not kept.filter(body=ERASED_TEXT).exists()
    # A second erase finds nothing left to blank.
    again = contact_erase(contact=conversation.contact, actor=world.admin)
    assert again.other_rows == 0


def test_retention_deletes_old_files_and_references(world):
    conversation = factories.make_conversation(world.channel_a, phone="5511977778888")
    message = _voice_note(conversation)
    Message.objects.filter(pk=message.pk).update(created_at=timezone.now() - timedelta(days=40))
    world.org_a.message_retention_days = 30
    world.org_a.save(update_fields=["message_retention_days"])

    assert retention_apply(organization=world.org_a) == 1

    message.refresh_from_db()
    assert not message.media_file and message.media_id == "" and message.media_url == ""
