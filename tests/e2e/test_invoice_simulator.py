"""A person asks the invoice agent to cancel two services in the simulator, confirms with
"sim" and sees both executed in order; the conversation page shows the runtime's trace."""

from __future__ import annotations

import pytest

from conversation.models import Conversation, RuntimeAction
from tests import factories
from tests.runtime_adapters.conftest import make_desk

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _say(page, text):
    page.fill("#id_texto", text)
    page.press("#id_texto", "Enter")


def test_cancel_two_services_and_confirm_in_the_simulator(live_server, phone_page, settings):
    settings.TURN_BURST_WINDOW_S = 0
    settings.CONVERSATION_RUNTIME_ENABLED = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    desk = make_desk()
    user = factories.make_user(desk.org, "agent")
    page = phone_page
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", factories.PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")

    page.goto(f"{live_server.url}/simulador/?canal={desk.channel.pk}")
    _say(page, "quero cancelar o VOD e o HBO Max")
    page.locator(".bubble-them", has_text="Entendi que você deseja cancelar").wait_for()
    _say(page, "sim")
    page.locator(".bubble-them", has_text="HBO Max junto ao parceiro").wait_for()

    assert list(RuntimeAction.objects.values_list("tool", flat=True)) == [
        "cancelar_vas_single",
        "vas_strategic",
    ]
    conversation = Conversation.objects.get(channel=desk.channel)
    page.goto(f"{live_server.url}/conversas/{conversation.pk}/")
    page.locator("details.dev-trace > summary").first.click()  # the latest turn comes first
    compare = page.locator(".runtime-compare").first
    assert "Executar o que o cliente confirmou" in compare.inner_text()
    assert "Cancelei o Vivo Play VOD" in compare.inner_text()
