"""The handoff inbox: list, detail with polling messages, reply as a human, give back to the AI."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import AuditLog
from conversation.handoff import perform_human_handoff
from conversation.models import Handoff, Message
from tests import factories
from tests.conftest import simulator_post


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The shared world creates six users: PBKDF2 would cost seconds per test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _handoff(channel, phone="5511988887777", reason_code="requested_human"):
    conversation = factories.make_conversation(channel, phone=phone)
    factories.make_message(conversation, "quero falar com alguém")
    return perform_human_handoff(
        conversation=conversation, reason_code=reason_code, reason="Cliente pediu."
    )


def test_inbox_lists_open_handoffs_of_own_org(world):
    mine = _handoff(world.channel_a)
    returned = _handoff(world.channel_a, phone="5511900000009")
    returned.status = "returned"
    returned.save(update_fields=["status"])
    theirs = _handoff(world.channel_b, phone="5511900000008")

    response = world.client_for(world.viewer).get("/transbordos/")

    html = response.content.decode()
    assert response.status_code == 200
    assert f"/transbordos/{mine.pk}/" in html
    assert "Cliente pediu atendente" in html  # reason code label
    assert "quero falar com alguém" in html  # briefing
    assert f"/transbordos/{returned.pk}/" not in html
    assert f"/transbordos/{theirs.pk}/" not in html


def test_inbox_query_count_is_constant(world, django_assert_num_queries):
    client = world.client_for(world.viewer)
    _handoff(world.channel_a)
    client.get("/transbordos/")
    # session · user · membership · nav badge count · paginator count ·
    # page of handoffs (+conversation, contact, channel) · memberships (context processor)
    with django_assert_num_queries(7):
        client.get("/transbordos/")
    for i in range(10):
        _handoff(world.channel_a, phone=f"55119000001{i:02d}")
    with django_assert_num_queries(7):
        response = client.get("/transbordos/")
    assert response.content.decode().count('class="row"') == 11


def test_detail_shows_briefing_messages_and_polls(world):
    handoff = _handoff(world.channel_a)
    html = world.client_for(world.viewer).get(f"/transbordos/{handoff.pk}/").content.decode()
    assert "Cliente pediu." in html and "Últimas mensagens" in html
    assert 'id="handoff-messages"' in html
    assert f'hx-get="/transbordos/{handoff.pk}/mensagens/"' in html
    assert 'hx-trigger="every 3s"' in html
    assert 'id="reply-form"' not in html  # a viewer reads only
    assert "Devolver para a IA" not in html


def test_messages_fragment_is_only_the_message_list(world):
    handoff = _handoff(world.channel_a)
    response = world.client_for(world.viewer).get(f"/transbordos/{handoff.pk}/mensagens/")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.strip().startswith('<div id="handoff-messages"')
    assert "quero falar com alguém" in html
    assert "<nav" not in html


def test_detail_of_another_org_is_404(world):
    theirs = _handoff(world.channel_b)
    client = world.client_for(world.admin)
    assert client.get(f"/transbordos/{theirs.pk}/").status_code == 404
    assert client.get(f"/transbordos/{theirs.pk}/mensagens/").status_code == 404


def test_reply_sends_a_human_message_through_the_outbox(world, django_capture_on_commit_callbacks):
    handoff = _handoff(world.channel_a)
    client = world.client_for(world.agent)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/transbordos/{handoff.pk}/responder/", {"text": "Oi, sou a Ana."})

    assert response.status_code == 302
    reply = Message.objects.get(body="Oi, sou a Ana.")
    assert reply.direction == "outbound" and reply.sender_kind == "human"
    assert reply.sent_by == world.agent
    assert reply.status == "delivered"  # the simulator's outbox delivery ran on commit
    assert AuditLog.objects.filter(action="handoff.reply", actor=world.agent).exists()


def test_reply_over_htmx_returns_the_message_list_and_a_fresh_form(world):
    handoff = _handoff(world.channel_a)
    client = world.client_for(world.agent)

    response = client.post(
        f"/transbordos/{handoff.pk}/responder/", {"text": "Já vou ver."}, HTTP_HX_REQUEST="true"
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert html.strip().startswith('<div id="handoff-messages"')
    assert "Já vou ver." in html
    assert 'id="reply-form"' in html and 'hx-swap-oob="true"' in html
    assert "Já vou ver.</textarea>" not in html  # the form comes back empty
    assert Message.objects.filter(body="Já vou ver.", sender_kind="human").count() == 1


def test_reply_with_empty_text_sends_nothing(world):
    handoff = _handoff(world.channel_a)
    response = world.client_for(world.agent).post(
        f"/transbordos/{handoff.pk}/responder/", {"text": "  "}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert not Message.objects.filter(sender_kind="human").exists()


def test_reply_is_denied_to_a_viewer(world):
    handoff = _handoff(world.channel_a)
    response = world.client_for(world.viewer).post(
        f"/transbordos/{handoff.pk}/responder/", {"text": "oi"}
    )
    assert response.status_code == 403
    assert not Message.objects.filter(sender_kind="human").exists()


def test_reply_to_another_org_is_404(world):
    theirs = _handoff(world.channel_b)
    response = world.client_for(world.agent).post(
        f"/transbordos/{theirs.pk}/responder/", {"text": "oi"}
    )
    assert response.status_code == 404
    assert not Message.objects.filter(sender_kind="human").exists()


def test_reply_to_a_returned_handoff_sends_nothing(world):
    handoff = _handoff(world.channel_a)
    client = world.client_for(world.agent)
    client.post(f"/transbordos/{handoff.pk}/devolver/")
    response = client.post(f"/transbordos/{handoff.pk}/responder/", {"text": "oi"}, follow=True)
    assert "já foi devolvido" in response.content.decode()
    htmx = client.post(
        f"/transbordos/{handoff.pk}/responder/", {"text": "oi"}, HTTP_HX_REQUEST="true"
    )
    assert htmx["HX-Redirect"] == f"/transbordos/{handoff.pk}/"
    assert not Message.objects.filter(sender_kind="human").exists()


def test_return_to_ai_gives_the_conversation_back(world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # the real pipeline hands off
        simulator_post(Client(), world.channel_a, "quero falar com um atendente", msg_id="m1")
    handoff = Handoff.objects.get(status="open")
    client = world.client_for(world.agent)
    assert "Devolver para a IA" in client.get(f"/transbordos/{handoff.pk}/").content.decode()

    response = client.post(f"/transbordos/{handoff.pk}/devolver/")

    assert response.status_code == 302 and response["Location"] == "/transbordos/"
    handoff.refresh_from_db()
    assert handoff.status == "returned" and handoff.returned_by == world.agent
    conversation = handoff.conversation
    conversation.refresh_from_db()
    assert conversation.status == "ai_handling" and conversation.bot_silenced_until is None
    # The next customer message gets an AI reply again.
    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), world.channel_a, "oi", msg_id="after-return")
    assert Message.objects.filter(conversation=conversation, sender_kind="ai").exists()


def test_return_to_ai_is_denied_to_a_viewer(world):
    handoff = _handoff(world.channel_a)
    response = world.client_for(world.viewer).post(f"/transbordos/{handoff.pk}/devolver/")
    assert response.status_code == 403
    assert Handoff.objects.get(pk=handoff.pk).status == "open"


def test_return_to_ai_of_another_org_is_404(world):
    theirs = _handoff(world.channel_b)
    response = world.client_for(world.agent).post(f"/transbordos/{theirs.pk}/devolver/")
    assert response.status_code == 404
    assert Handoff.objects.get(pk=theirs.pk).status == "open"
