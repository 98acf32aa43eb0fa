"""Reads of the accounts app: the team page and invitation links."""

from __future__ import annotations

import hashlib
import hmac
import uuid
from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from accounts import rls
from accounts.models import Invitation, Membership, Organization, Role


def invitation_token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def invitation_link_code(invitation: Invitation, secret: str) -> str:
    """The opaque code of an invitation's one-time link: ``<id>.<secret>``."""
    return f"{invitation.pk}.{secret}"


def invitation_for_code(code: str) -> Invitation | None:
    """The invitation a link's code names, when its secret matches (usable or not: the
    page says why an old link no longer works). Read without any logged-in context: the
    invitation's own row names its organization (``rls.organization_of``), like a task.
    Call inside ``rls.tenant_context(invitation.organization_id)`` to act on it."""
    raw_id, _sep, secret = code.partition(".")
    try:
        invitation_id = uuid.UUID(raw_id)
    except ValueError:
        return None
    if not secret:
        return None
    organization_id = rls.organization_of(Invitation, invitation_id)
    if organization_id is None:
        return None
    with rls.tenant_context(organization_id):
        invitation = (
            Invitation.objects.select_related("organization").filter(pk=invitation_id).first()
        )
    if invitation is None:
        return None
    if not hmac.compare_digest(invitation.token_hash, invitation_token_hash(secret)):
        return None
    return invitation


def team_members(organization: Organization) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(organization=organization)
        .select_related("user")
        .order_by("user__username")
    )


def pending_invitations(organization: Organization) -> QuerySet[Invitation]:
    return Invitation.objects.filter(
        organization=organization, accepted_at=None, revoked_at=None
    ).order_by("-created_at")


def _admins_left(organization_id: Any, *, without: Membership) -> bool:
    """Whether another admin who can still log in stays: a deactivated account's admin
    membership manages nothing, so it does not keep the organization's team in hand."""
    return (
        Membership.objects.filter(
            organization_id=organization_id, role=Role.ADMIN, user__is_active=True
        )
        .exclude(pk=without.pk)
        .exists()
    )


def role_change_refusal(membership: Membership, role: str) -> str:
    """Why ``membership`` may not take ``role`` ("" when it may): the last admin stays one.
    The page, the API and the admin's form ask the same question."""
    demoted = membership.role == Role.ADMIN and Role(role) != Role.ADMIN
    if demoted and not _admins_left(membership.organization_id, without=membership):
        return str(_("A organização precisa de pelo menos um administrador com a conta ativa."))
    return ""


def removal_refusal(membership: Membership, actor: Any) -> str:
    """Why ``actor`` may not remove ``membership`` ("" when they may)."""
    if getattr(actor, "pk", None) == membership.user_id:
        return str(_("Você não pode remover a si mesmo."))
    if membership.role == Role.ADMIN and not _admins_left(
        membership.organization_id, without=membership
    ):
        return str(_("A organização precisa de pelo menos um administrador com a conta ativa."))
    return ""


def deactivation_refusal(user: Any) -> str:
    """Why ``user``'s account may not be deactivated ("" when it may): it holds the last
    admin membership, among accounts that can log in, of one of its organizations."""
    if not user.is_active:
        return ""
    for membership in Membership.objects.filter(user=user, role=Role.ADMIN).select_related(
        "organization"
    ):
        if not _admins_left(membership.organization_id, without=membership):
            return str(
                _(
                    "É o último administrador de %(org)s: torne outra pessoa administradora "
                    "antes de desativar esta conta."
                )
                % {"org": membership.organization.name}
            )
    return ""
