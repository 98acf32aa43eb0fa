"""Thin Celery wrappers: take ids, re-fetch, call one service — in the organization of
the row the id names (``rls.runs_in_tenant_of``), never one the message claims."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import OperationalError

from accounts import rls
from conversation import outbox, turns
from conversation.models import Conversation, Message

log = logging.getLogger(__name__)


@shared_task(
    name="conversation.run_inbound_turn",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=3,
)
@rls.runs_in_tenant_of(Message, "message_id")
def run_inbound_turn(message_id: str) -> str | None:
    turn = turns.run_inbound_turn(message_id)
    return turn.outcome if turn else None


@shared_task(name="conversation.deliver_outbox", bind=True, max_retries=None)
@rls.runs_in_tenant_of(Conversation, "conversation_id")
def deliver_outbox(self, conversation_id: str) -> dict[str, int]:
    counts = outbox.deliver_conversation_outbox(conversation_id)
    if counts.get("retry_in"):
        # Retryable provider failure: the message stays queued; try again later.
        # Bounded by OUTBOX_MAX_ATTEMPTS on the message itself.
        from conversation.dispatch import enqueue

        enqueue(deliver_outbox, conversation_id, countdown=counts["retry_in"])
    return counts
