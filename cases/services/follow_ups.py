"""The follow-up turn's decision (§3, §10.4): ask the customer again, re-arm, flag the case
as unresponsive, or stand down."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from cases.models import (
    ActorKind,
    AttentionReason,
    Case,
    CaseEventKind,
    CaseFollowUp,
    CaseStatus,
    FollowUpStatus,
)
from cases.selectors import NOT_AN_ANSWER_KINDS, follow_up_template
from conversation.channels import get_adapter
from conversation.channels.base import service_window_open
from conversation.models import (
    Conversation,
    ConversationStatus,
    Direction,
    Message,
    SenderKind,
    Turn,
)
from conversation.outbox import outbound_enqueue

from ._records import _audit_system, _event
from .follow_up_schedule import _arm_follow_up, follow_up_max_attempts
from .lifecycle import _back_to_team, case_cancel
from .texts import FOLLOW_UP_NOT_SENT_NOTE, follow_up_text


@dataclass
class FollowUpResult:
    sent: list[Message] = field(default_factory=list)
    trace: dict[str, Any] = field(default_factory=dict)


def follow_up_fire(
    *, follow_up_id: str, conversation: Conversation, turn: Turn, now: datetime | None = None
) -> FollowUpResult:
    """The follow-up turn's decision (called under the conversation lock).

    * the case left ``awaiting_lead`` → nothing (cancelled);
    * the lead opted out or the conversation closed → the case is cancelled;
    * a human owns the conversation → nothing (cancelled);
    * the lead wrote since the check was armed → re-armed, no attempt spent;
    * ``N`` attempts already spent → back to the team's queue, flagged
      ``lead_unresponsive`` (event, reminders, notice);
    * else attempt ``n``: free text inside WhatsApp's 24-hour window; outside it the
      channel's approved ``follow_up`` template; without one nothing is sent and the
      case's timeline says so. The next check is armed either way.
    """
    now = now or timezone.now()
    result = FollowUpResult(trace={"follow_up_id": follow_up_id})
    follow_up = CaseFollowUp.objects.select_for_update(of=("self",)).filter(pk=follow_up_id).first()
    if follow_up is None or follow_up.status != FollowUpStatus.PENDING:
        result.trace["follow_up"] = "not_pending"
        return result
    case = Case.objects.select_for_update(of=("self",)).get(pk=follow_up.case_id)
    result.trace["case_id"] = str(case.pk)
    contact = conversation.contact

    def close(status: str, code: str, reason: str = "") -> FollowUpResult:
        follow_up.status, follow_up.fired_at = status, now
        follow_up.cancel_reason = reason[:40]
        follow_up.save(update_fields=["status", "fired_at", "cancel_reason", "template_name"])
        result.trace["follow_up"] = code
        _audit_system(case, "case.follow_up", {"follow_up_id": follow_up_id, "outcome": code})
        return result

    if case.status != CaseStatus.AWAITING_LEAD:
        return close(FollowUpStatus.CANCELLED, "case_not_awaiting_lead", "case_moved")
    if contact.opted_out_at is not None or conversation.status == ConversationStatus.CLOSED:
        reason = "opt_out" if contact.opted_out_at is not None else "closed"
        close(FollowUpStatus.CANCELLED, reason, reason)
        case_cancel(case=case, reason=reason)
        return result
    if conversation.is_human_owned(now):
        return close(FollowUpStatus.CANCELLED, "human_owned", "human_owned")
    if (
        conversation.last_inbound_at is not None
        and conversation.last_inbound_at > follow_up.created_at
        and not _only_reactions_since(conversation, follow_up.created_at)
    ):
        close(FollowUpStatus.ANSWERED, "lead_wrote")
        _arm_follow_up(case, now)
        return result
    if case.followup_attempts >= follow_up_max_attempts():
        # The N follow-ups are spent: the case goes to the team's queue with a reminder
        # and a notice (issue 12), flagged "cliente sem resposta".
        close(FollowUpStatus.FLAGGED, "lead_unresponsive")
        _back_to_team(
            case,
            trigger="lead_unresponsive",
            reason=AttentionReason.LEAD_UNRESPONSIVE,
            kind=CaseEventKind.LEAD_UNRESPONSIVE,
            metadata={"attempts": case.followup_attempts, "follow_up_id": follow_up_id},
        )
        return result

    attempt = case.followup_attempts + 1
    metadata: dict[str, Any] = {"follow_up_id": follow_up_id, "attempt": attempt}
    body = ""
    if _free_text_reaches(conversation, now):
        body = follow_up_text(case)
        result.sent.append(
            outbound_enqueue(
                conversation=conversation, body=body, sender_kind=SenderKind.SYSTEM, turn=turn
            )
        )
        status, metadata["delivery"] = FollowUpStatus.SENT, "text"
    else:
        template = follow_up_template(conversation)
        if template:
            body = case.lead_request[:500]
            result.sent.append(
                outbound_enqueue(
                    conversation=conversation,
                    body=body,
                    sender_kind=SenderKind.SYSTEM,
                    turn=turn,
                    template_name=template,
                )
            )
            follow_up.template_name = template
            status, metadata["delivery"] = FollowUpStatus.SENT, "template"
            metadata["template"] = template
        else:
            status, metadata["delivery"] = FollowUpStatus.NOT_SENT, "not_sent"
            metadata["reason"] = "outside_service_window_no_template"
            body = FOLLOW_UP_NOT_SENT_NOTE
    close(status, str(metadata["delivery"]))
    case.followup_attempts = attempt
    case.save(update_fields=["followup_attempts", "updated_at"])
    _event(
        case,
        CaseEventKind.LEAD_ASKED,
        actor_kind=ActorKind.SYSTEM,
        body=body,
        metadata=metadata,
    )
    _arm_follow_up(case, now)
    result.trace["attempt"] = attempt
    return result


def _only_reactions_since(conversation: Conversation, since: datetime) -> bool:
    """Whether all the customer sent since ``since`` answers nothing: a reaction (👍 on the
    question) or its removal is no answer, so it neither spares an attempt nor resets the
    clock."""
    kinds = set(
        Message.objects.filter(
            conversation=conversation, direction=Direction.INBOUND, created_at__gt=since
        )
        .order_by()
        .values_list("kind", flat=True)
        .distinct()
    )
    return bool(kinds) and kinds <= set(NOT_AN_ANSWER_KINDS)


def _free_text_reaches(conversation: Conversation, now: datetime) -> bool:
    """Whether free text may go to the customer now: within the 24-hour window on a channel
    that has one (Meta's Cloud API), always on one that has none (WAHA is WhatsApp Web)."""
    if not get_adapter(conversation.channel.provider).enforces_service_window:
        return True
    return service_window_open(conversation.customer_wrote_at, now)
