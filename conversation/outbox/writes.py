"""Writing to the outbox: a new outbound message, a staff resend, provider status callbacks."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from accounts.services import audit_log_write
from conversation.channels._parsing import clean_text
from conversation.dispatch import enqueue
from conversation.models import (
    OUTBOX_IN_FLIGHT,
    ChannelSession,
    Conversation,
    DeliveryFailure,
    Direction,
    Message,
    MessageStatus,
    Turn,
)

from .policy import OutboxPolicy, moves_forward, statuses_before

log = logging.getLogger(__name__)

TASK = "conversation.deliver_outbox"

_position_lock = threading.Lock()
_last_position = datetime.min.replace(tzinfo=UTC)


def chain_position(now: datetime) -> datetime:
    """A ``queued_at`` for a message written at ``now``, strictly after the ones this
    process handed out before: two replies written in the same clock tick (a coarse clock,
    a frozen test clock) keep the order they were written in, with no query. Across
    processes the order comes from the clock: turns of one conversation never interleave.
    A clock that jumped back (more than a second) is followed, not fought."""
    global _last_position
    with _position_lock:
        behind = _last_position - now
        if now > _last_position or behind > timedelta(seconds=1):
            _last_position = now
        else:
            _last_position += timedelta(microseconds=1)
        return _last_position


def outbound_enqueue(
    *,
    conversation: Conversation,
    body: str,
    sender_kind: str,
    turn: Turn | None = None,
    sent_by: Any = None,
    script_id: str = "",
    script_version: str = "",
    template_name: str = "",
    template_language: str = "",
    template_params: Sequence[str] = (),
    kind: str = "text",
    media: Mapping[str, Any] | None = None,
) -> Message:
    """Store an outbound message at the tail of the conversation's chain and schedule the
    chain's delivery after commit (the sweeper re-drives it if that task is lost).

    ``kind``/``media``: a file sent by link (``conversation.outbox.media``); ``template_*``:
    a template with its own language and body parameters (``conversation.outbox.templates``).
    """
    now = timezone.now()
    message = Message.objects.create(
        organization_id=conversation.organization_id,
        conversation=conversation,
        channel_id=conversation.channel_id,
        direction=Direction.OUTBOUND,
        sender_kind=sender_kind,
        # A model may emit NUL or a lone surrogate: PostgreSQL cannot store them, and the
        # customer would never see them either.
        body=clean_text(body),
        status=MessageStatus.QUEUED,
        turn=turn,
        sent_by=sent_by,
        script_id=script_id,
        script_version=script_version,
        template_name=template_name,
        template_language=template_language,
        template_params=list(template_params),
        kind=kind,
        **dict(media or {}),
        queued_at=chain_position(now),
        retry_until=now + OutboxPolicy.current().horizon,
    )
    conversation.last_message_at = now
    enqueue(TASK, str(conversation.pk))
    return message


def message_resend(*, message: Message, actor: Any) -> bool:
    """Staff "Reenviar" of a failed outbound message: back in the chain at its tail (after
    whatever is queued now), with a new retry horizon. Audited. False (nothing changed)
    when the message is not failed any more — a second click, or it was re-sent already.

    One conditional UPDATE claims the change, so two clicks re-queue it once."""
    now = timezone.now()
    with transaction.atomic():
        requeued = Message.objects.filter(
            pk=message.pk, direction=Direction.OUTBOUND, status=MessageStatus.FAILED
        ).update(
            status=MessageStatus.QUEUED,
            queued_at=chain_position(now),
            retry_until=now + OutboxPolicy.current().horizon,
            next_attempt_at=None,
            failure_reason="",
            error_code="",
            # The old send's id goes: its late receipts (a redelivered "failed", a
            # "delivered" after all) are about that send, not the one now in the chain.
            provider_message_id="",
            sent_at=None,
        )
        if not requeued:
            return False
        audit_log_write(
            actor=actor,
            action="message.resend",
            resource=message,
            diff={
                "status": [MessageStatus.FAILED.value, MessageStatus.QUEUED.value],
                "failure_reason": message.failure_reason,
                "error_code": message.error_code,
            },
        )
        enqueue(TASK, str(message.conversation_id))
    log.info(
        "outbound re-queued by staff",
        extra={"message_id": str(message.pk), "conversation_id": str(message.conversation_id)},
    )
    return True


def outbound_status_update(
    *, channel: ChannelSession, provider_message_id: str, status: str, error: str = ""
) -> bool:
    """Apply a provider status callback; statuses only move forward (``policy.STATUS_RANK``):
    ``read`` never goes back to ``delivered`` when callbacks arrive out of order, and a
    late ``failed`` (WAHA ack -1) never undoes a delivery the customer's phone confirmed.

    The one implementation for every provider (``inbound.webhook_receive`` calls it). One
    conditional UPDATE: two callbacks of one message racing in two webhooks cannot both
    read "sent" and let the older status win."""
    # Never a row still in the chain (``queued``/``sending``): the provider has not taken it
    # yet, so a receipt naming its id is about an earlier send of it.
    movable = [s for s in statuses_before(status) if s not in OUTBOX_IN_FLIGHT]
    if not movable or not provider_message_id:
        return False
    changes: dict[str, Any] = {"status": status}
    if status == MessageStatus.FAILED:
        changes.update(error_code=error[:64], failure_reason=DeliveryFailure.PROVIDER_STATUS)
    else:  # a confirmation clears an earlier reported failure
        changes.update(error_code="", failure_reason="")
    updated = Message.objects.filter(
        channel=channel,
        provider_message_id=provider_message_id,
        direction=Direction.OUTBOUND,
        status__in=movable,
    ).update(**changes)
    if not updated:
        _remember_early(channel.pk, provider_message_id, status, error)
    return updated > 0


# A receipt can beat the send's own answer (WAHA posts its SERVER/DEVICE acks within
# milliseconds, before sendText returns the id): it matches no row yet and, answered 200, is
# never sent again. It waits here (the shared cache) until the send is recorded under that id
# (``apply_early_status``), for a few minutes at most.
EARLY_STATUS_TTL_S = 600


def _early_key(channel_id: object, provider_message_id: str) -> str:
    return f"outbox:early-status:{channel_id}:{provider_message_id}"


def _remember_early(channel_id: object, provider_message_id: str, status: str, error: str) -> None:
    key = _early_key(channel_id, provider_message_id)
    try:
        kept = cache.get(key)
        if kept is None or moves_forward(kept[0], status):
            cache.set(key, (status, error[:64]), EARLY_STATUS_TTL_S)
    except Exception:  # the cache is an optimisation here: a receipt may still be lost
        log.warning("early delivery status not kept", extra={"channel_id": str(channel_id)})


def apply_early_status(channel: ChannelSession, provider_message_id: str) -> bool:
    """Apply a receipt that arrived before the send was recorded under ``provider_message_id``
    (call right after recording it). Forward only, like any receipt."""
    key = _early_key(channel.pk, provider_message_id)
    try:
        kept = cache.get(key)
        if kept is not None:
            cache.delete(key)
    except Exception:
        return False
    if kept is None:
        return False
    status, error = kept
    return outbound_status_update(
        channel=channel, provider_message_id=provider_message_id, status=status, error=error
    )
