"""The WhatsApp simulator page: chat as a customer against one of the org's simulator channels."""

from __future__ import annotations

import re

import pytest

from conversation.models import ChannelSession, Contact, Conversation, Message
from conversation.selectors import default_simulator_phone
from tests import factories


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The shared world creates six users: PBKDF2 would cost seconds per test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


PHONE = "5511977776666"


def _send(client, channel, text, *, msg_id="c-1", phone=PHONE, htmx=True, name="Maria"):
    data = {"canal": str(channel.pk), "telefone": phone, "nome": name, "texto": text, "id": msg_id}
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post("/simulador/enviar/", data, **headers)


def _chat(client, channel, phone=PHONE, version=""):
    return client.get(
        "/simulador/chat/", {"canal": str(channel.pk), "telefone": phone, "v": version}
    )


def test_page_defaults_to_a_phone_derived_from_the_user(world):
    response = world.client_for(world.agent).get("/simulador/")
    html = response.content.decode()
    phone = default_simulator_phone(world.agent.pk)
    assert response.status_code == 200
    assert re.fullmatch(r"[0-9]{8,15}", phone)
    assert f'value="{phone}"' in html
    assert world.channel_a.name in html and world.channel_b.name not in html
    assert 'id="sim-chat"' in html and 'hx-trigger="every 1s"' in html
    assert 'id="sim-composer"' in html
    assert "Nova conversa" in html


def test_page_is_denied_to_a_viewer(world):
    client = world.client_for(world.viewer)
    assert client.get("/simulador/").status_code == 403
    assert _send(client, world.channel_a, "oi").status_code == 403
    assert _chat(client, world.channel_a).status_code == 403
    assert not Message.objects.exists()


def test_sending_stores_the_message_and_the_agent_replies(
    world, django_capture_on_commit_callbacks
):
    client = world.client_for(world.agent)

    with django_capture_on_commit_callbacks(execute=True):
        response = _send(client, world.channel_a, "oi")

    assert response.status_code == 200
    contact = Contact.objects.get(organization=world.org_a, phone=PHONE)
    assert contact.name == "Maria"
    conversation = Conversation.objects.get(contact=contact, channel=world.channel_a)
    rows = list(conversation.messages.order_by("created_at").values_list("sender_kind", "body"))
    assert rows[0] == ("customer", "oi")
    assert rows[1][0] == "ai" and "Suporte" in rows[1][1]
    html = _chat(client, world.channel_a).content.decode()
    assert "oi" in html and "Olá! Sou Suporte" in html
    assert "bubble-me" in html and "bubble-them" in html
    assert "digitando" not in html


def test_htmx_send_returns_a_fresh_composer_and_the_chat_out_of_band(world):
    client = world.client_for(world.agent)

    html = _send(client, world.channel_a, "oi", msg_id="c-first").content.decode()

    assert html.strip().startswith('<form id="sim-composer"')
    new_id = re.search(r'name="id" value="([^"]+)"', html).group(1)
    assert new_id != "c-first" and re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", new_id)
    assert 'id="sim-chat"' in html and 'hx-swap-oob="true"' in html
    # Turns run on commit; here none ran yet, so the customer sees "digitando…".
    assert "digitando" in html


def test_a_double_submit_stores_one_message(world):
    client = world.client_for(world.agent)
    _send(client, world.channel_a, "oi", msg_id="c-same")
    _send(client, world.channel_a, "oi", msg_id="c-same")
    assert Message.objects.filter(direction="inbound").count() == 1


def test_plain_post_redirects_back_to_the_chat(world):
    response = _send(world.client_for(world.agent), world.channel_a, "oi", htmx=False)
    assert response.status_code == 302
    assert response["Location"].startswith("/simulador/?canal=")
    assert Message.objects.filter(body="oi").count() == 1


def test_an_invalid_phone_is_rejected(world):
    client = world.client_for(world.agent)
    html = _send(client, world.channel_a, "oi", phone="12ab").content.decode()
    assert "8 a 15 dígitos" in html
    assert not Message.objects.exists()
    page = client.get("/simulador/", {"telefone": "123"}).content.decode()
    assert "8 a 15 dígitos" in page and 'id="sim-composer"' not in page


def test_channels_of_another_org_are_404(world):
    client = world.client_for(world.admin)
    assert _send(client, world.channel_b, "oi").status_code == 404
    assert _chat(client, world.channel_b).status_code == 404
    assert client.get("/simulador/", {"canal": str(world.channel_b.pk)}).status_code == 404
    assert client.get("/simulador/", {"canal": "not-a-uuid"}).status_code == 404
    assert not Message.objects.exists()


def test_non_simulator_channels_are_not_offered(world):
    waha = factories.make_channel(world.org_a, provider="waha", name="WAHA real")
    client = world.client_for(world.admin)
    assert "WAHA real" not in client.get("/simulador/").content.decode()
    assert _send(client, waha, "oi").status_code == 404


def test_chat_poll_answers_204_while_nothing_changed(world, django_capture_on_commit_callbacks):
    client = world.client_for(world.agent)
    _send(client, world.channel_a, "oi")

    first = _chat(client, world.channel_a)
    version = re.search(r'data-version="([^"]+)"', first.content.decode()).group(1)
    assert "digitando" in first.content.decode()  # the turn has not run yet
    assert _chat(client, world.channel_a, version=version).status_code == 204

    with django_capture_on_commit_callbacks(execute=True):
        _send(client, world.channel_a, "oi de novo", msg_id="c-2")
    changed = _chat(client, world.channel_a, version=version)
    assert changed.status_code == 200
    assert "oi de novo" in changed.content.decode()


def test_a_new_phone_starts_a_new_conversation(world, django_capture_on_commit_callbacks):
    client = world.client_for(world.agent)
    _send(client, world.channel_a, "primeira conversa")
    _send(client, world.channel_a, "outra conversa", phone="5511955554444", msg_id="c-2")

    first = _chat(client, world.channel_a).content.decode()
    second = _chat(client, world.channel_a, phone="5511955554444").content.decode()

    assert "primeira conversa" in first and "outra conversa" not in first
    assert "outra conversa" in second and "primeira conversa" not in second
    assert Conversation.objects.filter(channel=world.channel_a).count() == 2


def test_without_channels_an_admin_can_create_one(world):
    ChannelSession.objects.filter(organization=world.org_a).update(is_active=False)
    client = world.client_for(world.admin)
    html = client.get("/simulador/").content.decode()
    assert "Nenhum canal de simulador ativo" in html
    assert "Criar canal de simulador" in html

    response = client.post("/simulador/canal/", {"name": "Teste", "agent": str(world.agent_a.pk)})

    channel = ChannelSession.objects.get(organization=world.org_a, name="Teste")
    assert channel.provider == "simulator" and channel.agent == world.agent_a
    assert channel.is_active and channel.webhook_secret
    assert response["Location"] == f"/simulador/?canal={channel.pk}"


def test_creating_a_channel_is_denied_below_admin(world):
    response = world.client_for(world.agent).post("/simulador/canal/", {"name": "X"})
    assert response.status_code == 403
    assert not ChannelSession.objects.filter(name="X").exists()


def test_creating_a_channel_with_another_orgs_agent_creates_nothing(world):
    client = world.client_for(world.admin)
    client.post("/simulador/canal/", {"name": "X", "agent": str(world.agent_b.pk)})
    assert not ChannelSession.objects.filter(name="X").exists()
