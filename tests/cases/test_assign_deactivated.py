"""A deactivated account answers nothing: it is not offered as a case's responsible, and the
service and the API refuse it (its open cases went back to the team when it was
deactivated)."""

from __future__ import annotations

import json

import pytest

from cases import services
from cases.forms import CaseAssignForm
from cases.services import InvalidCaseInput
from tests.cases.conftest import open_case


def _deactivate(user) -> None:
    user.is_active = False
    user.save(update_fields=["is_active"])


def test_a_deactivated_member_is_not_offered_as_responsible(conversation, cases_world):
    _deactivate(cases_world.agent)
    form = CaseAssignForm(organization_id=conversation.organization_id)
    offered = set(form.fields["assignee"].queryset.values_list("pk", flat=True))
    assert cases_world.agent.pk not in offered
    assert cases_world.admin.pk in offered


def test_the_service_refuses_a_deactivated_member(conversation, cases_world):
    case = open_case(conversation)
    _deactivate(cases_world.agent)
    with pytest.raises(InvalidCaseInput):
        services.case_assign(case=case, actor=cases_world.admin, assignee=cases_world.agent)
    case.refresh_from_db()
    assert case.assigned_to_id is None


def test_the_api_refuses_a_deactivated_member_as_a_field_error(conversation, cases_world):
    case = open_case(conversation)
    _deactivate(cases_world.agent)
    response = cases_world.client_for(cases_world.admin).post(
        f"/api/v1/ai/cases/{case.pk}/assign",
        data=json.dumps({"assignee_id": cases_world.agent.pk}),
        content_type="application/json",
    )
    assert response.status_code == 422
    assert "assignee_id" in response.json()["error"]["fields"]
