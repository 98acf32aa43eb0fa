from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest

from accounts.models import Membership, Role


def workspace(request: HttpRequest) -> dict[str, Any]:
    membership = getattr(request, "membership", None)
    memberships: list[Membership] = []
    if membership is not None:
        memberships = list(
            Membership.objects.filter(user_id=membership.user_id).select_related("organization")
        )
    # Menu entries by role: ``{% if can.manager %}`` — the same minimal roles as the views
    # (tests/security/routes.py), so no link leads to a 403.
    can = {role.value: membership is not None and membership.has_role(role) for role in Role}
    return {
        "can": can,
        "membership": membership,
        "memberships": memberships,
        "model_offline": not settings.ANTHROPIC_API_KEY,
    }
