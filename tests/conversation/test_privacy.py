"""LGPD: erasing a contact leaves no trace of their words, name or phone while the counts
stay; retention erases old text on a schedule; both are audited."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from accounts import rls
from accounts.models import AuditLog
from conversation import tasks
from conversation.models import (
    Contact,
    Conversation,
    DemoInvoice,
    Direction,
    Handoff,
    Message,
    MessageStatus,
    SenderKind,
)
from conversation.privacy import ERASED_TEXT, RETAINED_TEXT, contact_erase, retention_apply
from conversation.runtime_adapters.invoices import demo_invoice_detail
from tests import factories
from tests.conftest import simulator_post
from tests.privacy.scan import tenant_text

PHONE = "5511912345678"
NAME = "Joana Pereira da Silva"
WORDS = "meu CPF é 123.456.789-00 e moro na Rua das Flores 42"


@pytest.fixture
def customer(world: Any) -> dict[str, Any]:
    conversation = factories.make_conversation(world.channel_a, phone=PHONE)
    contact = conversation.contact
    contact.name = NAME
    contact.save()
    inbound = factories.make_message(conversation, WORDS)
    reply = factories.make_message(
        conversation,
        f"Certo, {NAME}, anotei: {WORDS}",
        direction=Direction.OUTBOUND,
        sender_kind=SenderKind.AI,
        status=MessageStatus.SENT,
    )
    queued = factories.make_message(
        conversation,
        f"Ainda na fila para {PHONE}",
        direction=Direction.OUTBOUND,
        sender_kind=SenderKind.AI,
        status=MessageStatus.QUEUED,
    )
    Handoff.objects.create(
        organization=world.org_a,
        conversation=conversation,
        reason_code="requested_human",
        reason=f"{NAME} pediu atendente",
        briefing=f"Cliente {NAME} ({PHONE}) disse: {WORDS}",
    )
    DemoInvoice.objects.create(
        organization=world.org_a, contact=contact, detail=demo_invoice_detail()
    )
    Conversation.objects.filter(pk=conversation.pk).update(runtime_state={"phone": PHONE})
    return {
        "contact": contact,
        "conversation": conversation,
        "messages": [inbound, reply, queued],
    }


def test_erasing_a_contact_leaves_no_trace_of_their_words_name_or_phone(world, customer):
    assert WORDS in tenant_text(world.org_a) and PHONE in tenant_text(world.org_a)
    counts = (Message.objects.count(), Conversation.objects.count(), Handoff.objects.count())
    result = contact_erase(contact=customer["contact"], actor=world.admin)
    text = tenant_text(world.org_a)
    for trace in (WORDS, NAME, PHONE, "Rua das Flores"):
        assert trace not in text, trace
    assert (Message.objects.count(), Conversation.objects.count(), Handoff.objects.count()) == (
        counts
    )
    assert set(
        Message.objects.filter(conversation=customer["conversation"]).values_list("body", flat=True)
    ) == {ERASED_TEXT}
    assert (result.messages, result.conversations, result.handoffs, result.invoices) == (
        3,
        1,
        1,
        1,
    )
    contact = Contact.objects.get(pk=customer["contact"].pk)
    assert contact.name == "" and contact.phone.startswith("apagado-")
    assert contact.opted_out_at is not None
    conversation = Conversation.objects.get(pk=customer["conversation"].pk)
    assert conversation.status == "closed" and conversation.runtime_state is None
    audit = AuditLog.objects.get(action="contact.erase")
    assert audit.actor_id == world.admin.pk and audit.diff["messages"] == 3


def test_an_outbound_message_still_waiting_is_never_sent_after_the_erasure(world, customer):
    queued = customer["messages"][2]
    contact_erase(contact=customer["contact"], actor=world.admin)
    queued.refresh_from_db()
    assert queued.status == MessageStatus.REFUSED and queued.error_code == "erased"


def test_erasing_twice_changes_nothing_more(world, customer):
    contact_erase(contact=customer["contact"], actor=world.admin)
    again = contact_erase(contact=customer["contact"], actor=world.admin)
    assert again.messages == 0
    assert AuditLog.objects.filter(action="contact.erase").count() == 1


def test_the_pages_still_count_and_show_the_erased_conversation(world, customer):
    contact_erase(contact=customer["contact"], actor=world.admin)
    client = world.client_for(world.admin)
    page = client.get(f"/conversas/{customer['conversation'].pk}/").content.decode()
    assert ERASED_TEXT in page and WORDS not in page and PHONE not in page
    listing = client.get("/?status=closed").content.decode()
    assert f"/conversas/{customer['conversation'].pk}/" in listing


def test_the_same_number_writing_again_starts_a_new_contact(
    world, customer, django_capture_on_commit_callbacks
):
    contact_erase(contact=customer["contact"], actor=world.admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = simulator_post(
            Client(), world.channel_a, "oi de novo", msg_id="depois-1", phone=PHONE
        )
    assert response.status_code == 200
    fresh = Contact.objects.get(organization=world.org_a, phone=PHONE)
    assert fresh.pk != customer["contact"].pk and fresh.name == ""
    new_conversation = Conversation.objects.get(contact=fresh)
    assert new_conversation.pk != customer["conversation"].pk
    assert WORDS not in tenant_text(world.org_a)


def test_the_command_erases_with_yes_and_asks_otherwise(world, customer, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt: "não")
    with pytest.raises(CommandError, match="Nada foi apagado"):
        call_command("erase_contact", PHONE, "--org", world.org_a.slug, stdout=io.StringIO())
    assert Contact.objects.filter(phone=PHONE).exists()
    out = io.StringIO()
    call_command("erase_contact", f"+{PHONE}", "--org", world.org_a.slug, "--yes", stdout=out)
    assert "3 mensagem(ns)" in out.getvalue()
    assert not Contact.objects.filter(phone=PHONE).exists()
    audit = AuditLog.objects.get(action="contact.erase")
    assert audit.actor_id is None and audit.organization_id == world.org_a.pk


def test_the_command_refuses_an_unknown_organization_or_phone(world, customer):
    with pytest.raises(CommandError, match="Organização"):
        call_command("erase_contact", PHONE, "--org", "nao-existe", "--yes")
    with pytest.raises(CommandError, match="Nenhum contato"):
        call_command("erase_contact", "5500000000", "--org", world.org_a.slug, "--yes")
    with pytest.raises(CommandError, match="Nenhum contato"):  # B's org has no such contact
        call_command("erase_contact", PHONE, "--org", world.org_b.slug, "--yes")


def test_the_admin_action_confirms_then_erases(world, customer):
    staff = get_user_model().objects.create_superuser("root", "r@example.com", "senha-root-1")
    client = Client()
    client.force_login(staff)
    data = {"action": "erase_personal_data", "_selected_action": [str(customer["contact"].pk)]}
    confirm = client.post("/admin/conversation/contact/", data)
    assert confirm.status_code == 200 and "Não há como desfazer" in confirm.content.decode()
    assert Contact.objects.filter(phone=PHONE).exists()
    done = client.post("/admin/conversation/contact/", {**data, "confirm": "yes"})
    assert done.status_code == 302
    assert not Contact.objects.filter(phone=PHONE).exists()
    assert AuditLog.objects.get(action="contact.erase").actor_id == staff.pk


# --- retention ----------------------------------------------------------------------------


def _age(message: Message, days: int) -> None:
    Message.objects.filter(pk=message.pk).update(created_at=timezone.now() - timedelta(days=days))


def test_retention_erases_text_older_than_the_setting_and_keeps_the_rest(world):
    world.org_a.message_retention_days = 30
    world.org_a.save()
    conversation = factories.make_conversation(world.channel_a)
    old = factories.make_message(conversation, "texto antigo")
    recent = factories.make_message(conversation, "texto novo")
    old_queued = factories.make_message(
        conversation, "na fila", direction=Direction.OUTBOUND, status=MessageStatus.QUEUED
    )
    other_org = factories.make_message(factories.make_conversation(world.channel_b), "de B")
    for message in (old, old_queued, other_org):
        _age(message, 40)
    _age(recent, 10)
    assert retention_apply(organization=world.org_a) == 1
    bodies = dict(Message.objects.values_list("pk", "body"))
    assert bodies[old.pk] == RETAINED_TEXT
    assert bodies[recent.pk] == "texto novo"
    assert bodies[old_queued.pk] == "na fila"  # still to be delivered: not the retention's
    assert bodies[other_org.pk] == "de B"
    audit = AuditLog.objects.get(action="retention.apply")
    assert audit.organization_id == world.org_a.pk and audit.diff["messages"] == 1
    assert retention_apply(organization=world.org_a) == 0  # nothing new: no second audit row
    assert AuditLog.objects.filter(action="retention.apply").count() == 1


def test_the_beat_task_applies_each_organizations_own_retention(world):
    world.org_b.message_retention_days = 7
    world.org_b.save()
    a_old = factories.make_message(factories.make_conversation(world.channel_a), "A antigo")
    b_old = factories.make_message(factories.make_conversation(world.channel_b), "B antigo")
    _age(a_old, 90)
    _age(b_old, 90)
    with rls.unprivileged():
        assert tasks.apply_retention.apply().get() == 1
    assert Message.objects.get(pk=a_old.pk).body == "A antigo"  # A keeps everything
    assert Message.objects.get(pk=b_old.pk).body == RETAINED_TEXT
