"""The inbox in a browser (Debian's Chromium, the tests/e2e harness): assign → reply with
a canned reply → resolve → the customer writes again → reopened; search finds a message
by a word of its text; a desktop notification fires for a new handoff in the member's
queue (window.Notification is stubbed in the page: the test asserts the JS call)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction

from conversation.handoff import perform_human_handoff
from conversation.models import Conversation, Handoff, Message
from inbox import services
from tests import factories
from tests.browser import login
from tests.inbox.conftest import conversation_with

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = os.environ.get("E2E_SCREENSHOTS", "")
PHONE = "5511955554444"

FAKE_NOTIFICATION = """
window.__notifications = [];
window.Notification = class {
  constructor(title, options) {
    window.__notifications.push({ title: title, body: (options || {}).body || "" });
  }
  static requestPermission() { return Promise.resolve("granted"); }
};
window.Notification.permission = "granted";
"""


def _shot(page: Any, name: str) -> None:
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"inbox-{name}.png"), full_page=True)


def _eventually(check: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            assert value, "condition never held"
            return value
        time.sleep(0.2)


def _login(world: Any, settings: Any, page: Any, base: str) -> None:
    settings.TURN_BURST_WINDOW_S = 0
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    world.agent.first_name = "Bruno"
    world.agent.set_password(factories.PASSWORD)
    world.agent.save(update_fields=["password", "first_name"])
    login(page, base, world.agent)


def _say(page: Any, text: str) -> None:
    page.fill("#id_texto", text)
    page.press("#id_texto", "Enter")
    page.locator(".bubble-me", has_text=text).wait_for()


def test_assign_reply_with_canned_resolve_and_reopen(world, live_server, desktop_page, settings):
    page, base = desktop_page, live_server.url
    _login(world, settings, page, base)
    with transaction.atomic():
        services.canned_reply_create(
            organization=world.org_a,
            actor=world.admin,
            title="Saudação",
            shortcut="saudacao",
            body="Olá, {{nome}}! Aqui é {{atendente}}, vou cuidar do seu pedido.",
        )
    simulator = f"{base}/simulador/?canal={world.channel_a.pk}&telefone={PHONE}&nome=Ana"

    # The customer asks for a person: the AI hands off to the team.
    page.goto(simulator)
    _say(page, "quero falar com atendente")
    handoff = _eventually(lambda: Handoff.objects.filter(status="open").first())
    conversation = handoff.conversation

    # Assign: from the list to the conversation, "Atribuir a mim".
    page.goto(f"{base}/?ver=sem-responsavel")
    page.locator(f"#conversation-row-{conversation.pk}").click()
    page.wait_for_url(f"**/conversas/{conversation.pk}/")
    page.get_by_role("button", name="Atribuir a mim").click()
    page.locator("#inbox-assignee-name", has_text="Bruno").wait_for()
    assert Conversation.objects.get(pk=conversation.pk).assigned_to.user == world.agent
    page.goto(f"{base}/?ver=minhas")
    page.locator(f"#conversation-row-{conversation.pk}").wait_for()
    _shot(page, "1-mine")

    # Reply with a canned reply: "/" in the reply box, pick, send.
    page.goto(f"{base}/transbordos/{handoff.pk}/")
    box = page.locator("#reply-form textarea")
    box.click()
    box.press_sequentially("/sauda")
    page.locator(".canned-menu li", has_text="Saudação").wait_for()
    _shot(page, "2-canned-menu")
    box.press("Enter")
    expected = "Olá, Ana! Aqui é Bruno, vou cuidar do seu pedido."
    assert box.input_value() == expected
    page.get_by_role("button", name="Enviar").click()
    page.locator("#handoff-messages", has_text=expected).wait_for()
    assert Message.objects.filter(conversation=conversation, body=expected, sender_kind="human")

    # Resolve.
    page.goto(f"{base}/conversas/{conversation.pk}/")
    page.locator("#inbox-resolve").click()
    page.locator(".page-head .badge", has_text="Encerrada").wait_for()
    assert Conversation.objects.get(pk=conversation.pk).status == "closed"
    page.goto(f"{base}/?status=closed")
    page.locator(f"#conversation-row-{conversation.pk}").wait_for()
    _shot(page, "3-resolved")

    # The customer writes again: the same conversation reopens, to the AI.
    page.goto(simulator)
    _say(page, "oi, voltei")
    _eventually(lambda: Conversation.objects.get(pk=conversation.pk).status == "ai_handling")
    assert Conversation.objects.filter(contact=conversation.contact).count() == 1
    page.goto(f"{base}/conversas/{conversation.pk}/")
    page.locator(".page-head .badge", has_text="Com a IA").wait_for()
    page.locator("#inbox-assignee-name", has_text="Bruno").wait_for()
    _shot(page, "4-reopened")


def test_search_finds_a_message_by_a_word_of_its_text(world, live_server, phone_page, settings):
    page, base = phone_page, live_server.url
    _login(world, settings, page, base)
    hit = conversation_with(world.channel_a, phone=PHONE, name="Carla", text="meu boleto venceu")
    miss = conversation_with(world.channel_a, phone="5511900000002", text="trocar o tamanho")

    page.goto(f"{base}/")
    page.locator(f"#conversation-row-{miss.pk}").wait_for()
    page.fill("input[name=q]", "boleto")
    page.press("input[name=q]", "Enter")
    page.wait_for_url("**q=boleto**")
    page.locator(f"#conversation-row-{hit.pk}").wait_for()
    assert page.locator(f"#conversation-row-{miss.pk}").count() == 0
    # 390 px wide: nothing scrolls sideways.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    _shot(page, "5-search-390")


def test_a_new_handoff_in_my_queue_raises_a_desktop_notification(
    world, live_server, desktop_page, settings
):
    page, base = desktop_page, live_server.url
    page.add_init_script(FAKE_NOTIFICATION)
    already = conversation_with(world.channel_a, phone="5511900000009", name="Antiga", text="oi")
    with transaction.atomic():
        perform_human_handoff(conversation=already, reason_code="requested_human")
    _login(world, settings, page, base)

    page.goto(f"{base}/")
    # The first poll learns what is already waiting, and alerts nothing.
    # Polled from Python: wait_for_function evaluates its string with eval, which the CSP
    # (script-src 'self') forbids in the page.
    _eventually(
        lambda: page.evaluate("sessionStorage.getItem('retaguarda.inbox.seenHandoffs') !== null")
    )
    assert page.evaluate("window.__notifications.length") == 0

    fresh = conversation_with(world.channel_a, phone=PHONE, name="Dora", text="socorro")
    with transaction.atomic():
        perform_human_handoff(conversation=fresh, reason_code="requested_human")
    # Someone else's conversation: not in my queue.
    other = conversation_with(world.channel_a, phone="5511900000008", name="Eva", text="oi")
    with transaction.atomic():
        Conversation.objects.filter(pk=other.pk).update(assigned_to=world.manager.memberships.get())
        other.refresh_from_db()
        perform_human_handoff(conversation=other, reason_code="requested_human")

    page.evaluate("window.retaguardaInbox.poll()")  # the 15-second poll, now
    calls = page.evaluate("window.__notifications")
    assert calls == [
        {"title": "Novo transbordo na sua fila", "body": "Dora está esperando a equipe."}
    ]
    page.evaluate("window.retaguardaInbox.poll()")
    assert page.evaluate("window.__notifications.length") == 1  # once per handoff


def test_inbox_pages_fit_a_phone(world, live_server, phone_page, settings):
    page, base = phone_page, live_server.url
    world.agent = world.manager  # the settings page edits need a manager
    _login(world, settings, page, base)
    conversation = conversation_with(world.channel_a, phone=PHONE, name="Fernanda", text="oi")
    with transaction.atomic():
        label = services.label_create(
            organization=world.org_a, actor=world.admin, name="Financeiro", color="green"
        )
        services.conversation_label_toggle(
            conversation=conversation, label=label, actor=world.admin
        )
        services.internal_note_add(
            contact=conversation.contact,
            conversation=conversation,
            actor=world.admin,
            body="Cliente pediu retorno depois das 18h, " + "muito " * 30 + "importante",
        )
    for url, ready in (
        (f"/conversas/{conversation.pk}/", "#inbox-panel .inbox-labels"),
        (f"/caixa/contatos/{conversation.contact_id}/", "#contact-notes"),
        ("/caixa/ajustes/", "#label-list"),
        ("/", f"#conversation-row-{conversation.pk}"),
    ):
        page.goto(f"{base}{url}")
        page.locator(ready).wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, url
        _shot(page, "390-" + url.strip("/").replace("/", "-")[:40])
