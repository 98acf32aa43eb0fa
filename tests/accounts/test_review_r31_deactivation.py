"""Deactivating an account (staff, in the Django admin: the product has no page for it)
is the member leaving every organization they answer for: their open cases and the
conversations assigned to them go back to the team, audited — nothing waits on someone who
can no longer log in — and the last admin who can still log in is never deactivated."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.models import AuditLog
from tests.accounts_pages.test_team import _assigned_to_the_agent
from tests.architecture.test_admin_policy import form_data


@pytest.fixture
def root(db: Any) -> Any:
    return get_user_model().objects.create_superuser("root", "root@example.com", "senha-root-1")


def _deactivate(root: Any, user: Any) -> Any:
    client = Client()
    client.force_login(root)
    url = f"/admin/auth/user/{user.pk}/change/"
    page = client.get(url)
    data = form_data(page, is_active=False)
    joined = user.date_joined
    data.update(
        date_joined_0=joined.strftime("%Y-%m-%d"), date_joined_1=joined.strftime("%H:%M:%S")
    )
    return client.post(url, data)


def test_a_deactivated_member_gives_their_cases_and_conversations_back_to_the_team(world, root):
    case, conversation, _membership = _assigned_to_the_agent(world)

    response = _deactivate(root, world.agent)

    assert response.status_code == 302
    world.agent.refresh_from_db()
    assert world.agent.is_active is False
    case.refresh_from_db()
    conversation.refresh_from_db()
    assert case.assigned_to_id is None and conversation.assigned_to_id is None
    audit = AuditLog.objects.get(action="membership.admin_deactivate")
    assert audit.organization_id == world.org_a.pk and audit.actor_id == root.pk
    assert audit.diff["unassigned"] == 2


def test_the_last_admin_who_can_log_in_is_not_deactivated(world, root):
    response = _deactivate(root, world.admin)

    assert response.status_code == 200
    errors = " ".join(response.context["adminform"].form.errors.get("is_active", []))
    assert "último administrador" in errors
    world.admin.refresh_from_db()
    assert world.admin.is_active is True
