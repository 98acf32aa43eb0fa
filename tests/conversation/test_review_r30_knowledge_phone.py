"""Review r30, knowledge base on a 390 px phone (Debian's Chromium, tests/e2e harness).

DESIGN.md §7: server-rendered pages a back-office person uses from a phone; the brief asks
for no horizontal scroll and usable forms — also with a long unbroken title, a long body and
the "changed by someone else" warning of a refused save.
"""

from __future__ import annotations

from typing import Any

import pytest

from conversation import services
from tests import factories
from tests.browser import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

LONG_WORD = "politica-de-trocas-e-devolucoes-" * 6


def _width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def test_knowledge_pages_fit_a_390px_phone_phone(world, live_server, phone_page):
    manager = world.manager
    manager.set_password(factories.PASSWORD)
    manager.save(update_fields=["password"])
    document = factories.make_document(world.org_a, LONG_WORD[:200], (LONG_WORD + "\n") * 40)
    page = phone_page
    login(page, live_server.url, manager)

    wide = {}
    for path in ["/conhecimento/", "/conhecimento/novo/", f"/conhecimento/{document.pk}/"]:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("load")
        if _width(page) > 390:
            wide[path] = _width(page)

    # Someone else saves while this page is open; the refused save shows both texts.
    services.knowledge_document_save(
        organization=world.org_a,
        actor=world.admin,
        document=document,
        title=document.title,
        body=LONG_WORD * 3,
    )
    page.fill("#id_body", "Meu texto novo " + LONG_WORD)
    page.click("#document-form button[type=submit]")
    page.wait_for_load_state("load")
    assert "alterado por outra pessoa" in page.content()
    page.click("details.stale-version summary")
    if _width(page) > 390:
        wide["conflict"] = _width(page)
    assert page.input_value("#id_body").startswith("Meu texto novo")
    assert page.locator("#document-form button[type=submit]").is_visible()
    assert not wide, wide
