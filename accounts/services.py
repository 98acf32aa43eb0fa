"""Writes of the accounts app; ``audit_log_write`` is called by every service that mutates."""

from __future__ import annotations

import secrets
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import hooks, time_zones
from accounts.logging import request_id_var
from accounts.models import AuditLog, Invitation, Membership, Organization, Role
from accounts.selectors import invitation_token_hash, removal_refusal, role_change_refusal

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


def _audited_organization_id(resource: Any) -> Any:
    """The tenant of ``resource``'s audit row when the caller names none: an Organization
    audits under itself, any other tenant row under its own ``organization_id``."""
    organization_id: Any = (
        resource.pk
        if isinstance(resource, Organization)
        else getattr(resource, "organization_id", None)
    )
    if organization_id is None:
        raise TypeError(
            f"audit_log_write: {type(resource).__name__} has no organization; "
            "pass organization= explicitly"
        )
    return organization_id


def audit_log_write(
    *,
    organization: Organization | Any = None,
    actor: Any,
    action: str,
    resource: Any,
    diff: dict[str, Any] | None = None,
    actor_kind: str = "user",
) -> AuditLog:
    """Write one AuditLog row. ``organization`` (an Organization or its id) defaults to the
    resource's own; pass it only for a resource that has none (a global row, ``None``)."""
    if organization is None:
        organization = _audited_organization_id(resource)
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


def audited_delete(resource: Any, *, actor: Any, action: str, diff: dict[str, Any]) -> None:
    """Delete a tenant row and write its AuditLog row, in one transaction (the row's own
    organization names the tenant)."""
    with transaction.atomic():
        audit_log_write(actor=actor, action=action, resource=resource, diff=diff)
        resource.delete()


def membership_create(
    *, organization: Organization, user: Any, role: str, actor: Any = None
) -> Membership:
    membership = Membership.objects.create(organization=organization, user=user, role=Role(role))
    audit_log_write(
        actor=actor,
        action="membership.create",
        resource=membership,
        diff={"role": role, "user_id": user.pk},
        actor_kind="system" if actor is None else "user",
    )
    return membership


# --- the team: invitations, roles, removal (accounts/team views) ---------------------------


class TeamError(Exception):
    """A team change the rules refuse; the message is for the admin (pt-BR)."""


@transaction.atomic
def invitation_create(
    *, organization: Organization, actor: Any, email: str, role: str
) -> tuple[Invitation, str]:
    """A pending invitation and the secret of its one-time link (returned once, never
    stored: the caller e-mails it). A pending invitation for the same address is replaced."""
    email = email.strip().lower()
    if Membership.objects.filter(organization=organization, user__email__iexact=email).exists():
        raise TeamError(_("Essa pessoa já faz parte da equipe."))
    now = timezone.now()
    replaced = Invitation.objects.filter(
        organization=organization, email__iexact=email, accepted_at=None, revoked_at=None
    ).update(revoked_at=now)
    secret = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        organization=organization,
        email=email,
        role=Role(role),
        token_hash=invitation_token_hash(secret),
        invited_by=actor if getattr(actor, "is_authenticated", False) else None,
    )
    audit_log_write(
        actor=actor,
        action="invitation.create",
        resource=invitation,
        diff={"role": role, "replaced": replaced},
    )
    return invitation, secret


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, actor: Any) -> Invitation:
    if not invitation.is_pending:
        raise TeamError(_("Este convite já foi usado ou cancelado."))
    invitation.revoked_at = timezone.now()
    invitation.save(update_fields=["revoked_at"])
    audit_log_write(actor=actor, action="invitation.revoke", resource=invitation)
    return invitation


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user: Any) -> Membership:
    """Use the invitation once: ``user`` becomes a member with its role. Locks the row so
    two clicks of the link make one membership."""
    locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if not locked.is_usable():
        raise TeamError(_("Este convite expirou ou já foi usado."))
    membership, created = Membership.objects.get_or_create(
        organization_id=locked.organization_id, user=user, defaults={"role": locked.role}
    )
    locked.accepted_at = timezone.now()
    locked.accepted_by = user
    locked.save(update_fields=["accepted_at", "accepted_by"])
    audit_log_write(
        actor=user,
        action="invitation.accept",
        resource=locked,
        diff={"membership_id": str(membership.pk), "role": membership.role, "new": created},
    )
    return membership


def _revoke_invitations_of(membership: Membership) -> int:
    """End the pending invitations the member sent in their organization: an invitation
    is a grant made with its inviter's authority, so it ends with it (a removed admin
    keeps no way back in through a link sent to an address of their own)."""
    return Invitation.objects.filter(
        organization_id=membership.organization_id,
        invited_by_id=membership.user_id,
        accepted_at=None,
        revoked_at=None,
    ).update(revoked_at=timezone.now())


def _lock_team(membership: Membership) -> None:
    """Lock the organization's admin memberships and ``membership`` itself, and re-read
    its role: two admins demoting or removing each other at once are decided one after
    the other, so the second sees the first one's change and the last admin stays."""
    rows = dict(
        Membership.objects.select_for_update()
        .filter(
            Q(organization_id=membership.organization_id, role=Role.ADMIN) | Q(pk=membership.pk)
        )
        .order_by("pk")
        .values_list("pk", "role")
    )
    if membership.pk not in rows:
        raise TeamError(_("Essa pessoa já não faz parte da equipe."))
    membership.role = rows[membership.pk]


@transaction.atomic
def membership_role_change(*, membership: Membership, actor: Any, role: str) -> Membership:
    """Change a member's role; the organization always keeps an admin (``_lock_team``)."""
    new_role = Role(role)
    _lock_team(membership)
    old_role = membership.role
    if old_role == new_role:
        return membership
    refusal = role_change_refusal(membership, new_role)
    if refusal:
        raise TeamError(refusal)
    membership.role = new_role
    membership.save(update_fields=["role"])
    diff: dict[str, Any] = {"role": [old_role, new_role.value], "user_id": membership.user_id}
    if not membership.has_role(Role.AGENT):  # a viewer answers nothing
        diff["unassigned"] = hooks.unassign_member(membership, actor)
    if old_role == Role.ADMIN:  # only admins invite
        diff["invitations_revoked"] = _revoke_invitations_of(membership)
    audit_log_write(actor=actor, action="membership.role_change", resource=membership, diff=diff)
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership, actor: Any) -> None:
    """Remove a member from the organization (their user account stays: they may belong to
    other organizations), with the invitations they sent still pending. Nobody removes
    themselves, and the last admin stays (``_lock_team``)."""
    _lock_team(membership)
    refusal = removal_refusal(membership, actor)
    if refusal:
        raise TeamError(refusal)
    unassigned = hooks.unassign_member(membership, actor)
    audit_log_write(
        actor=actor,
        action="membership.remove",
        resource=membership,
        diff={
            "role": membership.role,
            "user_id": membership.user_id,
            "unassigned": unassigned,
            "invitations_revoked": _revoke_invitations_of(membership),
        },
    )
    membership.delete()


# --- the organization's own settings (accounts/team page) ----------------------------------


class OrganizationSettingsError(Exception):
    """An organization setting the rules refuse; the message is for the admin (pt-BR)."""


@transaction.atomic
def organization_time_zone_set(
    *, organization: Organization, actor: Any, time_zone: str
) -> Organization:
    """Set the zone the organization's pages, analytics days and budget months follow
    (from its next request or task on). Locks the organization row; the same zone again
    changes nothing."""
    try:
        time_zones.validate_time_zone(time_zone)
    except ValidationError as error:
        raise OrganizationSettingsError(" ".join(error.messages)) from None
    org = Organization.objects.select_for_update().get(pk=organization.pk)
    old = org.time_zone
    if old == time_zone:
        return org
    org.time_zone = time_zone
    org.save(update_fields=["time_zone"])
    organization.time_zone = time_zone
    audit_log_write(
        actor=actor,
        action="organization.time_zone_set",
        resource=org,
        diff={"time_zone": [old, time_zone]},
    )
    return org
