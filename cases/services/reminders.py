"""Reminders to the team about cases waiting for it (the stale-case watcher, §9): armed
when a wait begins, fired by the watcher while the case still waits in the same wait,
rescheduled when the organization changes its cadence."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from cases.models import Case, CaseReminder, CaseStatus, ReminderStatus
from cases.selectors import notification_settings_for

from ._records import _audit_sweep

log = logging.getLogger(__name__)


def _arm_reminders(case: Case, wait_started_at: datetime) -> int:
    """Schedule the organization's reminders for the wait that begins now."""
    config = notification_settings_for(case.organization_id)
    if not config.reminders_enabled:
        return 0
    step = timedelta(hours=config.reminder_after_hours)
    CaseReminder.objects.bulk_create(
        [
            CaseReminder(
                organization_id=case.organization_id,
                case=case,
                wait_started_at=wait_started_at,
                sequence=n,
                due_at=wait_started_at + step * n,
            )
            for n in range(1, config.reminder_count + 1)
        ],
        ignore_conflicts=True,
    )
    return config.reminder_count


def _cancel_reminders(case: Case) -> int:
    return CaseReminder.objects.filter(case=case, status=ReminderStatus.PENDING).update(
        status=ReminderStatus.CANCELLED
    )


def reminders_fire_due(*, organization_id: uuid.UUID, now: datetime | None = None) -> int:
    """The watcher: reminders of cases still waiting for the team, in the same wait, are
    fired (shown in the cases inbox); stale ones are cancelled. Idempotent."""
    now = now or timezone.now()
    due = CaseReminder.objects.filter(
        organization_id=organization_id, status=ReminderStatus.PENDING, due_at__lte=now
    )
    fired = stale = 0
    for reminder in due.select_related("case").order_by("due_at")[:1000]:
        case = reminder.case
        still_waiting = (
            case.status == CaseStatus.AWAITING_HUMAN
            and case.waiting_since == reminder.wait_started_at
        )
        new = ReminderStatus.FIRED if still_waiting else ReminderStatus.CANCELLED
        claimed = CaseReminder.objects.filter(pk=reminder.pk, status=ReminderStatus.PENDING).update(
            status=new, fired_at=now if still_waiting else None
        )
        fired += claimed if still_waiting else 0
        stale += 0 if still_waiting else claimed
    if fired or stale:
        _audit_sweep(
            organization_id, "case.reminders_sweep", {"fired": fired, "stale_cancelled": stale}
        )
        log.info("case reminders fired", extra={"count": fired, "stale": stale})
    return fired


def reminders_reschedule(*, organization_id: uuid.UUID) -> int:
    """After the organization changes its cadence: the pending reminders of the cases
    waiting for the team follow the new cadence (same per-wait clock; reminders already
    fired in the current wait are not repeated)."""
    config = notification_settings_for(organization_id)
    step = timedelta(hours=config.reminder_after_hours)
    with transaction.atomic():
        dropped, _ = CaseReminder.objects.filter(
            organization_id=organization_id, status=ReminderStatus.PENDING
        ).delete()
        if not config.reminders_enabled:
            _audit_sweep(
                organization_id, "case.reminders_reschedule", {"armed": 0, "dropped": dropped}
            )
            return 0
        waiting = list(
            Case.objects.filter(
                organization_id=organization_id, status=CaseStatus.AWAITING_HUMAN
            ).values_list("pk", "waiting_since")
        )
        fired = set(
            CaseReminder.objects.filter(
                organization_id=organization_id, case__status=CaseStatus.AWAITING_HUMAN
            ).values_list("case_id", "wait_started_at", "sequence")
        )
        new = [
            CaseReminder(
                organization_id=organization_id,
                case_id=case_id,
                wait_started_at=since,
                sequence=n,
                due_at=since + step * n,
            )
            for case_id, since in waiting
            for n in range(1, config.reminder_count + 1)
            if (case_id, since, n) not in fired
        ]
        CaseReminder.objects.bulk_create(new, ignore_conflicts=True, batch_size=1000)
        _audit_sweep(
            organization_id, "case.reminders_reschedule", {"armed": len(new), "cases": len(waiting)}
        )
    return len(new)
