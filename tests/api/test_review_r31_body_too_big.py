"""A JSON body larger than Django holds in memory (``DATA_UPLOAD_MAX_MEMORY_SIZE``) but
under the request cap answers the API's envelope — 413 ``payload_too_large``, as the cap's
own refusal does (config/settings/request_limits.py) — never Django's HTML 400 page
(DESIGN §8: one envelope for every API error)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests import factories
from tests.cases.conftest import enable_cases, open_case
from tests.routers.factories import SUPORTE, make_router

MEMORY_CAP = 4096


@pytest.fixture(autouse=True)
def _small_memory_cap(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = MEMORY_CAP


def _assert_payload_too_large(response: Any) -> None:
    assert response.status_code == 413, response.content[:120]
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == "payload_too_large" and error["message"]


def test_a_router_body_over_the_memory_cap_is_the_413_envelope(world):
    router = make_router(world.channel_a, [(world.agent_a, SUPORTE)])
    phrases = [{"text": f"frase {i}", "intent_name": "suporte"} for i in range(400)]
    body = json.dumps({"phrases": phrases})
    assert len(body) > MEMORY_CAP

    response = world.client_for(world.admin).put(
        f"/api/v1/ai/routers/{router.pk}/labelled-phrases",
        data=body,
        content_type="application/json",
    )

    _assert_payload_too_large(response)
    assert not router.labelled_phrases.exists()


def test_a_case_answer_over_the_memory_cap_is_the_413_envelope(world):
    enable_cases(world.agent_a)
    case = open_case(factories.make_conversation(world.channel_a, phone="5511988887777"))

    response = world.client_for(world.agent).post(
        f"/api/v1/ai/cases/{case.pk}/reply",
        data=json.dumps({"action": "resolved", "text": "x" * (MEMORY_CAP * 2)}),
        content_type="application/json",
    )

    _assert_payload_too_large(response)
    case.refresh_from_db()
    assert case.status == "awaiting_human"
