"""``PUT .../labelled-phrases``: a phrase labelled with an intent the router does not have
is a field error of that phrase, in ``fields`` like every ``validation_error`` of the API,
and listed together with the body's other errors (an unknown field), so one answer says
everything to fix (accounts.api_views.StrictInput). Before, it was a ``validation_error``
with no ``fields`` at all, reported only once everything else was right."""

from __future__ import annotations

import json
from typing import Any

import pytest

from routers.models import LabelledPhrase
from tests.routers.factories import SUPORTE, VENDAS, make_router


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def router(world: Any) -> Any:
    return make_router(world.channel_a, [(world.agent_a, SUPORTE), (world.agent_a, VENDAS)])


def _put(world: Any, router: Any, phrases: list[dict[str, Any]]) -> Any:
    return world.client_for(world.admin).put(
        f"/api/v1/ai/routers/{router.pk}/labelled-phrases",
        data=json.dumps({"phrases": phrases}),
        content_type="application/json",
    )


def test_an_unknown_intent_is_a_field_error_of_its_phrase(world, router):
    response = _put(
        world,
        router,
        [
            {"text": "quero comprar", "intent_name": "vendas"},
            {"text": "segunda via do boleto", "intent_name": "financeiro"},
        ],
    )

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["fields"] == {
        "phrases": {"1": {"intent_name": ["A intenção «financeiro» não existe neste roteador."]}}
    }
    assert not LabelledPhrase.objects.filter(router=router).exists()


def test_an_unknown_field_and_unknown_intents_are_listed_together(world, router):
    response = _put(
        world,
        router,
        [
            {"text": "oi", "intent_name": "zzz", "label": "x"},
            {"text": "quero comprar", "intent_name": "vendas"},
            {"text": "boleto", "intent_name": "financeiro"},
        ],
    )

    assert response.status_code == 422
    fields = response.json()["error"]["fields"]["phrases"]
    assert sorted(fields) == ["0", "2"]
    assert sorted(fields["0"]) == ["intent_name", "label"]
    assert list(fields["2"]) == ["intent_name"]


def test_the_router_intents_and_none_are_accepted(world, router):
    response = _put(
        world,
        router,
        [
            {"text": "quero comprar", "intent_name": "vendas"},
            {"text": "o app travou", "intent_name": "suporte"},
            {"text": "bom dia", "intent_name": "none"},
        ],
    )

    assert response.status_code == 200, response.json()
    assert response.json()["data"]["count"] == 3
