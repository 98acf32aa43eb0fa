"""In Debian's Chromium (tests/e2e harness): the 404 page in pt-BR, the menu each role
sees (and that every entry opens), and no main page scrolling sideways at 390 px."""

from __future__ import annotations

from typing import Any

import pytest

from conversation.models import Turn
from routers.models import Router
from tests import factories
from tests.browser import close_context, login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

MENU = {
    "viewer": ["Conversas", "Transbordos", "Casos", "Agentes", "Base de conhecimento"],
    "agent": ["Conversas", "Simulador"],
    "manager": ["Simulador", "Roteadores"],
    "admin": ["Canais", "Simulador", "Roteadores", "Equipe"],
}
HIDDEN = {
    "viewer": ["Simulador", "Roteadores", "Canais", "Equipe"],
    "agent": ["Roteadores", "Canais", "Equipe"],
    "manager": ["Canais", "Equipe"],
    "admin": [],
}


def _with_password(user: Any) -> Any:
    user.set_password(factories.PASSWORD)
    user.save(update_fields=["password"])
    return user


def _measured_router(router: Router, world: Any) -> None:
    """Two intents, labelled phrases with long words, and a finished quality run: the
    quality page shows its figures, confusion table and errors."""
    from routers.services import (
        MemberSpec,
        labelled_phrases_add,
        quality_run_execute,
        quality_run_start,
        router_members_replace,
    )

    billing = factories.make_agent(world.org_a, "Financeiro")
    router_members_replace(
        router=router,
        actor=world.admin,
        members=[
            MemberSpec(world.agent_a, "suporte_tecnico_avancado", "Problemas técnicos.", ("erro",)),
            MemberSpec(billing, "segunda_via_de_boleto_bancario", "Boletos.", ("boleto",)),
        ],
    )
    labelled_phrases_add(
        router=router,
        actor=world.admin,
        phrases=[
            (
                "o sistema dá erro ao abrir o relatório financeiroconsolidadomensal",
                "suporte_tecnico_avancado",
            ),
            ("quero a segunda via do boleto", "segunda_via_de_boleto_bancario"),
            ("meu boleto venceu ontem, consegue gerar outro?", "suporte_tecnico_avancado"),
        ],
    )
    run = quality_run_start(router=router, actor=world.admin)
    quality_run_execute(str(run.pk))


def _scroll_width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def test_a_missing_page_is_the_portuguese_404(world, live_server, desktop_page):
    page = desktop_page
    login(page, live_server.url, _with_password(world.agent))
    response = page.goto(f"{live_server.url}/nao-existe/")
    assert response.status == 404
    assert page.locator("h1").inner_text() == "Página não encontrada"
    assert page.locator("html").get_attribute("lang") == "pt-BR"
    assert "Not Found" not in page.content()
    page.click("text=Voltar ao início")
    page.wait_for_url(f"{live_server.url}/")


@pytest.mark.parametrize("role", ["viewer", "agent", "manager", "admin"])
def test_each_role_sees_the_menu_it_may_open(world, live_server, desktop_page, role):
    page = desktop_page
    login(page, live_server.url, _with_password(getattr(world, role)))
    nav = page.locator("nav.mainnav")
    entries = [t.strip() for t in nav.locator("a").all_inner_texts()]
    labels = [e.split("\n")[0].strip() for e in entries]
    for label in MENU[role]:
        assert any(x.startswith(label) for x in labels), (role, label, labels)
    for label in HIDDEN[role]:
        assert not any(x.startswith(label) for x in labels), (role, label, labels)
    hrefs = nav.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    for href in hrefs:
        response = page.goto(f"{live_server.url}{href}")
        assert response.status == 200, (role, href, response.status)


def test_no_main_page_scrolls_sideways_on_a_390px_phone(world, live_server, phone_page):
    admin = _with_password(world.admin)
    conversation = factories.make_conversation(world.channel_a)
    factories.make_message(conversation, "uma-palavra-muito-comprida-" * 8)
    Turn.objects.create(
        organization=world.org_a,
        conversation=conversation,
        trigger_kind="inbound_message",
        trigger_key="k-390",
        status="done",
        outcome="replied",
        agent_version=world.agent_a.published_version,
        trace={
            "agent_id": str(world.agent_a.pk),
            "route": {
                "source": "router",
                "outcome": "classified",
                "intent": "x" * 60,
                "confidence": 0.9,
                "stage": "local",
                "agent_id": str(world.agent_a.pk),
            },
            "loop": {"steps": 1, "stop": "end_turn", "calls": [], "error": ""},
            "runtime": {"handled": True, "intent": "segunda_via", "decision": "y" * 80},
        },
    )
    router = Router.objects.create(
        organization=world.org_a,
        name="Atendimento",
        channel=world.channel_a,
        fallback_agent=world.agent_a,
    )
    _measured_router(router, world)
    page = phone_page
    login(page, live_server.url, admin)
    pages = [
        "/",
        f"/conversas/{conversation.pk}/",
        "/transbordos/",
        "/casos/",
        "/agentes/",
        f"/agentes/{world.agent_a.pk}/",
        "/conhecimento/",
        "/simulador/",
        "/canais/",
        "/roteadores/",
        f"/roteadores/{router.pk}/",
        f"/roteadores/{router.pk}/qualidade/",
        f"/roteadores/{router.pk}/decisoes/",
        "/accounts/equipe/",
        "/accounts/senha/",
        "/nao-existe/",
    ]
    wide = {}
    for path in pages:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("load")
        if path.endswith("/qualidade/"):
            assert page.locator("#confusion").count() == 1  # the figures really render
        width = _scroll_width(page)
        if width > 390:
            wide[path] = width
    assert not wide, wide


@pytest.mark.parametrize(
    "viewport", [{"width": 390, "height": 844}, {"width": 1280, "height": 900}]
)
def test_the_developer_trace_never_wraps_one_letter_per_line(world, live_server, browser, viewport):
    conversation = factories.make_conversation(world.channel_a)
    Turn.objects.create(
        organization=world.org_a,
        conversation=conversation,
        trigger_kind="inbound_message",
        trigger_key="k-trace",
        status="done",
        outcome="replied",
        agent_version=world.agent_a.published_version,
        trace={
            "agent_id": str(world.agent_a.pk),
            "loop": {"steps": 2, "stop": "end_turn", "calls": [], "error": ""},
            "runtime": {"handled": True, "intent": "segunda_via_do_boleto", "decision": "answer"},
        },
    )
    context = browser.new_context(viewport=viewport, locale="pt-BR")
    page = context.new_page()
    try:
        login(page, live_server.url, _with_password(world.viewer))
        page.goto(f"{live_server.url}/conversas/{conversation.pk}/")
        toggle = page.locator("details.dev-trace > summary").first
        assert not page.locator("details.dev-trace").first.evaluate("d => d.open")  # collapsed
        toggle.click()
        widths = page.locator(".trace dd").evaluate_all(
            "cells => cells.filter(c => c.textContent.trim())"
            ".map(c => c.getBoundingClientRect().width)"
        )
        assert widths and min(widths) >= 120, widths
    finally:
        close_context(context)
