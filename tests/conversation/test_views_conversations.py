"""Conversation list and detail pages, and taking a conversation over."""

from __future__ import annotations

import pytest
from django.utils import timezone

from conversation.models import (
    SILENCED_FOREVER,
    Conversation,
    Handoff,
    LlmCall,
    Message,
)
from tests import factories


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The shared world creates six users: PBKDF2 would cost seconds per test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _conversations(channel, n, *, start=0):
    rows = []
    for i in range(start, start + n):
        conversation = factories.make_conversation(channel, phone=f"55119{i:08d}")
        conversation.last_message_at = timezone.now()
        conversation.save(update_fields=["last_message_at"])
        rows.append(conversation)
    return rows


def test_conversation_list_shows_own_org_conversations_only(world):
    mine = factories.make_conversation(world.channel_a, phone="5511911110000")
    factories.make_conversation(world.channel_b, phone="5511922220000")

    response = world.client_for(world.viewer).get("/")

    html = response.content.decode()
    assert response.status_code == 200
    assert f"/conversas/{mine.pk}/" in html
    assert "5511911110000" in html
    assert "5511922220000" not in html
    assert world.channel_a.name in html


def test_conversation_list_filters_by_status(world):
    open_one = factories.make_conversation(world.channel_a, phone="5511911110000")
    pending = factories.make_conversation(world.channel_a, phone="5511933330000")
    pending.status = "pending"
    pending.save(update_fields=["status"])

    html = world.client_for(world.viewer).get("/?status=pending").content.decode()

    assert f"/conversas/{pending.pk}/" in html
    assert f"/conversas/{open_one.pk}/" not in html


def test_conversation_list_ignores_an_unknown_status(world):
    factories.make_conversation(world.channel_a, phone="5511911110000")
    response = world.client_for(world.viewer).get("/?status=nope")
    assert response.status_code == 200
    assert "5511911110000" in response.content.decode()


def test_conversation_list_paginates(world):
    _conversations(world.channel_a, 27)
    client = world.client_for(world.viewer)

    first = client.get("/").content.decode()
    second = client.get("/?page=2").content.decode()

    assert first.count('class="row"') == 25
    assert second.count('class="row"') == 2
    assert "Página 2 de 2" in second


def test_conversation_list_query_count_is_constant(world, django_assert_num_queries):
    client = world.client_for(world.viewer)
    _conversations(world.channel_a, 3)
    client.get("/")  # warm-up: content types, template loading
    # session · user · membership (middleware) · open handoff count (nav badge) ·
    # paginator count · page of conversations with contact and channel (select_related) ·
    # the user's memberships (context processor, org switcher) · the inbox's filter
    # choices (channels, agents, members, labels) and the page's labels (tests/inbox)
    with django_assert_num_queries(12):
        client.get("/")
    _conversations(world.channel_a, 20, start=100)
    with django_assert_num_queries(12):
        response = client.get("/")
    assert response.content.decode().count('class="row"') == 23


def test_conversation_detail_shows_messages_turns_trace_and_calls(world):
    conversation = factories.make_conversation(world.channel_a)
    factories.make_message(conversation, "qual o prazo?")
    doc = factories.make_document(world.org_a, "Prazos", "Entregamos em 3 dias.")
    turn = factories.make_turn(
        conversation,
        latency_ms=42,
        agent_version=world.agent_a.published_version,
        trace={
            "batch": 1,
            "route": {"source": "channel"},
            "agent_id": str(world.agent_a.pk),
            "loop": {
                "steps": 2,
                "stop": "end_turn",
                "calls": [{"tool": "search_knowledge", "error": False}],
                "error": "",
                "discarded_text_chars": 0,
            },
            "vetoes": ["case_promise"],
            "knowledge_hits": [[str(doc.pk)]],
            "router_decision": {"intent": "prazo"},
        },
    )
    factories.make_message(
        conversation,
        "Entregamos em 3 dias.",
        direction="outbound",
        sender_kind="ai",
        status="failed",
        error_code="auth_failed",
        turn=turn,
    )
    LlmCall.objects.create(
        organization=world.org_a,
        conversation=conversation,
        turn=turn,
        purpose="orchestrator",
        provider="anthropic",
        model="claude-haiku-4-5",
        input_tokens=1200,
        output_tokens=80,
        cache_read_tokens=900,
        cache_creation_tokens=300,
        latency_ms=640,
        error_code="rate_limited",
    )

    response = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/")

    html = response.content.decode()
    assert response.status_code == 200
    assert "qual o prazo?" in html and "Entregamos em 3 dias." in html
    assert "msg-customer" in html and "msg-ai" in html
    assert "Falhou" in html and "auth_failed" in html  # outbound status and its error
    assert f'id="turn-{turn.pk}"' in html
    assert "Respondeu" in html and "42 ms" in html and "versão 1" in html
    assert "search_knowledge" in html and "passos: 2" in html
    assert "case_promise" in html  # vetoes
    assert str(doc.pk) in html  # knowledge hits: ids only
    assert "Entregamos em 3 dias." not in html.split('id="turns-title"')[1].split("</section>")[0]
    assert "router_decision" in html and "prazo" in html  # keys added later still show
    assert "claude-haiku-4-5" in html and "1.200 / 80" in html and "900 / 300" in html
    assert "640 ms" in html and "rate_limited" in html
    assert "Assumir conversa" not in html  # viewer


def test_conversation_detail_query_count_is_constant(world, django_assert_num_queries):
    conversation = factories.make_conversation(world.channel_a)
    client = world.client_for(world.viewer)
    for i in range(3):
        turn = factories.make_turn(conversation, trace={"batch": 1})
        factories.make_message(conversation, f"linha {i}", turn=turn)
        LlmCall.objects.create(
            organization=world.org_a,
            conversation=conversation,
            turn=turn,
            purpose="orchestrator",
            provider="offline",
            model="offline",
        )
    client.get(f"/conversas/{conversation.pk}/")
    # session · user · membership · conversation (+contact, channel, agent) ·
    # messages (+sent_by) · LLM calls · turns (+agent version) · open handoff · nav badge ·
    # memberships (context processor) · internal notes (+author)
    with django_assert_num_queries(11):
        client.get(f"/conversas/{conversation.pk}/")


def test_conversation_detail_of_another_org_is_404(world):
    theirs = factories.make_conversation(world.channel_b)
    response = world.client_for(world.admin).get(f"/conversas/{theirs.pk}/")
    assert response.status_code == 404


def test_take_over_hands_the_conversation_to_the_team(world):
    conversation = factories.make_conversation(world.channel_a)
    factories.make_message(conversation, "oi")
    client = world.client_for(world.agent)
    assert "Assumir conversa" in client.get(f"/conversas/{conversation.pk}/").content.decode()

    response = client.post(f"/conversas/{conversation.pk}/assumir/")

    handoff = Handoff.objects.get(conversation=conversation)
    assert response.status_code == 302
    assert response["Location"] == f"/transbordos/{handoff.pk}/"
    assert handoff.status == "open" and handoff.reason_code == "manual"
    conversation.refresh_from_db()
    assert conversation.status == "pending"
    assert conversation.bot_silenced_until == SILENCED_FOREVER
    assert conversation.contact.force_human is True


def test_take_over_is_denied_to_a_viewer(world):
    conversation = factories.make_conversation(world.channel_a)
    response = world.client_for(world.viewer).post(f"/conversas/{conversation.pk}/assumir/")
    assert response.status_code == 403
    assert not Handoff.objects.exists()
    assert Conversation.objects.get(pk=conversation.pk).status == "ai_handling"


def test_take_over_of_another_org_is_404(world):
    theirs = factories.make_conversation(world.channel_b)
    response = world.client_for(world.agent).post(f"/conversas/{theirs.pk}/assumir/")
    assert response.status_code == 404
    assert not Handoff.objects.exists()


def test_take_over_of_a_closed_conversation_changes_nothing(world):
    conversation = factories.make_conversation(world.channel_a)
    conversation.status = "closed"
    conversation.save(update_fields=["status"])
    response = world.client_for(world.agent).post(f"/conversas/{conversation.pk}/assumir/")
    assert response.status_code == 302
    assert not Handoff.objects.exists()
    assert Message.objects.count() == 0


def test_a_file_sent_without_a_caption_reads_in_portuguese(world):
    conversation = factories.make_conversation(world.channel_a)
    factories.make_message(
        conversation,
        "",
        kind="document",
        direction="outbound",
        sender_kind="human",
        status="sent",
        media_url="https://arquivos.exemplo/contrato.pdf",
    )
    html = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()
    assert "[documento]" in html and "[document]" not in html
