"""Channel pages: connect a WAHA or a Meta number, paste the URL and the secret shown once,
test the connection (provider APIs at the HTTP level, respx), activate, choose who answers."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import respx

from accounts.models import AuditLog
from conversation.models import ChannelSession, Message
from routers.models import Router
from tests import factories
from tests.channels._webhooks import (
    META_NUMBER,
    WAHA_SESSION,
    meta_body,
    meta_post,
    meta_text,
    waha_message,
    waha_post,
)

GRAPH = "https://graph.facebook.com/v21.0"
WAHA_URL = "https://waha.loja.example"


def _form_id(html: str) -> str:
    match = re.search(r'name="form_id" value="([^"]+)"', html)
    assert match, "the connect form carries its one-time id"
    return match.group(1)


def _shown(html: str, field_id: str) -> str:
    match = re.search(rf'id="{field_id}" value="([^"]+)"', html)
    assert match, f"{field_id} is on the page"
    return match.group(1)


def _connect_waha(client: Any, **overrides: str) -> Any:
    page = client.get("/canais/novo/waha/").content.decode()
    data = {
        "name": "Loja WAHA",
        "api_base_url": WAHA_URL,
        "external_id": WAHA_SESSION,
        "api_token": "chave-waha-123",
        "phone_number": "+55 11 98888-7777",
        "form_id": _form_id(page),
        **overrides,
    }
    return client.post("/canais/novo/waha/", data)


def _connect_meta(client: Any, **overrides: str) -> Any:
    page = client.get("/canais/novo/meta/").content.decode()
    data = {
        "name": "Loja Meta",
        "external_id": META_NUMBER,
        "business_account_id": "102290129340398",
        "api_token": "EAAG-token-do-sistema",
        "webhook_secret": "app-secret-da-meta",
        "form_id": _form_id(page),
        **overrides,
    }
    return client.post("/canais/novo/meta/", data)


def _session_info(status: str = "WORKING") -> dict[str, Any]:
    # The shape of WAHA's SessionInfo (openapi 2026.7.1, GET /api/sessions/{session}).
    return {
        "name": WAHA_SESSION,
        "status": status,
        "me": {"id": "5511988887777@c.us", "pushName": "Loja"},
        "presence": None,
        "timestamps": {"activity": 1767225600000},
    }


# --- list and connect ---------------------------------------------------------------------


def test_the_list_shows_this_organizations_channels_and_how_each_is_answered(world):
    router_channel = factories.make_channel(world.org_a, name="Com roteador")
    Router.objects.create(organization=world.org_a, name="Triagem", channel=router_channel)
    html = world.client_for(world.admin).get("/canais/").content.decode()
    assert world.channel_a.name in html and "Agente: Suporte" in html
    assert "Roteador: Triagem" in html
    assert world.channel_b.name not in html
    assert "Conectar número WAHA" in html and "Conectar número Meta" in html


def test_connecting_a_waha_number_shows_the_webhook_url_and_a_secret_once(world):
    client = world.client_for(world.admin)
    response = _connect_waha(client)
    html = response.content.decode()
    channel = ChannelSession.objects.get(name="Loja WAHA")
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    url = _shown(html, "webhook-url")
    assert urlsplit(url).path == f"/webhooks/waha/{channel.pk}"
    secret = _shown(html, "webhook-secret")
    assert secret == channel.webhook_secret and len(secret) >= 32
    assert (channel.provider, channel.external_id, channel.api_token) == (
        "waha",
        WAHA_SESSION,
        "chave-waha-123",
    )
    assert "não será mostrado de novo" in html
    # Never again: not on the channel page, not in the list, not in the audit row.
    for page in ("/canais/", f"/canais/{channel.pk}/"):
        later = client.get(page).content.decode()
        assert secret not in later and "chave-waha-123" not in later
    audit = AuditLog.objects.get(action="channel.create", resource_id=str(channel.pk))
    assert secret not in json.dumps(audit.diff) and "chave-waha-123" not in json.dumps(audit.diff)


def test_the_shown_secret_and_url_accept_a_signed_waha_delivery(world):
    client = world.client_for(world.admin)
    html = _connect_waha(client).content.decode()
    channel = ChannelSession.objects.get(name="Loja WAHA")
    body = json.dumps(waha_message("waha-msg-1")).encode()
    path = urlsplit(_shown(html, "webhook-url")).path
    assert path == f"/webhooks/waha/{channel.pk}"
    response = waha_post(channel, body, secret=_shown(html, "webhook-secret"))
    assert response.status_code == 200, response.content
    assert response.json()["stored"] == 1
    assert Message.objects.filter(channel=channel, provider_message_id="waha-msg-1").exists()
    assert waha_post(channel, body, secret="outro-segredo").status_code == 401


def test_a_resubmitted_connect_form_connects_the_number_once(world):
    client = world.client_for(world.admin)
    page = client.get("/canais/novo/waha/").content.decode()
    data = {
        "name": "Uma vez",
        "api_base_url": WAHA_URL,
        "external_id": "default",
        "form_id": _form_id(page),
    }
    assert client.post("/canais/novo/waha/", data).status_code == 200
    again = client.post("/canais/novo/waha/", data)
    assert again.status_code == 302 and again["Location"] == "/canais/"
    assert ChannelSession.objects.filter(name="Uma vez").count() == 1


def test_connecting_meta_generates_the_verify_token_and_the_app_secret_checks_signatures(world):
    client = world.client_for(world.admin)
    html = _connect_meta(client).content.decode()
    channel = ChannelSession.objects.get(name="Loja Meta")
    assert channel.business_account_id == "102290129340398"
    verify = _shown(html, "verify-token")
    assert "webhook-secret" not in html  # the app secret was typed, it is not echoed
    handshake = client.get(
        f"/webhooks/meta/{channel.pk}",
        {"hub.mode": "subscribe", "hub.verify_token": verify, "hub.challenge": "1158201444"},
    )
    assert handshake.status_code == 200 and handshake.content == b"1158201444"
    body = json.dumps(meta_body([meta_text("wamid.canal-1")])).encode()
    assert meta_post(channel, body, secret="app-secret-da-meta").status_code == 200
    assert meta_post(channel, body, secret="outro").status_code == 401


def test_meta_needs_its_ids_as_digits_and_both_secrets(world):
    response = _connect_meta(
        world.client_for(world.admin), external_id="abc", api_token="", webhook_secret=""
    )
    assert response.status_code == 200
    form = response.context["form"]
    assert set(form.errors) == {"external_id", "api_token", "webhook_secret"}
    assert not ChannelSession.objects.filter(name="Loja Meta").exists()


def test_an_agent_of_another_organization_cannot_be_chosen(world):
    response = _connect_waha(world.client_for(world.admin), agent=str(world.agent_b.pk))
    assert "agent" in response.context["form"].errors
    assert not ChannelSession.objects.filter(name="Loja WAHA").exists()


# --- testar conexão -----------------------------------------------------------------------


def _waha_channel(world: Any) -> ChannelSession:
    return factories.make_channel(
        world.org_a,
        provider="waha",
        name="WAHA",
        api_base_url=WAHA_URL,
        external_id=WAHA_SESSION,
        api_token="chave-certa",
    )


def _meta_channel(world: Any) -> ChannelSession:
    return factories.make_channel(
        world.org_a, provider="meta", name="Meta", external_id=META_NUMBER, api_token="EAAG-ok"
    )


def _test(world: Any, channel: ChannelSession) -> str:
    response = world.client_for(world.admin).post(
        f"/canais/{channel.pk}/testar/", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (httpx.Response(200, json=_session_info()), "está funcionando"),
        (httpx.Response(200, json=_session_info("SCAN_QR_CODE")), "escaneie-o no painel"),
        (httpx.Response(200, json=_session_info("STOPPED")), "está “STOPPED”"),
        (httpx.Response(401, json={"message": "Unauthorized"}), "chave da API foi recusada (401)"),
        (httpx.Response(404, json={"message": "Not found"}), "não existe neste WAHA (404)"),
        (httpx.Response(502, text="Bad gateway"), "HTTP 502"),
        (httpx.ConnectError("refused"), "Não foi possível conectar a waha.loja.example"),
        (httpx.ReadTimeout("slow"), "não respondeu a tempo"),
    ],
)
def test_testing_a_waha_channel_says_what_is_wrong(world, answer, expected):
    channel = _waha_channel(world)
    with respx.mock(assert_all_called=True) as mock:
        route = mock.get(f"{WAHA_URL}/api/sessions/{WAHA_SESSION}")
        if isinstance(answer, Exception):
            route.side_effect = answer
        else:
            route.return_value = answer
        html = _test(world, channel)
    assert expected in html, html
    assert route.calls.last.request.headers["X-Api-Key"] == "chave-certa"
    assert "chave-certa" not in html


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            httpx.Response(
                200,
                json={
                    "verified_name": "Loja Azul",
                    "display_phone_number": "+55 11 4000-1234",
                    "quality_rating": "GREEN",
                    "id": META_NUMBER,
                },
            ),
            "Conectado: Loja Azul (+55 11 4000-1234).",
        ),
        (
            httpx.Response(
                401,
                json={
                    "error": {
                        "message": "Invalid OAuth access token - Cannot parse access token",
                        "type": "OAuthException",
                        "code": 190,
                        "fbtrace_id": "A1b2C3",
                    }
                },
            ),
            "O token foi recusado (401)",
        ),
        (
            httpx.Response(
                400,
                json={
                    "error": {
                        "message": "Unsupported get request. Object with ID '1' does not exist",
                        "type": "GraphMethodException",
                        "code": 100,
                        "error_subcode": 33,
                    }
                },
            ),
            "Este ID de número não existe",
        ),
        (
            httpx.Response(403, json={"error": {"message": "(#10) denied", "code": 10}}),
            "não tem acesso a este número (403)",
        ),
    ],
)
def test_testing_a_meta_channel_says_what_is_wrong(world, answer, expected):
    channel = _meta_channel(world)
    with respx.mock(assert_all_called=True) as mock:
        route = mock.get(f"{GRAPH}/{META_NUMBER}").mock(return_value=answer)
        html = _test(world, channel)
    assert expected in html, html
    assert route.calls.last.request.headers["Authorization"] == "Bearer EAAG-ok"


def test_testing_without_htmx_redirects_with_the_answer_as_a_message(world):
    channel = _waha_channel(world)
    client = world.client_for(world.admin)
    with respx.mock:
        respx.get(f"{WAHA_URL}/api/sessions/{WAHA_SESSION}").mock(
            return_value=httpx.Response(200, json=_session_info())
        )
        response = client.post(f"/canais/{channel.pk}/testar/", follow=True)
    assert "está funcionando" in response.content.decode()


def test_testing_the_simulator_calls_nothing(world):
    with respx.mock:  # no route: any request would fail
        assert "sempre pronto" in _test(world, world.channel_a)


# --- settings, activation, secret, who answers ----------------------------------------------


def test_settings_keep_a_secret_left_blank_and_replace_one_given(world):
    channel = _waha_channel(world)
    client = world.client_for(world.admin)
    form = {"name": "WAHA novo", "api_base_url": WAHA_URL, "external_id": "vendas", "api_token": ""}
    assert client.post(f"/canais/{channel.pk}/", form).status_code == 302
    channel.refresh_from_db()
    assert (channel.name, channel.external_id, channel.api_token) == (
        "WAHA novo",
        "vendas",
        "chave-certa",
    )
    client.post(f"/canais/{channel.pk}/", {**form, "api_token": "chave-nova"})
    channel.refresh_from_db()
    assert channel.api_token == "chave-nova"
    audits = AuditLog.objects.filter(action="channel.update", resource_id=str(channel.pk))
    assert audits.count() == 2
    assert "chave-nova" not in json.dumps([a.diff for a in audits])
    assert audits.first().diff == {"changed": ["api_token"]}
    assert "chave-nova" not in client.get(f"/canais/{channel.pk}/").content.decode()


def test_a_deactivated_channel_refuses_its_webhooks_until_activated(world):
    client = world.client_for(world.admin)
    html = _connect_waha(client).content.decode()
    channel = ChannelSession.objects.get(name="Loja WAHA")
    secret = _shown(html, "webhook-secret")
    body = json.dumps(waha_message("waha-off-1")).encode()
    client.post(f"/canais/{channel.pk}/ativo/", {"is_active": "off"})
    assert waha_post(channel, body, secret=secret).status_code == 404
    client.post(f"/canais/{channel.pk}/ativo/", {"is_active": "on"})
    assert waha_post(channel, body, secret=secret).status_code == 200
    actions = set(
        AuditLog.objects.filter(resource_id=str(channel.pk)).values_list("action", flat=True)
    )
    assert {"channel.deactivate", "channel.activate"} <= actions


def test_a_new_secret_is_shown_once_and_the_old_one_stops_working(world):
    client = world.client_for(world.admin)
    old = _shown(_connect_waha(client).content.decode(), "webhook-secret")
    channel = ChannelSession.objects.get(name="Loja WAHA")
    response = client.post(f"/canais/{channel.pk}/segredo/")
    new = _shown(response.content.decode(), "webhook-secret")
    assert new != old and response["Cache-Control"] == "no-store"
    body = json.dumps(waha_message("waha-rot-1")).encode()
    assert waha_post(channel, body, secret=old).status_code == 401
    assert waha_post(channel, body, secret=new).status_code == 200


def test_a_new_secret_for_meta_is_the_verify_token_not_the_app_secret(world):
    channel = _meta_channel(world)
    channel.webhook_secret = "app-secret"
    channel.save()
    html = world.client_for(world.admin).post(f"/canais/{channel.pk}/segredo/").content.decode()
    channel.refresh_from_db()
    assert _shown(html, "verify-token") == channel.webhook_verify_token
    assert channel.webhook_secret == "app-secret"


def test_choosing_a_router_activates_it_on_this_number_and_an_agent_turns_it_off(world):
    client = world.client_for(world.admin)
    channel = world.channel_a
    router = Router.objects.create(
        organization=world.org_a, name="Triagem", channel=channel, is_active=False
    )
    response = client.post(
        f"/canais/{channel.pk}/atendimento/", {"answered_by": f"router:{router.pk}"}
    )
    assert response.status_code == 302
    router.refresh_from_db()
    assert router.is_active and router.channel_id == channel.pk
    other = factories.make_agent(world.org_a, "Vendas")
    client.post(f"/canais/{channel.pk}/atendimento/", {"answered_by": f"agent:{other.pk}"})
    router.refresh_from_db()
    channel.refresh_from_db()
    assert not router.is_active and channel.agent_id == other.pk
    client.post(f"/canais/{channel.pk}/atendimento/", {"answered_by": ""})
    channel.refresh_from_db()
    assert channel.agent_id is None


def test_channel_pages_are_for_admins_only(world):
    for user in (world.manager, world.viewer):
        client = world.client_for(user)
        assert client.get("/canais/").status_code == 403
        assert client.get(f"/canais/{world.channel_a.pk}/").status_code == 403
    assert world.client_for(world.admin).get(f"/canais/{world.channel_b.pk}/").status_code == 404
    nav = world.client_for(world.manager).get("/").content.decode()
    assert 'href="/canais/"' not in nav
    assert 'href="/canais/"' in world.client_for(world.admin).get("/").content.decode()
