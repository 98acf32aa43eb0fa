"""DRF side of tenancy: the membership comes from the session, the role gates the method."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from accounts.models import Membership


def api_membership(request: Request) -> Membership:
    membership = getattr(request._request, "membership", None)
    assert membership is not None  # guaranteed by RolePermission
    return membership


class RolePermission(BasePermission):
    """``read_role`` for safe methods, ``write_role`` otherwise (set on the view)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        membership = getattr(request._request, "membership", None)
        if membership is None:
            return False
        if request.method in SAFE_METHODS:
            role = getattr(view, "read_role", "viewer")
        else:
            role = getattr(view, "write_role", "admin")
        return bool(membership.has_role(role))
