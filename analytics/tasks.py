"""Thin Celery wrappers of the analytics app (see ``rollups`` for why beat, not on write)."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from accounts import rls
from analytics import rollups

log = logging.getLogger(__name__)


@shared_task(name="analytics.roll_up")
def roll_up() -> int:
    """Beat: roll every organization's finished days into the daily rollups. One
    organization's failure is logged and skipped (its transaction rolled back; the next
    run retries it): it never keeps the others' figures and budgets from moving."""
    days = 0
    for organization_id in rls.organization_ids():
        try:
            with rls.tenant_context(organization_id):
                days += rollups.roll_up(organization_id)
        except SoftTimeLimitExceeded:
            raise
        except Exception:
            log.exception(
                "analytics roll-up failed", extra={"organization_id": str(organization_id)}
            )
    return days
