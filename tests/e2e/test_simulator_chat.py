"""Chat as a customer in the WhatsApp simulator: replies appear without reloading the page."""

from __future__ import annotations

import os

import pytest
from django.db import transaction

from conversation.models import Conversation, SenderKind
from conversation.outbox import outbound_enqueue
from tests import factories
from tests.browser import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = os.environ.get("E2E_SCREENSHOTS", "")  # a directory, e.g. /tmp; off by default


def _say(page, text):
    page.fill("#id_texto", text)
    page.press("#id_texto", "Enter")


def test_customer_chat_gets_replies_without_reload(world, live_server, phone_page, settings):
    settings.TURN_BURST_WINDOW_S = 0
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    world.agent.set_password(factories.PASSWORD)
    world.agent.save(update_fields=["password"])
    factories.make_document(
        world.org_a,
        "Prazo de entrega",
        "O prazo de entrega é de 3 a 5 dias úteis para todo o Brasil.",
    )
    page = phone_page
    login(page, live_server.url, world.agent)

    page.goto(f"{live_server.url}/simulador/")
    page.evaluate("window.__sameDocument = true")  # lost if anything reloads the page
    _say(page, "oi")
    page.locator(".bubble-me", has_text="oi").wait_for()
    page.locator(".bubble-them", has_text="Olá! Sou Suporte").wait_for()

    _say(page, "qual o prazo de entrega?")
    page.locator(".bubble-them", has_text="3 a 5 dias úteis").wait_for()
    assert page.locator("#sim-typing").count() == 0

    # A message written outside this page (here: the team, through the outbox) shows up
    # through the 1-second poll alone.
    conversation = Conversation.objects.get(channel=world.channel_a)
    with transaction.atomic():
        outbound_enqueue(
            conversation=conversation, body="Aqui é a Ana, da equipe.", sender_kind=SenderKind.HUMAN
        )
    page.locator(".bubble-them", has_text="Aqui é a Ana, da equipe.").wait_for(timeout=5_000)

    assert page.evaluate("window.__sameDocument") is True
    assert page.locator(".bubble-me").count() == 2
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, "simulator-390.png"), full_page=True)
        page.goto(f"{live_server.url}/conversas/{conversation.pk}/")
        page.screenshot(path=os.path.join(SCREENSHOTS, "conversation-390.png"), full_page=True)
        page.goto(f"{live_server.url}/")
        page.screenshot(path=os.path.join(SCREENSHOTS, "conversations-390.png"), full_page=True)
