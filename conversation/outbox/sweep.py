"""The outbox's part of the periodic sweeper: re-drive what no task is carrying.

The database is the source of truth for work (DESIGN §5): a delivery task lost with a
broker, a killed worker or a failed publish leaves its rows queued, and this finds them.
Re-driving only schedules ``conversation.deliver_outbox``; the chain's claim makes an
extra run harmless, so a row is never delivered twice by being swept.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime

from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from accounts import rls
from conversation.dispatch import enqueue
from conversation.models import Direction, Message, MessageStatus

from . import breaker
from .chain import resendable
from .policy import OutboxPolicy

log = logging.getLogger(__name__)

TASK = "conversation.deliver_outbox"


def sweep_due(now: datetime | None = None) -> int:
    """Re-drive, in every organization (each under its own tenant wall), the conversations
    whose chain has work no delivery is carrying: queued rows with no attempt scheduled, or
    whose scheduled attempt or delivery lease is older than ``OUTBOX_SWEEP_GRACE_S`` /
    the lease; and rows failed while the provider was down whose channel may be tried again
    (healthy, or its breaker's cool-down is over: one of them becomes the probe).
    Channels whose breaker holds deliveries are skipped until their cool-down ends.

    Returns how many conversations were re-driven. One query per organization."""
    now = now or timezone.now()
    policy = OutboxPolicy.current()
    total = 0
    for organization_id in rls.organization_ids():
        with rls.tenant_context(organization_id):
            conversation_ids = due_conversations(organization_id, now, policy)
            for conversation_id in conversation_ids:
                enqueue(TASK, conversation_id)
        if conversation_ids:
            log.info(
                "outbox sweep re-drove conversations",
                extra={"organization_id": str(organization_id), "count": len(conversation_ids)},
            )
        total += len(conversation_ids)
    return total


def due_conversations(organization_id: uuid.UUID, now: datetime, policy: OutboxPolicy) -> list[str]:
    """The organization's conversations to re-drive (see ``sweep_due``). Filtered by the
    organization too: SQLite has no tenant walls, only this scoping."""
    outbound = Message.objects.filter(
        organization_id=organization_id, direction=Direction.OUTBOUND
    ).exclude(breaker.is_held(now))
    carried = Message.objects.filter(
        Q(status=MessageStatus.QUEUED, next_attempt_at__gt=now - policy.sweep_grace)
        | Q(status=MessageStatus.SENDING, next_attempt_at__gt=now),
        conversation_id=OuterRef("conversation_id"),
        direction=Direction.OUTBOUND,
    )
    stranded = outbound.filter(
        Q(status=MessageStatus.QUEUED, queued_at__lte=now - policy.sweep_grace)
        | Q(status=MessageStatus.SENDING, next_attempt_at__lte=now)
        | resendable(now, policy)
    ).exclude(Exists(carried))
    ids = stranded.order_by().values_list("conversation_id", flat=True).distinct()
    return sorted(str(pk) for pk in ids)
