"""The organization's settings form (the Django admin: no page edits an organization):
invalid input is refused with a pt-BR message and the organization is left as it was — a
blank field is no server error, and settings that are not a JSON object (every reader does
``settings.get(...)``: the budget check of every turn among them) are never stored."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.architecture.test_admin_policy import form_data


@pytest.fixture
def staff(db: Any) -> Client:
    root = get_user_model().objects.create_superuser("root", "root@example.com", "senha-root-1")
    client = Client(raise_request_exception=False)
    client.force_login(root)
    return client


def _post(staff: Client, org: Any, **changes: Any) -> Any:
    url = f"/admin/accounts/organization/{org.pk}/change/"
    return staff.post(url, form_data(staff.get(url), **changes))


@pytest.mark.parametrize("value", ["", "null", "[1, 2]", '"x"', "3"])
def test_settings_that_are_not_a_json_object_are_refused_and_nothing_is_saved(staff, world, value):
    world.org_a.settings = {"budget": {"monthly_limit_usd": "10"}}
    world.org_a.save(update_fields=["settings"])

    response = _post(staff, world.org_a, settings=value, name="Nome novo")

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "objeto JSON" in " ".join(errors["settings"])
    world.org_a.refresh_from_db()
    assert world.org_a.settings == {"budget": {"monthly_limit_usd": "10"}}
    assert world.org_a.name != "Nome novo"


def test_a_retention_of_zero_days_is_refused_with_what_to_type(staff, world):
    response = _post(staff, world.org_a, message_retention_days="0")

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "vazio" in " ".join(errors["message_retention_days"]).lower()
    world.org_a.refresh_from_db()
    assert world.org_a.message_retention_days is None


def test_valid_settings_and_retention_are_saved(staff, world):
    response = _post(
        staff,
        world.org_a,
        settings='{"budget": {"monthly_limit_usd": "5"}}',
        message_retention_days="30",
    )

    assert response.status_code == 302
    world.org_a.refresh_from_db()
    assert world.org_a.settings == {"budget": {"monthly_limit_usd": "5"}}
    assert world.org_a.message_retention_days == 30
