"""The organization always keeps an admin who can act: an admin whose account is
deactivated (``is_active=False``: they can no longer log in) does not count as "another
admin left" when the last working admin is demoted or removed — else the organization is
left with nobody who can open the team page, invite or change roles."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from accounts import services
from accounts.models import Membership
from tests import factories


def _deactivated_admin(org: Any) -> Any:
    user = factories.make_user(org, "admin")
    user.is_active = False
    user.save(update_fields=["is_active"])
    return user


def test_the_last_active_admin_cannot_demote_themselves_beside_a_deactivated_admin(world):
    _deactivated_admin(world.org_a)
    own = Membership.objects.get(user=world.admin, organization=world.org_a)

    page = world.client_for(world.admin).post(
        f"/accounts/equipe/{own.pk}/papel/", {"role": "manager"}, follow=True
    )

    own.refresh_from_db()
    assert own.role == "admin"
    text = page.content.decode()
    assert "pelo menos um administrador com a conta ativa" in text
    assert "conta desativada" in text  # the team page says why that other admin does not count


def test_the_last_active_admin_cannot_be_removed_beside_a_deactivated_admin(world):
    _deactivated_admin(world.org_a)
    staff = get_user_model().objects.create_superuser("root", "root@example.com", "senha-root-1")
    own = Membership.objects.get(user=world.admin, organization=world.org_a)

    with pytest.raises(services.TeamError):
        services.membership_remove(membership=own, actor=staff)

    assert Membership.objects.filter(pk=own.pk, role="admin").exists()


def test_a_second_active_admin_still_lets_an_admin_step_down(world):
    _deactivated_admin(world.org_a)
    factories.make_user(world.org_a, "admin")
    own = Membership.objects.get(user=world.admin, organization=world.org_a)

    world.client_for(world.admin).post(f"/accounts/equipe/{own.pk}/papel/", {"role": "manager"})

    own.refresh_from_db()
    assert own.role == "manager"
