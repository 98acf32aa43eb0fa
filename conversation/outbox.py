"""The outbox: every outbound message is stored first, then delivered by a task.

A provider outage delays a reply, it never loses one: retryable failures back off
and retry up to ``OUTBOX_MAX_ATTEMPTS``, then the message is marked failed. Messages
of one conversation are delivered in the order they were written.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from conversation.channels import get_adapter
from conversation.channels.base import ChannelConfig, OutsideServiceWindow, SendError
from conversation.models import (
    ChannelSession,
    Conversation,
    Direction,
    Message,
    MessageStatus,
    Turn,
)

log = logging.getLogger(__name__)


def channel_config(channel: ChannelSession) -> ChannelConfig:
    return ChannelConfig(
        provider=channel.provider,  # type: ignore[arg-type]
        external_id=channel.external_id,
        api_base_url=channel.api_base_url,
        api_token=channel.api_token,
        webhook_secret=channel.webhook_secret,
        extra={"templates": channel.templates},
    )


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
) -> Message:
    """Store an outbound message and schedule its delivery after commit."""
    from conversation import tasks  # tasks import this module

    now = timezone.now()
    message = Message.objects.create(
        organization_id=conversation.organization_id,
        conversation=conversation,
        channel_id=conversation.channel_id,
        direction=Direction.OUTBOUND,
        sender_kind=sender_kind,
        body=body,
        status=MessageStatus.QUEUED,
        turn=turn,
        sent_by=sent_by,
        script_id=script_id,
        script_version=script_version,
        template_name=template_name,
    )
    conversation.last_message_at = now
    from conversation.dispatch import enqueue

    enqueue(tasks.deliver_outbox, str(conversation.pk))
    return message


def deliver_conversation_outbox(conversation_id: str) -> dict[str, int]:
    """Deliver queued messages of one conversation, oldest first.

    Locks the queued rows of the conversation so two workers never send the same
    message or reorder two. Stops at the first retryable failure (later messages
    wait behind it); returns counts and ``retry_in`` seconds when a retry is due.
    """
    counts = {"sent": 0, "failed": 0, "refused": 0, "retry_in": 0}
    with transaction.atomic():
        queued = list(
            Message.objects.select_for_update()
            .filter(conversation_id=conversation_id, status=MessageStatus.QUEUED)
            .order_by("created_at")
        )
        if not queued:
            return counts
        conversation = (
            Conversation.objects.select_related("channel", "contact")
            .filter(pk=conversation_id)
            .first()
        )
        if conversation is None:
            return counts
        adapter = get_adapter(conversation.channel.provider)
        config = channel_config(conversation.channel)
        for message in queued:
            outcome = _deliver_one(message, conversation, adapter, config)
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome == "retry":
                counts["retry_in"] = int(
                    settings.OUTBOX_BACKOFF_BASE_S * (2 ** max(message.attempts - 1, 0))
                )
                break
    return counts


def _deliver_one(
    message: Message, conversation: Conversation, adapter: Any, config: ChannelConfig
) -> str:
    now = timezone.now()
    message.attempts += 1
    ids = {"message_id": str(message.pk), "conversation_id": str(conversation.pk)}
    try:
        if message.template_name:
            result = adapter.send_template(
                config,
                to=conversation.contact.phone,
                template_name=message.template_name,
                language="pt_BR",
                parameters=[message.body] if message.body else [],
            )
        else:
            result = adapter.send_text(
                config,
                to=conversation.contact.phone,
                body=message.body,
                last_inbound_at=conversation.last_inbound_at,
                now=now,
            )
    except OutsideServiceWindow as exc:
        message.status, message.error_code = MessageStatus.REFUSED, exc.code
        log.info("outbound refused: service window closed", extra=ids)
        message.save(update_fields=["status", "error_code", "attempts"])
        return "refused"
    except SendError as exc:
        message.error_code = exc.code
        if exc.retryable and message.attempts < settings.OUTBOX_MAX_ATTEMPTS:
            log.warning("outbound delivery failed, will retry", extra={**ids, "code": exc.code})
            message.save(update_fields=["error_code", "attempts"])
            return "retry"
        message.status = MessageStatus.FAILED
        log.error("outbound delivery failed for good", extra={**ids, "code": exc.code})
        message.save(update_fields=["status", "error_code", "attempts"])
        return "failed"
    message.status = result.status
    message.provider_message_id = result.provider_message_id or f"local-{uuid.uuid4().hex}"
    message.sent_at = now
    message.error_code = ""
    message.save(
        update_fields=["status", "provider_message_id", "sent_at", "error_code", "attempts"]
    )
    return "sent"


STATUS_RANK = {
    MessageStatus.QUEUED: 0,
    MessageStatus.SENDING: 1,
    MessageStatus.SENT: 2,
    MessageStatus.DELIVERED: 3,
    MessageStatus.READ: 4,
}


def outbound_status_update(
    *, channel: ChannelSession, provider_message_id: str, status: str, error: str = ""
) -> bool:
    """Apply a provider status callback; statuses only move forward (read never
    goes back to delivered when callbacks arrive out of order)."""
    message = Message.objects.filter(
        channel=channel, provider_message_id=provider_message_id, direction=Direction.OUTBOUND
    ).first()
    if message is None:
        return False
    if status == MessageStatus.FAILED:
        message.status, message.error_code = MessageStatus.FAILED, error[:64]
    elif STATUS_RANK.get(MessageStatus(status), -1) > STATUS_RANK.get(
        MessageStatus(message.status), 99
    ):
        message.status = status
    else:
        return False
    message.save(update_fields=["status", "error_code"])
    return True
