"""Connecting a number for the first time, as a business owner would (on a phone too): the
WAHA address the docs tell you to type, identifiers a phone keyboard must not change, the
stored key kept away from a new address, a "Testar conexão" that tells the whole truth,
the callback URL Meta can reach, and switching off a number that still has conversations."""

from __future__ import annotations

import re
from typing import Any

import httpx
import respx

from conversation.models import ChannelSession, ConversationStatus
from tests import factories
from tests.channels._webhooks import META_NUMBER, WAHA_SESSION
from tests.conversation.test_views_channels import (
    GRAPH,
    WAHA_URL,
    _connect_waha,
    _meta_channel,
    _session_info,
    _test,
    _waha_channel,
)


def _input(html: str, name: str) -> str:
    match = re.search(rf'<input[^>]*name="{name}"[^>]*>', html)
    assert match, f"{name} is on the page"
    return match.group(0)


# --- the WAHA address ---------------------------------------------------------------------


def test_a_waha_address_on_the_docker_network_is_accepted_as_the_docs_say(world):
    # docs/whatsapp.md: "WAHA's base URL as this server reaches it (e.g. http://waha:3000)".
    response = _connect_waha(world.client_for(world.admin), api_base_url="http://waha:3000")
    assert response.status_code == 200, response.context["form"].errors
    channel = ChannelSession.objects.get(name="Loja WAHA")
    assert channel.api_base_url == "http://waha:3000"


def test_a_waha_address_refuses_other_schemes_credentials_and_overlong_values(world):
    client = world.client_for(world.admin)
    for address in (
        "ftp://waha.loja.example",
        "https://admin:senha@waha.loja.example",
        "https://waha.loja.example/" + "a" * 200,
    ):
        response = _connect_waha(client, api_base_url=address)
        assert "api_base_url" in response.context["form"].errors, address
    assert not ChannelSession.objects.filter(name="Loja WAHA").exists()


# --- a phone keyboard ---------------------------------------------------------------------


def test_identifiers_are_typed_without_capitals_or_corrections_on_a_phone(world):
    client = world.client_for(world.admin)
    session = _input(client.get("/canais/novo/waha/").content.decode(), "external_id")
    assert 'autocapitalize="none"' in session and 'autocorrect="off"' in session
    assert 'spellcheck="false"' in session
    meta = client.get("/canais/novo/meta/").content.decode()
    for name in ("external_id", "business_account_id"):
        assert 'inputmode="numeric"' in _input(meta, name)
    channel = _waha_channel(world)
    detail = client.get(f"/canais/{channel.pk}/").content.decode()
    assert 'autocapitalize="none"' in _input(detail, "external_id")


# --- a new address does not get the stored key --------------------------------------------


def test_a_new_waha_address_needs_the_key_typed_again(world):
    channel = _waha_channel(world)
    client = world.client_for(world.admin)
    form = {"name": "WAHA", "api_base_url": "https://coletor.example", "external_id": "default"}
    response = client.post(f"/canais/{channel.pk}/", form)
    assert response.status_code == 200
    assert "api_token" in response.context["form"].errors
    channel.refresh_from_db()
    assert channel.api_base_url == WAHA_URL and channel.api_token == "chave-certa"
    # Same server, another path or session: the stored key stays.
    same = {**form, "api_base_url": f"{WAHA_URL}/", "external_id": "vendas"}
    assert client.post(f"/canais/{channel.pk}/", same).status_code == 302
    # With the key typed again, the address changes.
    moved = {**form, "api_token": "chave-do-novo"}
    assert client.post(f"/canais/{channel.pk}/", moved).status_code == 302
    channel.refresh_from_db()
    assert (channel.api_base_url, channel.api_token) == ("https://coletor.example", "chave-do-novo")


# --- Testar conexão tells the whole truth ---------------------------------------------------


def test_a_working_session_on_a_switched_off_channel_is_not_reported_as_ready(world):
    channel = _waha_channel(world)
    channel.is_active = False
    channel.save()
    with respx.mock:
        respx.get(f"{WAHA_URL}/api/sessions/{WAHA_SESSION}").mock(
            return_value=httpx.Response(200, json=_session_info())
        )
        html = _test(world, channel)
    assert "está funcionando" in html
    assert "desativado" in html and "flash-error" in html


def test_a_meta_number_without_its_app_secret_is_not_reported_as_ready(world):
    channel = _meta_channel(world)
    channel.webhook_secret = ""
    channel.save()
    answer = {
        "verified_name": "Loja",
        "display_phone_number": "+55 11 4000-1234",
        "id": META_NUMBER,
    }
    with respx.mock:
        respx.get(f"{GRAPH}/{META_NUMBER}").mock(return_value=httpx.Response(200, json=answer))
        html = _test(world, channel)
    assert "Conectado" in html and "Chave secreta do app" in html and "flash-error" in html


# --- the callback URL Meta can reach ------------------------------------------------------


def test_the_meta_page_warns_when_the_callback_url_is_not_public_https(world, settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "retaguarda.loja.com.br"]
    channel = _meta_channel(world)
    client = world.client_for(world.admin)
    local = client.get(f"/canais/{channel.pk}/", HTTP_HOST="localhost:8000").content.decode()
    assert 'id="webhook-url-warning"' in local and "HTTPS" in local
    public = client.get(
        f"/canais/{channel.pk}/", HTTP_HOST="retaguarda.loja.com.br", secure=True
    ).content.decode()
    assert 'value="https://retaguarda.loja.com.br/webhooks/meta/' in public
    assert 'id="webhook-url-warning"' not in public


def test_the_waha_page_warns_that_localhost_is_not_reachable_from_waha(world):
    channel = _waha_channel(world)
    client = world.client_for(world.admin)
    page = client.get(f"/canais/{channel.pk}/", HTTP_HOST="localhost:8000").content.decode()
    assert 'id="webhook-url-warning"' in page
    on_network = client.get(f"/canais/{channel.pk}/", HTTP_HOST="testserver").content.decode()
    assert 'id="webhook-url-warning"' not in on_network


# --- switching off a number with open conversations -----------------------------------------


def _open_conversations(world: Any, channel: ChannelSession) -> None:
    factories.make_conversation(channel, phone="5511911110001")
    factories.make_conversation(channel, phone="5511911110002")
    closed = factories.make_conversation(channel, phone="5511911110003")
    closed.status = ConversationStatus.CLOSED
    closed.save()


def test_switching_off_asks_first_saying_how_many_conversations_are_open(world):
    channel = _waha_channel(world)
    _open_conversations(world, channel)
    html = world.client_for(world.admin).get(f"/canais/{channel.pk}/").content.decode()
    form = re.search(r'<form[^>]*channel_set_active[^>]*>|<form[^>]*/ativo/"[^>]*>', html)
    assert form and "data-confirm=" in form.group(0)
    assert "2 conversas abertas" in form.group(0)


def test_switching_off_says_what_really_stops(world):
    channel = _waha_channel(world)
    response = world.client_for(world.admin).post(
        f"/canais/{channel.pk}/ativo/", {"is_active": "off"}, follow=True
    )
    html = response.content.decode()
    assert "nada é enviado" not in html  # the outbox still delivers what is queued
    assert "deixam de chegar" in html


# --- who answers: a router taken from another number --------------------------------------


def test_taking_a_router_from_another_number_says_so_before_and_after(world):
    from routers.models import Router

    support = factories.make_channel(world.org_a, name="Suporte")
    router = Router.objects.create(
        organization=world.org_a, name="Triagem", channel=support, is_active=True
    )
    client = world.client_for(world.admin)
    page = client.get(f"/canais/{world.channel_a.pk}/").content.decode()
    assert re.search(r'value="router:[^"]+">Triagem \(responde em «Suporte»\)', page)

    response = client.post(
        f"/canais/{world.channel_a.pk}/atendimento/",
        {"answered_by": f"router:{router.pk}"},
        follow=True,
    )

    router.refresh_from_db()
    assert router.channel_id == world.channel_a.pk
    assert "deixou de responder em «Suporte»" in response.content.decode()


# --- the same number twice -----------------------------------------------------------------


def test_connecting_a_number_already_connected_points_to_its_channel(world):
    client = world.client_for(world.admin)
    assert _connect_waha(client).status_code == 200
    again = _connect_waha(client, name="De novo", api_base_url=f"{WAHA_URL}/")
    assert again.status_code == 200
    assert "external_id" in again.context["form"].errors
    assert "já está conectado no canal «Loja WAHA»" in again.content.decode()
    assert ChannelSession.objects.filter(external_id=WAHA_SESSION).count() == 1
    # Another WAHA server may well have a session of the same name.
    other = _connect_waha(client, name="Outro WAHA", api_base_url="https://waha2.loja.example")
    assert ChannelSession.objects.filter(name="Outro WAHA").exists(), other.context


def test_a_meta_number_id_connects_once_per_organization(world):
    from tests.conversation.test_views_channels import _connect_meta

    client = world.client_for(world.admin)
    _connect_meta(client)
    again = _connect_meta(client, name="Meta de novo")
    assert "external_id" in again.context["form"].errors
    assert ChannelSession.objects.filter(external_id=META_NUMBER).count() == 1


def test_an_unreachable_address_is_named_without_the_credentials_it_carries(world):
    # The Django admin's form still takes "user:password@" in an address.
    channel = _waha_channel(world)
    channel.api_base_url = "https://loja:s3nha-do-waha@waha.loja.example"
    channel.save()
    with respx.mock:
        respx.get(f"{WAHA_URL}/api/sessions/{WAHA_SESSION}").mock(
            side_effect=httpx.ConnectError("refused")
        )
        html = _test(world, channel)
    assert "Não foi possível conectar a waha.loja.example" in html
    assert "s3nha-do-waha" not in html


def test_the_channel_list_query_count_is_constant(world, django_assert_num_queries):
    from routers.models import Router

    client = world.client_for(world.admin)
    client.get("/canais/")
    # session · user · membership · nav badge · channels (+agent) · active routers
    # (prefetch) · memberships (context processor)
    with django_assert_num_queries(7):
        client.get("/canais/")
    for i in range(4):
        agent = factories.make_agent(world.org_a, f"Agente {i}")
        channel = factories.make_channel(world.org_a, agent=agent)
        Router.objects.create(organization=world.org_a, name=f"R{i}", channel=channel)
    with django_assert_num_queries(7):
        html = client.get("/canais/").content.decode()
    assert html.count('class="row"') == 5
