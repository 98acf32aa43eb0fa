"""Shared model pieces of the conversation tables. The tenant bases and the checks live
with ``Organization`` in ``accounts.models`` (the lower layer, which has tenant tables of
its own); they are re-exported here for the apps that import them from this module."""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import models
from django.db.models import Q

from accounts.models import TenantModel, TimestampedTenantModel, choice_check, not_blank_check

# "Silenced with no end" (human-cases §7: bot_silenced_until = infinity).
SILENCED_FOREVER = datetime(9999, 12, 31, tzinfo=UTC)


def unique_unless_blank(field: str, *, within: str, name: str) -> models.UniqueConstraint:
    """A non-blank ``field`` is unique within ``within``; blank means "not known (yet)" and
    any number of rows may share it."""
    return models.UniqueConstraint(fields=[within, field], condition=~Q(**{field: ""}), name=name)


__all__ = [
    "SILENCED_FOREVER",
    "TenantModel",
    "TimestampedTenantModel",
    "choice_check",
    "not_blank_check",
    "unique_unless_blank",
]
