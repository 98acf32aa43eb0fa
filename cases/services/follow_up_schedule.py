"""When the customer is asked again (§3, §10.4): the delay and the number of attempts,
and arming or cancelling the pending check of a case that waits for the customer."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from cases.models import Case, CaseFollowUp, FollowUpStatus
from conversation.dispatch import enqueue


def follow_up_delay() -> timedelta:
    return timedelta(hours=float(getattr(settings, "CASES_FOLLOW_UP_AFTER_HOURS", 4)))


def follow_up_max_attempts() -> int:
    return int(getattr(settings, "CASES_FOLLOW_UP_ATTEMPTS", 2))


def _arm_follow_up(case: Case, now: datetime) -> CaseFollowUp:
    follow_up = CaseFollowUp.objects.create(
        organization_id=case.organization_id,
        case=case,
        conversation_id=case.conversation_id,
        due_at=now + follow_up_delay(),
    )
    if settings.TASKS_IN_PROCESS:
        # No beat in the embedded default: the in-process runner fires it when due.
        enqueue(
            "cases.run_follow_up_turn",
            str(follow_up.pk),
            countdown=follow_up_delay().total_seconds(),
        )
    return follow_up


def _cancel_follow_ups(case: Case, reason: str) -> int:
    return CaseFollowUp.objects.filter(case=case, status=FollowUpStatus.PENDING).update(
        status=FollowUpStatus.CANCELLED, cancel_reason=reason[:40]
    )
