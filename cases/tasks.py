"""Thin Celery wrappers over the case services: take ids, re-fetch, call one function.
Each runs in the organization of its own row (``runs_in_tenant_of``); the beat sweeps
list organizations first and then work inside each one. The two turns cases start
(``cases.run_case_reply_turn``, ``cases.run_follow_up_turn``) live with the turn, in
``conversation/tasks.py``."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from accounts import rls
from cases import notifications, services
from cases.models import CaseEvent
from conversation.dispatch import enqueue
from conversation.turns.tenancy import runs_in_tenant_session_of

log = logging.getLogger(__name__)


@shared_task(name="cases.fire_due_follow_ups")
def fire_due_follow_ups() -> int:
    """Beat: enqueue the follow-up turn of every due follow-up (each keyed by its row)."""
    now = timezone.now()
    queued = 0
    for organization_id in rls.organization_ids():
        with rls.tenant_context(organization_id):
            for follow_up_id in services.due_follow_up_ids(organization_id, now):
                enqueue("cases.run_follow_up_turn", follow_up_id)
                queued += 1
    return queued


@shared_task(name="cases.watch_stale_cases")
def watch_stale_cases() -> int:
    """Beat: the stale-case watcher. Per organization: cases stuck on the customer's side
    go back to the team's queue (the customer answered and the AI did not bring it back;
    the team's question never reached the customer), lost relays are scheduled again, and
    the due reminders of cases waiting for the team fire. Returns the reminders fired plus
    the cases moved."""
    done = 0
    for organization_id in rls.organization_ids():
        with rls.tenant_context(organization_id):
            now = timezone.now()
            moved = services.stalled_cases_sweep(organization_id=organization_id, now=now)
            done += moved["lead_answered"] + moved["relay_not_delivered"]
            done += services.reminders_fire_due(organization_id=organization_id, now=now)
    return done


@shared_task(name="cases.deliver_case_notice", autoretry_for=(OperationalError,), max_retries=3)
# Short transactions of its own, like a turn: the notice is claimed, sent with no transaction
# open (a slow provider holds no connection nor row), then recorded.
@runs_in_tenant_session_of(CaseEvent, "event_id")
def deliver_case_notice(event_id: str) -> str:
    outcome = notifications.notice_deliver(event_id)
    if outcome.retry_in:
        enqueue("cases.deliver_case_notice", event_id, countdown=outcome.retry_in)
    return outcome.status
