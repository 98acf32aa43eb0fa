"""Writes of the accounts app; ``audit_log_write`` is called by every service that mutates."""

from __future__ import annotations

from typing import Any

from accounts.logging import request_id_var
from accounts.models import AuditLog, Membership, Organization, Role

_SECRET_MARKERS = ("secret", "token", "password", "api_key", "apikey", "credential")
MASK = "••••••"


def mask_secrets(value: Any) -> Any:
    """Replace the value of every secret-looking key, recursively."""
    if isinstance(value, dict):
        return {
            k: (
                MASK if any(m in str(k).lower() for m in _SECRET_MARKERS) and v else mask_secrets(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [mask_secrets(v) for v in value]
    if hasattr(value, "_meta"):  # a model instance: its id
        return str(value.pk)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def audit_log_write(
    *,
    organization: Organization | Any,
    actor: Any,
    action: str,
    resource: Any,
    diff: dict[str, Any] | None = None,
    actor_kind: str = "user",
) -> AuditLog:
    user = actor if actor is not None and getattr(actor, "is_authenticated", False) else None
    return AuditLog.objects.create(
        organization_id=getattr(organization, "pk", organization),
        actor=user,
        actor_kind=actor_kind if user is None or actor_kind != "user" else "user",
        action=action,
        resource_type=type(resource)._meta.model_name if hasattr(resource, "_meta") else "",
        resource_id=str(getattr(resource, "pk", "")),
        diff=mask_secrets(diff or {}),
        request_id=request_id_var.get(),
    )


def membership_create(
    *, organization: Organization, user: Any, role: str, actor: Any = None
) -> Membership:
    membership = Membership.objects.create(organization=organization, user=user, role=Role(role))
    audit_log_write(
        organization=organization,
        actor=actor,
        action="membership.create",
        resource=membership,
        diff={"role": role, "user_id": user.pk},
        actor_kind="system" if actor is None else "user",
    )
    return membership
