"""Routers in the browser (intent-router Task 7): create a router, add two intents for two
agents without reloading, save, then test a phrase of each and see the right agent."""

from __future__ import annotations

import os
from typing import Any

import pytest

from routers.models import Router, RouterDecision
from tests import factories
from tests.browser import login

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
    # No label is pre-set after a test (issue 13): the admin picks it.
    assert page.input_value("#label-intent") == ""
    page.select_option("#label-intent", "suporte")
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


def test_the_quality_page_never_scrolls_sideways_on_a_phone(
    world, live_server, phone_page, settings
):
    """390 px: a wide confusion table scrolls inside its box, long phrases wrap; the page
    itself never scrolls sideways (issue 13)."""
    from routers.models import LabelledPhrase, QualityRun, RouterSuggestion
    from tests.routers.factories import FINANCEIRO, SUPORTE, VENDAS, make_router

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    world.admin.set_password(factories.PASSWORD)
    world.admin.save(update_fields=["password"])
    agents = [factories.make_agent(world.org_a, n) for n in ("Vendas", "Suporte", "Financeiro")]
    router = make_router(
        world.channel_a, list(zip(agents, (VENDAS, SUPORTE, FINANCEIRO), strict=True))
    )
    long_phrase = "preciso-da-segunda-via-do-boleto-urgente-" * 4
    for text, intent in [(long_phrase, "financeiro"), ("quanto custa?", "vendas")]:
        LabelledPhrase.objects.create(
            organization=world.org_a, router=router, text=text, intent_name=intent
        )
    RouterSuggestion.objects.create(
        organization=world.org_a, router=router, text=long_phrase, intent_name="financeiro"
    )
    labels = ["vendas", "suporte", "financeiro", "intencao_com_nome_comprido", "none"]
    QualityRun.objects.create(
        organization=world.org_a,
        router=router,
        status="done",
        total=2,
        processed=2,
        results={
            "has_llm": False,
            "total": 2,
            "correct": 1,
            "accuracy": 0.5,
            "llm_share": 0,
            "confusion": {
                "labels": labels,
                "rows": [
                    {
                        "expected": e,
                        "cells": [{"label": p, "count": 1, "hit": p == e} for p in labels],
                    }
                    for e in labels
                ],
            },
            "errors": [
                {
                    "text": long_phrase,
                    "expected": "financeiro",
                    "predicted": "none",
                    "stage": "local",
                    "confidence": 0.4,
                }
            ],
            "error_count": 1,
            "suggestion": {"changed": False, "explanation": "Nada a ajustar."},
        },
    )
    page = phone_page
    login(page, live_server.url, world.admin)
    for path in (f"/roteadores/{router.pk}/qualidade/", f"/roteadores/{router.pk}/"):
        page.goto(f"{live_server.url}{path}")
        page.locator("h1").wait_for()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (path, width)
        if SCREENSHOTS:
            name = "router-quality-390.png" if "qualidade" in path else "router-edit-390.png"
            page.screenshot(path=os.path.join(SCREENSHOTS, name), full_page=True)
