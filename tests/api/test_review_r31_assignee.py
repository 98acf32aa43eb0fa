"""``POST /api/v1/ai/cases/<id>/assign``: an assignee who cannot answer the case (another
organization's user, a viewer, no user at all) is a field error of ``assignee_id`` in the
``validation_error`` envelope like any bad value, listed together with the body's other
errors — not a second, ``fields``-less ``invalid_input`` answer after them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from accounts.models import AuditLog
from cases.models import Case
from tests import factories
from tests.cases.conftest import enable_cases, open_case

MESSAGE = "Escolha um atendente desta organização."


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def case(world: Any) -> Case:
    enable_cases(world.agent_a)
    return open_case(factories.make_conversation(world.channel_a, phone="5511988887777"))


def _assign(world: Any, case: Case, body: dict[str, Any]) -> Any:
    return world.client_for(world.agent).post(
        f"/api/v1/ai/cases/{case.pk}/assign", data=json.dumps(body), content_type="application/json"
    )


@pytest.mark.parametrize("who", ["outsider", "viewer", "nobody"])
def test_an_assignee_who_cannot_answer_is_a_field_error(world, case, who):
    user_id = 987654 if who == "nobody" else getattr(world, who).pk

    response = _assign(world, case, {"assignee_id": user_id})

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["fields"] == {"assignee_id": [MESSAGE]}
    assert Case.objects.get(pk=case.pk).assigned_to_id is None
    assert not AuditLog.objects.filter(action="case.assign").exists()


def test_a_bad_assignee_and_an_unknown_field_are_listed_together(world, case):
    response = _assign(world, case, {"assignee_id": world.outsider.pk, "organization_id": 1})

    assert response.status_code == 422
    assert sorted(response.json()["error"]["fields"]) == ["assignee_id", "organization_id"]


def test_a_member_who_answers_cases_is_assigned(world, case):
    response = _assign(world, case, {"assignee_id": world.manager.pk})

    assert response.status_code == 200
    assert response.json()["data"]["assigned_to"]["id"] == world.manager.pk
    assert AuditLog.objects.filter(action="case.assign", actor=world.agent).count() == 1
