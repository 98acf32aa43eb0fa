"""The one canonical human handoff (human-cases §7) and the handoff inbox actions."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.services import audit_log_write
from conversation.hooks import cancel_pending_for_conversation, resume_pending_for_conversation
from conversation.models import (
    SILENCED_FOREVER,
    Conversation,
    ConversationStatus,
    Handoff,
    HandoffReason,
    HandoffStatus,
    Message,
    SenderKind,
)
from conversation.outbox import outbound_enqueue

log = logging.getLogger(__name__)

BRIEFING_MESSAGES = 12


def build_briefing(conversation: Conversation, *, extra: str = "") -> str:
    """A short briefing for the person taking over: who, since when, the last lines."""
    lines = list(
        Message.objects.filter(conversation=conversation).order_by("-created_at")[
            :BRIEFING_MESSAGES
        ]
    )
    who = {
        SenderKind.CUSTOMER: _("Cliente"),
        SenderKind.AI: _("IA"),
        SenderKind.HUMAN: _("Equipe"),
        SenderKind.SYSTEM: _("Sistema"),
    }
    transcript = "\n".join(f"{who[SenderKind(m.sender_kind)]}: {m.body}" for m in reversed(lines))
    parts = [extra.strip()] if extra.strip() else []
    parts.append(
        _("Últimas mensagens:\n%(transcript)s") % {"transcript": transcript}
        if transcript
        else _("Sem mensagens ainda.")
    )
    return "\n\n".join(parts)


def perform_human_handoff(
    *,
    conversation: Conversation,
    reason_code: str,
    reason: str = "",
    briefing_extra: str = "",
    actor: Any = None,
) -> Handoff:
    """Hand the conversation to a human. Idempotent: a second call appends to the open
    handoff instead of creating another.

    Effects: contact ``force_human``; conversation ``pending`` and silenced with no end;
    router stickiness cleared; pending follow-ups cancelled; a Handoff row with the
    reason code and briefing (the handoff inbox item).
    """
    HandoffReason(reason_code)  # closed set: an unknown code is a programming error
    now = timezone.now()
    with transaction.atomic():
        contact = conversation.contact
        if not contact.force_human:
            contact.force_human = True
            contact.save(update_fields=["force_human"])
        conversation.status = ConversationStatus.PENDING
        conversation.bot_silenced_until = SILENCED_FOREVER
        conversation.active_agent = None
        conversation.active_intent = ""
        conversation.active_agent_set_at = None
        conversation.save(
            update_fields=[
                "status",
                "bot_silenced_until",
                "active_agent",
                "active_intent",
                "active_agent_set_at",
            ]
        )
        cancelled = cancel_pending_for_conversation(conversation, "handoff")
        briefing = build_briefing(conversation, extra=briefing_extra)
        handoff = Handoff.objects.filter(
            conversation=conversation, status=HandoffStatus.OPEN
        ).first()
        if handoff is None:
            handoff = Handoff.objects.create(
                organization_id=conversation.organization_id,
                conversation=conversation,
                reason_code=reason_code,
                reason=reason,
                briefing=briefing,
                last_activity_at=now,
            )
        else:
            handoff.reason = "\n".join(r for r in (handoff.reason, reason) if r)
            handoff.briefing = briefing
            handoff.last_activity_at = now
            handoff.save(update_fields=["reason", "briefing", "last_activity_at"])
        audit_log_write(
            actor=actor,
            action="handoff.perform",
            resource=handoff,
            diff={"reason_code": reason_code, "followups_cancelled": cancelled},
            actor_kind="user" if actor else "system",
        )
    log.info(
        "human handoff",
        extra={"conversation_id": str(conversation.pk), "reason_code": reason_code},
    )
    return handoff


def handoff_touch(conversation: Conversation) -> Handoff:
    """The customer wrote while a human owns the conversation: the inbox item is
    inserted or bumped, never dropped."""
    now = timezone.now()
    handoff = Handoff.objects.filter(conversation=conversation, status=HandoffStatus.OPEN).first()
    if handoff is None:
        return Handoff.objects.create(
            organization_id=conversation.organization_id,
            conversation=conversation,
            reason_code=HandoffReason.MANUAL,
            briefing=build_briefing(conversation),
            last_activity_at=now,
        )
    handoff.last_activity_at = now
    handoff.save(update_fields=["last_activity_at"])
    return handoff


def handoff_reply(*, handoff: Handoff, actor: Any, text: str) -> Message:
    """A person answers the customer through the same outbox."""
    with transaction.atomic():
        message = outbound_enqueue(
            conversation=handoff.conversation,
            body=text,
            sender_kind=SenderKind.HUMAN,
            sent_by=actor,
        )
        handoff.conversation.save(update_fields=["last_message_at"])
        audit_log_write(
            actor=actor,
            action="handoff.reply",
            resource=message,
            diff={"handoff_id": str(handoff.pk)},
        )
    return message


def handoff_return_to_ai(*, handoff: Handoff, actor: Any) -> Handoff:
    """Give the conversation back to the AI: the next customer message gets an AI reply.

    Claims the handoff with a conditional update: of two members giving it back at once
    (or one giving back a handoff a resolve already returned) only the first acts; the
    other changes nothing — above all not a conversation closed meanwhile."""
    now = timezone.now()
    returned_by = actor if getattr(actor, "is_authenticated", False) else None
    with transaction.atomic():
        claimed = Handoff.objects.filter(pk=handoff.pk, status=HandoffStatus.OPEN).update(
            status=HandoffStatus.RETURNED, returned_at=now, returned_by=returned_by
        )
        if not claimed:
            handoff.refresh_from_db(fields=["status", "returned_at", "returned_by"])
            return handoff
        handoff.status = HandoffStatus.RETURNED
        handoff.returned_at = now
        handoff.returned_by = returned_by
        conversation = handoff.conversation
        contact = conversation.contact
        contact.force_human = False
        contact.save(update_fields=["force_human"])
        conversation.status = ConversationStatus.AI_HANDLING
        conversation.bot_silenced_until = None
        conversation.save(update_fields=["status", "bot_silenced_until"])
        # A case still waiting on the customer gets its follow-ups back (the handoff
        # cancelled them): it must not wait for ever, unflagged.
        resumed = resume_pending_for_conversation(conversation)
        audit_log_write(
            actor=actor,
            action="handoff.return_to_ai",
            resource=handoff,
            diff={"followups_resumed": resumed} if resumed else None,
        )
    return handoff


def conversation_take_over(*, conversation: Conversation, actor: Any) -> Handoff:
    """A person takes a conversation the AI is handling."""
    return perform_human_handoff(
        conversation=conversation,
        reason_code=HandoffReason.MANUAL,
        reason="Assumida pela equipe.",
        actor=actor,
    )
