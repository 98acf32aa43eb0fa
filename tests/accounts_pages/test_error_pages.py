"""pt-BR error pages in the product's layout (issue 16 item 10): 403, 404, 500 (rendered
with no request context at all) and the CSRF failure."""

from __future__ import annotations

import uuid

from django.template import Context
from django.template.loader import get_template
from django.test import Client


def test_a_missing_page_is_a_portuguese_404_in_the_layout(world):
    response = world.client_for(world.agent).get(f"/conversas/{uuid.uuid4()}/nao-existe/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Página não encontrada" in html and 'class="topbar"' in html
    assert "Not Found" not in html


def test_a_forbidden_page_is_a_portuguese_403(world):
    response = world.client_for(world.viewer).get("/accounts/equipe/")
    assert response.status_code == 403
    html = response.content.decode()
    assert "Você não tem permissão" in html and "mainnav" in html
    assert "Forbidden" not in html


def test_the_500_page_renders_without_any_request_context():
    html = get_template("500.html").template.render(Context())
    assert "Algo deu errado do nosso lado" in html
    assert "Retaguarda" in html


def test_a_csrf_failure_is_a_portuguese_page(world):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403
    html = response.content.decode()
    assert "O formulário expirou" in html and 'class="topbar"' in html
    assert "CSRF verification failed" not in html
