"""Thin Celery wrappers: take ids, re-fetch, call one function — in the organization of
the row the id names (``rls.runs_in_tenant_of``), never one the message claims.

Every turn entry point lives here, with the turn package it runs: the inbound turn, and
the two turns cases start (a person answered a case, a follow-up is due). Their names
keep the ``cases.`` prefix they were born with, so queued messages and the beat schedule
keep working. The three turns work for their organization with ``tenant_session`` (no
transaction around the task; the turn opens its own short ones): the inbound and case-reply
turns call the model, and an attempt of any of them that fails after its claim must still
count (``claim.count_failed_claim``). Queues and time limits: ``CELERY_TASK_ROUTES`` and
``CELERY_TASK_ANNOTATIONS`` in settings."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.db import OperationalError

from accounts import rls
from accounts.models import Organization
from cases.models import CaseEvent, CaseFollowUp
from conversation import outbox, privacy, sweeper, turns
from conversation.models import Message
from conversation.turns.tenancy import runs_in_tenant_session_of

log = logging.getLogger(__name__)

# The turn tasks' one retry policy: a lost database connection is retried, backed off, three
# times at most; nothing else is retried by Celery.
_TURN_RETRY: dict[str, Any] = {
    "autoretry_for": (OperationalError,),
    "retry_backoff": True,
    "max_retries": 3,
}


@shared_task(name="conversation.run_inbound_turn", **_TURN_RETRY)
@runs_in_tenant_session_of(Message, "message_id")
def run_inbound_turn(message_id: str) -> str | None:
    turn = turns.run_inbound_turn(message_id)
    return turn.outcome if turn else None


@shared_task(name="cases.run_case_reply_turn", **_TURN_RETRY)
@runs_in_tenant_session_of(CaseEvent, "event_id")
def run_case_reply_turn(event_id: str) -> str | None:
    turn = turns.run_case_reply_turn(event_id)
    return turn.outcome if turn else None


@shared_task(name="cases.run_follow_up_turn", **_TURN_RETRY)
# Short transactions of its own too (no model call, but one around the task would roll back
# the count of an attempt that failed after its claim, ``claim.count_failed_claim``).
@runs_in_tenant_session_of(CaseFollowUp, "follow_up_id")
def run_follow_up_turn(follow_up_id: str) -> str | None:
    turn = turns.run_follow_up_turn(follow_up_id)
    return turn.outcome if turn else None


@shared_task(name="conversation.sweep_due_work")
def sweep_due_work() -> dict[str, int]:
    """Beat (outbox queue): re-drive committed work no task is carrying (``sweeper``)."""
    return sweeper.sweep_due_work().as_dict()


@shared_task(name="conversation.apply_retention")
def apply_retention() -> int:
    """Beat: each organization's LGPD retention (``privacy.retention_apply``), in its context."""
    erased = 0
    for organization_id in rls.organization_ids():
        with rls.tenant_context(organization_id):
            organization = Organization.objects.filter(pk=organization_id).first()
            if organization is not None and organization.message_retention_days:
                erased += privacy.retention_apply(organization=organization)
    return erased


@shared_task(name="conversation.deliver_outbox")
def deliver_outbox(conversation_id: str) -> dict[str, int]:
    # No ``runs_in_tenant_of``: on PostgreSQL that is one transaction around the whole task,
    # and the provider call must run with none open. The outbox enters the conversation's
    # organization (``rls.organization_of`` + ``tenant_context``) for each short step itself.
    # Retries are the outbox's own (backoff, breaker, horizon), scheduled as fresh tasks.
    return outbox.deliver_conversation_outbox(conversation_id)
