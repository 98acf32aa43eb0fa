"""An htmx request the server can no longer answer with its fragment — the session
expired, the page's CSRF token is stale, the member's role changed — moves the whole page
(htmx does not swap a 403, so the click would otherwise do nothing at all), and never
puts a login page or an error page inside a fragment."""

from __future__ import annotations

from django.test import Client

from conversation.models import Conversation
from tests.inbox.conftest import conversation_with

PHONE = "5511933332222"


def test_an_expired_session_sends_htmx_to_the_login_and_back_to_the_page(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    page = f"/conversas/{conversation.pk}/"

    response = Client().get(
        f"/caixa/conversas/{conversation.pk}/",
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver{page}?ver=todas",
    )

    assert response.status_code == 204 and not response.content
    back = f"/conversas/{conversation.pk}/%3Fver%3Dtodas"
    assert response["HX-Redirect"] == f"/accounts/login/?next={back}"


def test_the_way_back_after_login_never_leaves_the_site(world):
    response = Client().get(
        "/caixa/fila/", HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="https://elsewhere.example/x"
    )
    assert response["HX-Redirect"] == "/accounts/login/"


def test_a_stale_csrf_token_on_an_htmx_post_reloads_the_page(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.agent)

    response = client.post(
        f"/caixa/conversas/{conversation.pk}/para-mim/",
        HTTP_HX_REQUEST="true",
        HTTP_X_CSRFTOKEN="token-de-uma-sessao-antiga",
    )

    assert response.status_code == 403
    assert response["HX-Refresh"] == "true"
    assert Conversation.objects.get(pk=conversation.pk).assigned_to is None


def test_an_htmx_click_refused_by_a_role_changed_meanwhile_reloads_the_page(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    response = world.client_for(world.viewer).post(
        f"/caixa/conversas/{conversation.pk}/para-mim/", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 403
    assert response["HX-Refresh"] == "true"
    assert Conversation.objects.get(pk=conversation.pk).assigned_to is None


def test_a_refused_htmx_poll_does_not_reload_the_page(world):
    # A GET that keeps being refused would reload the page for ever.
    theirs = conversation_with(world.channel_b, phone=PHONE, text="oi")
    response = world.client_for(world.viewer).get(
        f"/caixa/conversas/{theirs.pk}/", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 404 and "HX-Refresh" not in response
