"""Erasing a contact (LGPD) leaves no copy of their data anywhere the product wrote it, not
only in their own conversation: the team's WhatsApp answers to their cases (stored in the
member's staff conversation) and the audit row of a file sent to them (its filename)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from accounts.models import AuditLog, Membership
from cases import services
from cases.models import CaseEvent
from conversation.models import Contact, Message
from conversation.outbox.media import outbound_media_enqueue
from conversation.privacy import ERASED_TEXT, contact_erase
from tests.cases.conftest import PHONE, enable_cases, open_case, say
from tests.privacy.scan import tenant_text

STAFF = "5511977776666"
OTHER = "5511966665555"
ABOUT = "Joanildes Brasilina, o estorno do cartao final 7719"  # the team, about the customer
FILE = "RG-Joanildes-Brasilina.pdf"


@pytest.fixture(autouse=True)
def _media_root(settings: Any, tmp_path: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path)


@pytest.fixture
def staffed(world: Any) -> Any:
    enable_cases(world.agent_a)
    membership = Membership.objects.get(user=world.agent)
    services.staff_number_set(membership=membership, actor=world.admin, phone=STAFF)
    return world


def _customer_case(world: Any, capture: Any, phone: str, msg_id: str) -> Any:
    say(world.channel_a, "quero o estorno", msg_id, capture, phone=phone)
    return open_case(Message.objects.get(provider_message_id=msg_id).conversation)


def test_erasure_blanks_the_teams_whatsapp_answers_about_the_contact(
    staffed, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    case = _customer_case(staffed, capture, PHONE, "c-1")
    other = _customer_case(staffed, capture, OTHER, "o-1")
    say(staffed.channel_a, f"#{case.short_id} 2 {ABOUT}", "s-1", capture, phone=STAFF)
    say(staffed.channel_a, f"#{other.short_id} 2 qual o pedido?", "s-2", capture, phone=STAFF)
    assert CaseEvent.objects.filter(case=case, body=ABOUT).exists()  # answered through it

    contact_erase(contact=Contact.objects.get(phone=PHONE), actor=staffed.admin)

    text = tenant_text(staffed.org_a)
    for words in (ABOUT, "Joanildes", "7719"):
        assert words not in text, words
    assert Message.objects.get(provider_message_id="s-1").body == ERASED_TEXT
    # Another customer's answer, in the same staff conversation, is not theirs to erase.
    assert Message.objects.get(provider_message_id="s-2").body.endswith("qual o pedido?")


def test_erasure_leaves_no_filename_of_a_file_sent_to_the_contact_in_the_audit_log(
    world, django_capture_on_commit_callbacks
):
    say(world.channel_a, "me manda o documento", "c-1", django_capture_on_commit_callbacks)
    conversation = Message.objects.get(provider_message_id="c-1").conversation
    with django_capture_on_commit_callbacks(execute=True):
        message = outbound_media_enqueue(
            conversation=conversation,
            kind="document",
            upload=SimpleUploadedFile(FILE, b"%PDF-1.4", content_type="application/pdf"),
            caption="segue",
            sender_kind="human",
            actor=world.agent,
        )
    assert FILE in tenant_text(world.org_a)

    contact_erase(contact=conversation.contact, actor=world.admin)

    assert "Joanildes" not in tenant_text(world.org_a)
    # The audit row stays (who sent what kind of file to which message), without the name.
    row = AuditLog.objects.get(action="message.media_send", resource_id=str(message.pk))
    assert row.actor_id == world.agent.pk and row.diff["kind"] == "document"
