"""Reenviar: staff put a failed reply back in the delivery chain, at its tail, audited."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import AuditLog
from conversation.models import Message
from tests import factories
from tests.conversation._outbox_support import (
    drop_delayed,
    fake_waha,
    waha_channel,
    waha_conversation,
)


@pytest.fixture(autouse=True)
def _no_wakeups_left_behind():
    yield
    drop_delayed()


def failed_reply(conversation, body="Seu boleto vence amanhã.", **fields):
    return factories.make_message(
        conversation,
        body,
        direction="outbound",
        sender_kind="ai",
        status="failed",
        failure_reason=fields.pop("failure_reason", "rejected"),
        error_code="rejected",
        queued_at=timezone.now(),
        **fields,
    )


def url(message) -> str:
    return reverse("conversation:message_resend", kwargs={"message_id": message.pk})


def test_an_agent_resends_a_failed_reply_at_the_tail_of_the_chain_and_it_is_audited(
    world, django_capture_on_commit_callbacks
):
    conversation = waha_conversation(waha_channel(world.org_a))
    failed = failed_reply(conversation)
    waiting = factories.make_message(  # queued after the failure, still in the chain
        conversation,
        "Posso ajudar em algo mais?",
        direction="outbound",
        sender_kind="ai",
        status="queued",
        queued_at=timezone.now(),
    )
    client = world.client_for(world.agent)
    with fake_waha() as provider, django_capture_on_commit_callbacks(execute=True):
        response = client.post(url(failed))
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "conversation:conversation_detail", kwargs={"conversation_id": conversation.pk}
    )
    # The chain delivered what was waiting first, then the resent reply: the tail.
    assert provider.texts() == ["Posso ajudar em algo mais?", "Seu boleto vence amanhã."]
    failed.refresh_from_db()
    waiting.refresh_from_db()
    assert (failed.status, failed.failure_reason, failed.error_code) == ("sent", "", "")
    assert failed.queued_at > waiting.queued_at
    log = AuditLog.objects.get(action="message.resend")
    assert (log.actor, log.organization_id, log.resource_id) == (
        world.agent,
        world.org_a.pk,
        str(failed.pk),
    )
    assert log.diff["status"] == ["failed", "queued"]


def test_a_viewer_may_not_resend(world):
    failed = failed_reply(waha_conversation(waha_channel(world.org_a)))
    response = world.client_for(world.viewer).post(url(failed))
    assert response.status_code == 403
    failed.refresh_from_db()
    assert failed.status == "failed"
    assert not AuditLog.objects.filter(action="message.resend").exists()


def test_another_organizations_reply_is_not_found(world):
    failed = failed_reply(waha_conversation(waha_channel(world.org_a)))
    response = world.client_for(world.outsider).post(url(failed))
    assert response.status_code == 404
    assert Message.objects.get(pk=failed.pk).status == "failed"


def test_a_reply_that_did_not_fail_is_left_alone(world, django_capture_on_commit_callbacks):
    conversation = waha_conversation(waha_channel(world.org_a))
    sent = factories.make_message(
        conversation, "oi", direction="outbound", sender_kind="ai", status="delivered"
    )
    with fake_waha() as provider, django_capture_on_commit_callbacks(execute=True):
        response = world.client_for(world.agent).post(url(sent), follow=True)
    assert "Só mensagens que falharam podem ser reenviadas." in response.content.decode()
    assert Message.objects.get(pk=sent.pk).status == "delivered"
    assert provider.calls == 0
    assert not AuditLog.objects.filter(action="message.resend").exists()


def test_the_conversation_page_offers_reenviar_on_failed_replies_to_agents_only(world):
    conversation = waha_conversation(waha_channel(world.org_a))
    failed = failed_reply(conversation)
    page = reverse("conversation:conversation_detail", kwargs={"conversation_id": conversation.pk})
    as_agent = world.client_for(world.agent).get(page).content.decode()
    as_viewer = world.client_for(world.viewer).get(page).content.decode()
    assert url(failed) in as_agent and "Reenviar" in as_agent
    assert url(failed) not in as_viewer
