"""Thin Celery wrappers of the analytics app (see ``rollups`` for why beat, not on write)."""

from __future__ import annotations

from celery import shared_task

from accounts import rls
from analytics import rollups


@shared_task(name="analytics.roll_up")
def roll_up() -> int:
    """Beat: roll every organization's finished days into the daily rollups."""
    days = 0
    for organization_id in rls.organization_ids():
        with rls.tenant_context(organization_id):
            days += rollups.roll_up(organization_id)
    return days
