from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest

from accounts.models import Membership


def workspace(request: HttpRequest) -> dict[str, Any]:
    membership = getattr(request, "membership", None)
    memberships: list[Membership] = []
    if membership is not None:
        memberships = list(
            Membership.objects.filter(user_id=membership.user_id).select_related("organization")
        )
    return {
        "membership": membership,
        "memberships": memberships,
        "model_offline": not settings.ANTHROPIC_API_KEY,
    }
