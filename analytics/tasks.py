"""Thin Celery wrappers of the analytics app (see ``rollups`` for why beat, not on write)."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from accounts import rls
from analytics import notices, rollups
from conversation.dispatch import enqueue

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


@shared_task(name="analytics.send_budget_notice")
def send_budget_notice(switch_id: str, attempt: int = 1) -> bool:
    """The staff e-mail of one budget switch (``notices``), scheduled when the switch
    commits. A failed attempt schedules the next one itself, after a countdown (a Celery
    retry would run at once, in-process, with no delay). True when another is scheduled."""
    retry_in = notices.budget_notice_send(switch_id, attempt)
    if retry_in:
        enqueue("analytics.send_budget_notice", switch_id, attempt + 1, countdown=retry_in)
    return bool(retry_in)
