"""An unhandled error under /api/ answers the API's one error envelope (a client parsing
``error.code`` never gets Django's HTML page, and nothing of the error is told); pages keep
the product's own 500 page."""

from __future__ import annotations

import pytest
from django.test import Client

from conversation import selectors
from tests import factories

pytestmark = pytest.mark.django_db


def _boom(*args, **kwargs):
    raise RuntimeError("secret detail: 5511999990000")


def test_an_unhandled_api_error_is_a_json_500_without_its_detail(world, monkeypatch):
    monkeypatch.setattr("cases.api.selectors.case_list", _boom)
    client = world.client_for(world.admin)
    client.raise_request_exception = False

    response = client.get("/api/v1/ai/cases")

    assert response.status_code == 500
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"]["code"] == "server_error"
    assert "5511999990000" not in response.content.decode()


def test_an_unhandled_page_error_keeps_the_html_500_page(world, monkeypatch):
    monkeypatch.setattr(selectors, "conversation_detail", _boom)
    conversation = factories.make_conversation(world.channel_a)
    client: Client = world.client_for(world.admin)
    client.raise_request_exception = False

    response = client.get(f"/conversas/{conversation.pk}/")

    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")
