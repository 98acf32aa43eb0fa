"""Shared model pieces: the tenant base class and the choices check constraint."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from django.db import models
from django.db.models import Q

from accounts.models import Organization

# "Silenced with no end" (human-cases §7: bot_silenced_until = infinity).
SILENCED_FOREVER = datetime(9999, 12, 31, tzinfo=UTC)


def choice_check(
    field: str, choices: type[models.TextChoices], name: str
) -> models.CheckConstraint:
    return models.CheckConstraint(condition=Q(**{f"{field}__in": choices.values}), name=name)


class TenantModel(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
