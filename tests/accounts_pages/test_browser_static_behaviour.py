"""The pages' behaviour with no inline handler (Debian's Chromium, tests/e2e harness).

The CSP allows scripts from this origin only ('self', no 'unsafe-hashes'): choosing another
organization in the switcher takes the member there at once, and deleting a knowledge document
asks first — both from static/js/app.js, not from inline handlers the browser would block.
"""

from __future__ import annotations

import pytest

from accounts.models import Membership
from conversation.models import KnowledgeDocument
from tests import factories
from tests.browser import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_choosing_another_organization_switches_without_a_button(world, live_server, desktop_page):
    manager = world.manager
    manager.set_password(factories.PASSWORD)
    manager.save(update_fields=["password"])
    Membership.objects.create(organization=world.org_b, user=manager, role="viewer")
    page = desktop_page
    login(page, live_server.url, manager)
    page.goto(f"{live_server.url}/conhecimento/")
    assert page.locator("#org-select").input_value() == str(world.org_a.pk)

    with page.expect_navigation():
        page.select_option("#org-select", str(world.org_b.pk))
    page.wait_for_load_state("load")
    assert page.locator("#org-select").input_value() == str(world.org_b.pk)


def test_deleting_a_document_asks_first_and_a_no_keeps_it(world, live_server, desktop_page):
    manager = world.manager
    manager.set_password(factories.PASSWORD)
    manager.save(update_fields=["password"])
    document = factories.make_document(world.org_a, "Trocas", "Trocas em até 7 dias.")
    page = desktop_page
    login(page, live_server.url, manager)
    page.goto(f"{live_server.url}/conhecimento/{document.pk}/")

    questions: list[str] = []

    def dismiss(dialog) -> None:
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    page.click("form.danger-zone button[type=submit]")
    page.wait_for_timeout(300)
    assert questions and "Excluir este documento" in questions[0]
    assert KnowledgeDocument.objects.filter(pk=document.pk).exists()

    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.click("form.danger-zone button[type=submit]")
    page.wait_for_load_state("load")
    assert not KnowledgeDocument.objects.filter(pk=document.pk).exists()
