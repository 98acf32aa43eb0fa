"""Routers in the browser (intent-router Task 7): create a router, add two intents for two
agents without reloading, save, then test a phrase of each and see the right agent."""

from __future__ import annotations

import os
from typing import Any

import pytest

from routers.models import Router, RouterDecision
from tests import factories
from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = os.environ.get("E2E_SCREENSHOTS", "")  # a directory, e.g. /tmp; off by default


def _fill_intent(page: Any, index: int, agent: str, name: str, description: str, examples: str):
    page.fill(f"#id_members-{index}-intent_name", name)
    page.select_option(f"#id_members-{index}-agent", label=agent)
    page.fill(f"#id_members-{index}-intent_description", description)
    page.fill(f"#id_members-{index}-examples", examples)


def _test_phrase(page: Any, text: str) -> None:
    page.fill("#test-panel textarea[name=message]", text)
    page.click("#test-submit")
    page.locator("#test-result").wait_for()


def test_admin_creates_a_router_and_tests_a_phrase_of_each_intent(
    world, live_server, desktop_page, settings
):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    world.admin.set_password(factories.PASSWORD)
    world.admin.save(update_fields=["password"])
    factories.make_agent(world.org_a, "Vendas")
    page = desktop_page
    login(page, live_server.url, world.admin)

    page.click("nav >> text=Roteadores")
    page.get_by_text("Um roteador entende o que o cliente quer").wait_for()
    page.click("text=Criar o primeiro roteador")

    page.fill("#id_name", "Atendimento")
    page.select_option("#id_channel", label=world.channel_a.name)
    page.evaluate("window.__sameDocument = true")
    _fill_intent(
        page,
        0,
        "Vendas",
        "vendas",
        "O cliente quer comprar ou saber preço.",
        "quanto custa?\nqual o preço do plano\nquero comprar",
    )
    page.click("#intent-add")
    _fill_intent(
        page,
        1,
        "Suporte",
        "suporte",
        "O cliente tem um problema técnico: o sistema não abre ou dá erro.",
        "meu sistema não abre\nestá dando erro\nnão consigo entrar",
    )
    assert page.evaluate("window.__sameDocument") is True  # the row came without a reload
    assert page.input_value("#id_members-TOTAL_FORMS") == "2"
    page.click("#router-save")

    router = None
    page.get_by_text("Roteador criado").wait_for()
    router = Router.objects.get(organization=world.org_a)
    assert page.url.endswith(f"/roteadores/{router.pk}/")
    assert list(router.members.order_by("position").values_list("intent_name", "agent__name")) == [
        ("vendas", "Vendas"),
        ("suporte", "Suporte"),
    ]

    page.evaluate("window.__sameDocument = true")
    _test_phrase(page, "quanto custa o plano anual?")
    assert page.inner_text("#test-intent") == "vendas"
    assert page.inner_text("#test-agent").startswith("Vendas")
    assert "Classificador local" in page.inner_text("#test-stage")

    _test_phrase(page, "meu sistema não abre de jeito nenhum")
    page.locator("#test-intent", has_text="suporte").wait_for()
    assert page.inner_text("#test-agent").startswith("Suporte")
    assert page.evaluate("window.__sameDocument") is True  # htmx swapped only the panel
    assert not RouterDecision.objects.exists()  # a test is not a decision

    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, "router-edit-1280.png"), full_page=True)

    # "This one should be X": the tested phrase joins the labelled set, then one click
    # measures the whole set.
    page.click("#test-result button[type=submit]")
    page.locator("#label-status", has_text="Guardada").wait_for()
    assert list(router.labelled_phrases.values_list("text", "intent_name")) == [
        ("meu sistema não abre de jeito nenhum", "suporte")
    ]
    page.click("text=Ver frases rotuladas")
    page.fill("#id_lines", "quanto custa?;vendas\nbom dia;none")
    page.click("#paste-form button[type=submit]")
    page.get_by_text("2 frases rotuladas guardadas").wait_for()
    page.click("#quality-run-start")
    page.locator("#quality-accuracy").wait_for()
    assert page.inner_text("#quality-accuracy").startswith("100%")
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, "router-quality-1280.png"), full_page=True)
        page.goto(f"{live_server.url}/roteadores/")
        page.screenshot(path=os.path.join(SCREENSHOTS, "routers-1280.png"), full_page=True)
