"""Organizations, memberships with roles, and the append-only audit log; and the pieces
every app's tenant tables share (``TenantModel``, the choice and non-blank checks).
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts import time_zones


class Organization(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(_("nome"), max_length=120)
    slug = models.SlugField(unique=True, max_length=60)
    # LLM provider/models enabled, case reminder cadence, ...: read through
    # ``accounts.selectors.org_setting`` so a missing key has one default.
    settings = models.JSONField(default=dict, blank=True)
    # LGPD retention: message text and media older than this many days are erased by the
    # beat task ``conversation.apply_retention`` (rows and counts stay). Empty: kept.
    message_retention_days = models.PositiveIntegerField(
        _("reter mensagens por (dias)"),
        null=True,
        blank=True,
        help_text=_("Texto e mídia mais antigos são apagados; contagens ficam. Vazio: sem limite."),
    )
    # Pages show its times, and its analytics days and budget months roll over, in this zone
    # (``accounts.time_zones``: requests and ``rls.tenant_context`` activate it).
    time_zone = models.CharField(
        _("fuso horário"),
        max_length=64,
        choices=time_zones.TIME_ZONE_CHOICES,
        default=time_zones.DEFAULT_TIME_ZONE,
        validators=[time_zones.validate_time_zone],
        help_text=_(
            "Horários nas páginas, dias dos resultados e mês do orçamento seguem este fuso."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("organização")
        verbose_name_plural = _("organizações")

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        update_fields = kwargs.get("update_fields")
        if "time_zone" in self.__dict__ and (update_fields is None or "time_zone" in update_fields):
            time_zones.remember(self.pk, self.time_zone)

    @classmethod
    def from_db(cls, db: Any, field_names: Any, values: Any) -> Organization:
        row = super().from_db(db, field_names, values)
        # A row read anyway spares ``rls.tenant_context`` its query for the zone.
        if "time_zone" in row.__dict__:
            time_zones.remember(row.pk, row.time_zone)
        return row


class TenantModel(models.Model):
    """A row of one organization: the row-level-security walls (``accounts.rls``) key on
    the ``organization`` foreign key, so every tenant table carries it under that name."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


class TimestampedTenantModel(TenantModel):
    """A tenant row that is edited in place, and says when it last was."""

    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


def choice_check(
    field: str, choices: type[models.TextChoices], name: str
) -> models.CheckConstraint:
    """The database refuses a value of ``field`` outside ``choices``."""
    return models.CheckConstraint(condition=Q(**{f"{field}__in": choices.values}), name=name)


def not_blank_check(field: str, name: str) -> models.CheckConstraint:
    """The database refuses an empty string in ``field``."""
    return models.CheckConstraint(condition=~Q(**{field: ""}), name=name)


def display_name(user: Any) -> str:
    """How a person is named on every page, list and notice: the full name, else the
    username; "" for no one."""
    if user is None:
        return ""
    return str(user.get_full_name() or user.get_username())


class Role(models.TextChoices):
    VIEWER = "viewer", _("Leitura")
    AGENT = "agent", _("Atendente")
    MANAGER = "manager", _("Gestor")
    ADMIN = "admin", _("Administrador")


ROLE_RANK = {Role.VIEWER: 0, Role.AGENT: 1, Role.MANAGER: 2, Role.ADMIN: 3}


class Membership(TenantModel):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "user"], name="uniq_membership"),
            choice_check("role", Role, "membership_role_valid"),
        ]
        verbose_name = _("vínculo")
        verbose_name_plural = _("vínculos")

    def __str__(self) -> str:
        return f"{self.user} @ {self.organization} ({self.role})"

    def has_role(self, role: str) -> bool:
        return ROLE_RANK[Role(self.role)] >= ROLE_RANK[Role(role)]


class AuditLog(models.Model):
    """Append-only: written by services, never updated or deleted by the product."""

    id = models.BigAutoField(primary_key=True)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor_kind = models.CharField(max_length=16, default="user")  # user | system | webhook
    action = models.CharField(max_length=80)
    resource_type = models.CharField(max_length=60)
    resource_id = models.CharField(max_length=64)
    diff = models.JSONField(default=dict, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["organization", "-created_at"], name="audit_org_created")]
        verbose_name = _("registro de auditoria")
        verbose_name_plural = _("registros de auditoria")

    def __str__(self) -> str:
        return f"{self.action} {self.resource_type}:{self.resource_id}"


def _invitation_expiry() -> datetime.datetime:
    return timezone.now() + datetime.timedelta(days=INVITATION_VALID_DAYS)


INVITATION_VALID_DAYS = 7


class Invitation(TenantModel):
    """A one-time link that makes ``email`` a member with ``role``. Only the SHA-256 of the
    link's secret is stored: the secret travels in the e-mail alone."""

    email = models.EmailField(_("e-mail"))
    role = models.CharField(_("papel"), max_length=16, choices=Role.choices, default=Role.AGENT)
    token_hash = models.CharField(max_length=64)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    expires_at = models.DateTimeField(default=_invitation_expiry)
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [choice_check("role", Role, "invitation_role_valid")]
        verbose_name = _("convite")
        verbose_name_plural = _("convites")

    def __str__(self) -> str:
        return f"{self.email} @ {self.organization_id} ({self.role})"

    @property
    def is_pending(self) -> bool:
        return self.accepted_at is None and self.revoked_at is None

    def is_usable(self, now: datetime.datetime | None = None) -> bool:
        return self.is_pending and (now or timezone.now()) < self.expires_at
