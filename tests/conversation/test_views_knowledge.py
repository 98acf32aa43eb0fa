"""Knowledge base pages: managers write through the services, everyone else reads."""

from __future__ import annotations

import pytest

from accounts.models import AuditLog
from conversation.models import KnowledgeDocument
from tests import factories


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The shared world creates six users: PBKDF2 would cost seconds per test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_list_shows_own_org_documents(world):
    mine = factories.make_document(world.org_a, "Prazos de entrega", "3 dias úteis.")
    factories.make_document(world.org_b, "Segredo da B", "...")
    html = world.client_for(world.viewer).get("/conhecimento/").content.decode()
    assert f"/conhecimento/{mine.pk}/" in html and "Prazos de entrega" in html
    assert "Segredo da B" not in html
    assert "Novo documento" not in html  # viewer


def test_list_query_count_is_constant(world, django_assert_num_queries):
    client = world.client_for(world.manager)
    factories.make_document(world.org_a, "Um", "corpo")
    client.get("/conhecimento/")
    # session · user · membership · nav badge · documents · memberships (context processor)
    with django_assert_num_queries(6):
        client.get("/conhecimento/")
    for i in range(10):
        factories.make_document(world.org_a, f"Doc {i}", "corpo")
    with django_assert_num_queries(6):
        response = client.get("/conhecimento/")
    assert response.content.decode().count('class="row"') == 11


def test_manager_creates_a_document(world):
    client = world.client_for(world.manager)
    assert client.get("/conhecimento/novo/").status_code == 200

    response = client.post(
        "/conhecimento/novo/",
        {"title": "Trocas", "body": "Trocas em até 7 dias.", "is_active": "on"},
    )

    assert response.status_code == 302
    document = KnowledgeDocument.objects.get(organization=world.org_a, title="Trocas")
    assert document.body == "Trocas em até 7 dias." and document.is_active
    assert AuditLog.objects.filter(action="knowledge.create", actor=world.manager).exists()


def test_manager_edits_a_document(world):
    document = factories.make_document(world.org_a, "Trocas", "7 dias.")
    client = world.client_for(world.manager)
    assert "7 dias." in client.get(f"/conhecimento/{document.pk}/").content.decode()

    response = client.post(
        f"/conhecimento/{document.pk}/", {"title": "Trocas e devoluções", "body": "30 dias."}
    )

    assert response.status_code == 302
    document.refresh_from_db()
    assert (document.title, document.body, document.is_active) == (
        "Trocas e devoluções",
        "30 dias.",
        False,
    )


def test_invalid_document_is_not_saved(world):
    response = world.client_for(world.manager).post(
        "/conhecimento/novo/", {"title": "", "body": ""}
    )
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert not KnowledgeDocument.objects.exists()


def test_manager_deletes_a_document(world):
    document = factories.make_document(world.org_a, "Velho", "...")
    response = world.client_for(world.manager).post(f"/conhecimento/{document.pk}/excluir/")
    assert response.status_code == 302
    assert not KnowledgeDocument.objects.filter(pk=document.pk).exists()
    assert AuditLog.objects.filter(action="knowledge.delete").exists()


def test_viewer_reads_but_cannot_write(world):
    document = factories.make_document(world.org_a, "Trocas", "7 dias.")
    client = world.client_for(world.viewer)

    page = client.get(f"/conhecimento/{document.pk}/").content.decode()
    assert "7 dias." in page and "disabled" in page and "Excluir documento" not in page

    assert (
        client.post(f"/conhecimento/{document.pk}/", {"title": "X", "body": "Y"}).status_code == 403
    )
    assert client.post(f"/conhecimento/{document.pk}/excluir/").status_code == 403
    assert client.post("/conhecimento/novo/", {"title": "X", "body": "Y"}).status_code == 403
    document.refresh_from_db()
    assert document.title == "Trocas"
    assert KnowledgeDocument.objects.count() == 1


def test_agent_role_cannot_write_either(world):
    response = world.client_for(world.agent).post(
        "/conhecimento/novo/", {"title": "X", "body": "Y"}
    )
    assert response.status_code == 403
    assert not KnowledgeDocument.objects.exists()


def test_documents_of_another_org_are_404(world):
    theirs = factories.make_document(world.org_b, "Da B", "corpo")
    client = world.client_for(world.manager)
    assert client.get(f"/conhecimento/{theirs.pk}/").status_code == 404
    assert (
        client.post(f"/conhecimento/{theirs.pk}/", {"title": "X", "body": "Y"}).status_code == 404
    )
    assert client.post(f"/conhecimento/{theirs.pk}/excluir/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.title == "Da B"
