"""The cases loop in a browser (human-cases §11.3), with the offline model: a case opened from
the simulator appears in the cases inbox → "Preciso de info" → the AI asks → the customer
answers in the simulator → provide_case_update → "Concluí" → the AI tells the customer →
the case is resolved. Set E2E_SCREENSHOTS=<dir> for the visual proof of each step."""

from __future__ import annotations

import os
from typing import Any

import pytest

from cases.models import Case, CaseStatus
from tests import factories
from tests.browser import login
from tests.cases.conftest import enable_cases, open_case

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = os.environ.get("E2E_SCREENSHOTS", "")


def _shot(page: Any, name: str) -> None:
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"cases-{name}.png"), full_page=True)


def _say(page: Any, text: str) -> None:
    page.fill("#id_texto", text)
    page.press("#id_texto", "Enter")


def _agentlogin(world: Any, settings: Any, page: Any, base_url: str) -> None:
    settings.TURN_BURST_WINDOW_S = 0
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    world.agent.set_password(factories.PASSWORD)
    world.agent.save(update_fields=["password"])
    login(page, base_url, world.agent)


def test_case_loop_from_simulator_to_resolved(world, live_server, phone_page, settings):
    enable_cases(world.agent_a)
    page, base = phone_page, live_server.url
    _agentlogin(world, settings, page, base)
    simulator = f"{base}/simulador/?canal={world.channel_a.pk}"

    # 1. The customer asks for something only a person can do: the AI opens a case.
    page.goto(simulator)
    _say(page, "Quero o reembolso do pedido 123")
    page.locator(".bubble-them", has_text="Registrei o seu pedido de reembolso").wait_for()
    _shot(page, "1-simulator-opened")
    case = Case.objects.get()
    assert case.status == CaseStatus.AWAITING_HUMAN

    # 2. It appears in the cases inbox, waiting for the team.
    page.goto(f"{base}/casos/")
    row = page.locator(f"#case-row-{case.pk}")
    row.wait_for()
    assert "Esperando você" in row.inner_text()
    _shot(page, "2-inbox")

    # 3. "Preciso de info do cliente".
    row.click()
    page.wait_for_url(f"**/casos/{case.pk}/**")
    assert page.locator(".cases-list-pane").is_hidden()  # narrow screen: one step at a time
    page.fill("#id_text", "o CPF do titular")
    page.get_by_role("button", name="Preciso de info do cliente").click()
    page.locator("#case-state", has_text="esperando cliente").wait_for()
    _shot(page, "3-asked")

    # 4. The AI asks the customer, who answers in the simulator.
    page.goto(simulator)
    page.locator(
        ".bubble-them", has_text="preciso de uma informação sua: o CPF do titular"
    ).wait_for()
    _say(page, "123.456.789-00")
    page.locator(".bubble-them", has_text="Já passei essa informação").wait_for()
    _shot(page, "4-customer-answered")
    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_HUMAN
    assert case.events.get(kind="lead_provided").body == "123.456.789-00"

    # 5. Back with the team: "Concluí".
    page.goto(f"{base}/casos/{case.pk}/")
    page.locator(".case-event-lead_provided", has_text="123.456.789-00").wait_for()
    page.fill("#id_text", "Reembolso aprovado; cai em até 5 dias úteis.")
    page.get_by_role("button", name="Concluí ✓").click()
    page.locator("#case-state", has_text="resolvido").wait_for()
    _shot(page, "5-resolved")

    # 6. The AI tells the customer.
    page.goto(simulator)
    page.locator(".bubble-them", has_text="Reembolso aprovado; cai em até 5 dias úteis.").wait_for()
    _shot(page, "6-customer-told")
    case.refresh_from_db()
    assert case.status == CaseStatus.RESOLVED


def test_back_to_the_cases_keeps_the_filter_and_returns_the_focus(
    world, live_server, phone_page, settings
):
    page, base = phone_page, live_server.url
    _agentlogin(world, settings, page, base)
    case = open_case(factories.make_conversation(world.channel_a))

    page.goto(f"{base}/casos/?estado=esperando-voce")
    page.locator(f"#case-row-{case.pk}").click()
    page.wait_for_url(f"**/casos/{case.pk}/?estado=esperando-voce")
    assert page.locator(".case-detail-pane").is_visible()
    page.get_by_role("link", name="Voltar aos casos").click()

    page.wait_for_url("**/casos/?estado=esperando-voce*")
    assert page.evaluate("document.activeElement.id") == f"case-row-{case.pk}"
    assert (
        page.locator(".case-tabs:not(.case-assignee-tabs) .case-tab[aria-current=page]")
        .inner_text()
        .startswith("Esperando você")
    )
    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_HUMAN and case.events.count() == 1


def test_desktop_shows_list_and_detail_side_by_side(world, live_server, desktop_page, settings):
    page, base = desktop_page, live_server.url
    _agentlogin(world, settings, page, base)
    case = open_case(factories.make_conversation(world.channel_a))

    page.goto(f"{base}/casos/{case.pk}/")

    list_box = page.locator(".cases-list-pane").bounding_box()
    detail_box = page.locator(".case-detail-pane").bounding_box()
    assert list_box and detail_box and list_box["x"] + list_box["width"] <= detail_box["x"]
    assert page.locator(".case-back").is_hidden()
    _shot(page, "desktop")
