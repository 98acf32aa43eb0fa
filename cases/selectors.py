"""Reads of the cases app: the inbox list, a case's detail, the organization's settings,
and what the services and the turns read before they act (the snapshot of a conversation,
whether a lead has an open case, the due follow-ups)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, F, QuerySet

from accounts.models import Membership
from cases.models import (
    OPEN_STATUSES,
    Case,
    CaseEvent,
    CaseEventKind,
    CaseFollowUp,
    CaseNotice,
    CaseNotificationSettings,
    CaseReminder,
    CaseStatus,
    FollowUpStatus,
    ReminderStatus,
)
from conversation.models import Conversation, Message

# The inbox filters ("tabs"): a key → the statuses it shows.
FILTERS: dict[str, tuple[str, ...]] = {
    "abertos": tuple(OPEN_STATUSES),
    "esperando-voce": (CaseStatus.AWAITING_HUMAN,),
    "esperando-cliente": (CaseStatus.AWAITING_LEAD,),
    "resolvidos": (CaseStatus.RESOLVED,),
    "escalados": (CaseStatus.ESCALATED,),
    "cancelados": (CaseStatus.CANCELLED,),
}
DEFAULT_FILTER = "abertos"
SNAPSHOT_MESSAGES = 10
FOLLOW_UP_TEMPLATE_PURPOSE = "follow_up"


def notification_settings_for(organization_id: uuid.UUID | Any) -> CaseNotificationSettings:
    """The organization's row, or an unsaved one with the defaults (on, 24 h, three)."""
    org_id = getattr(organization_id, "pk", organization_id)
    row = CaseNotificationSettings.objects.filter(organization_id=org_id).first()
    return row or CaseNotificationSettings(organization_id=org_id)


def case_list(membership: Membership, *, filter_key: str = DEFAULT_FILTER) -> QuerySet[Case]:
    """The inbox rows of one filter. One query per page (plus the paginator's COUNT):
    the customer and channel come joined; the fired-reminder count is a column of the
    current wait, computed in the same query."""
    statuses = FILTERS.get(filter_key, FILTERS[DEFAULT_FILTER])
    rows = Case.objects.filter(organization_id=membership.organization_id)
    if set(statuses) == set(OPEN_STATUSES):
        rows = rows.filter(open_flag=1)  # served in order by case_open_idx
    else:
        rows = rows.filter(status__in=statuses)
    rows = rows.select_related("lead", "conversation__channel").only(
        "id",
        "organization_id",
        "status",
        "title",
        "source",
        "lead_unresponsive",
        "waiting_since",
        "opened_at",
        "closed_at",
        "lead__name",
        "lead__phone",
        "conversation__id",
        "conversation__channel__name",
    )
    if all(s in OPEN_STATUSES for s in statuses):
        # Oldest wait first: the case that has waited longest is the next to answer.
        return rows.order_by("waiting_since", "id")
    return rows.order_by("-closed_at", "id")


def reminder_counts(case_ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    """Fired reminders of the current wait, per case (one query for a page)."""
    if not case_ids:
        return {}
    rows = (
        CaseReminder.objects.filter(
            case_id__in=case_ids, status=ReminderStatus.FIRED, case__status="awaiting_human"
        )
        .filter(wait_started_at=F("case__waiting_since"))
        .values("case_id")
        .annotate(n=Count("id"))
    )
    return {r["case_id"]: r["n"] for r in rows}


def filter_counts(membership: Membership) -> dict[str, int]:
    """How many cases each open filter holds (one aggregate query)."""
    # GROUP BY status over (organization, status, ...) is answered from the index alone.
    rows = (
        Case.objects.filter(organization_id=membership.organization_id, status__in=OPEN_STATUSES)
        .values("status")
        .annotate(n=Count("status"))
        .order_by()
    )
    by_status = {r["status"]: r["n"] for r in rows}
    human = by_status.get(CaseStatus.AWAITING_HUMAN, 0)
    lead = by_status.get(CaseStatus.AWAITING_LEAD, 0)
    return {"abertos": human + lead, "esperando-voce": human, "esperando-cliente": lead}


def awaiting_human_count(membership: Membership) -> int:
    return Case.objects.filter(
        organization_id=membership.organization_id, status=CaseStatus.AWAITING_HUMAN
    ).count()


@dataclass(frozen=True)
class CaseDetail:
    case: Case
    events: list[CaseEvent]
    reminders_fired: int
    reminders_total: int
    pending_follow_up_at: Any
    notices: list[CaseNotice]


def case_detail(case: Case) -> CaseDetail:
    events = list(
        CaseEvent.objects.filter(case=case).select_related("actor_user").order_by("created_at")
    )
    reminders = list(
        CaseReminder.objects.filter(case=case, wait_started_at=case.waiting_since).values_list(
            "status", flat=True
        )
    )
    follow_up = (
        case.follow_ups.filter(status="pending").order_by("due_at").values_list("due_at", flat=True)
    ).first()
    return CaseDetail(
        case=case,
        events=events,
        reminders_fired=sum(1 for s in reminders if s == ReminderStatus.FIRED),
        reminders_total=sum(1 for s in reminders if s != ReminderStatus.CANCELLED),
        pending_follow_up_at=follow_up,
        notices=list(case.notices.order_by("created_at")),
    )


def conversation_cases(membership: Membership, conversation_id: uuid.UUID) -> list[Case]:
    return list(
        Case.objects.filter(
            organization_id=membership.organization_id, conversation_id=conversation_id
        ).order_by("-opened_at")[:20]
    )


def open_cases_of_conversation(conversation_id: uuid.UUID) -> list[Case]:
    """The conversation's open cases, for the model's notes (oldest first)."""
    return list(
        Case.objects.filter(conversation_id=conversation_id, status__in=OPEN_STATUSES)
        .only("id", "status", "title", "lead_request")
        .order_by("opened_at")[:10]
    )


def last_event_of_kind(case: Case, kind: CaseEventKind) -> CaseEvent | None:
    return CaseEvent.objects.filter(case=case, kind=kind).order_by("-created_at").first()


# --- what the services and the turns read before they act --------------------------------


def build_context_snapshot(conversation: Conversation, *, turn_id: Any = None) -> dict[str, Any]:
    """What the team sees of the conversation when the case opened: from the real rows,
    never from the model's input."""
    rows = list(
        Message.objects.filter(conversation=conversation)
        .order_by("-created_at")
        .only("sender_kind", "body", "created_at")[:SNAPSHOT_MESSAGES]
    )
    contact = conversation.contact
    return {
        "conversation_id": str(conversation.pk),
        "channel_id": str(conversation.channel_id),
        "contact": {"id": str(contact.pk), "name": contact.name, "phone": contact.phone},
        "turn_id": str(turn_id) if turn_id else None,
        "messages": [
            {"from": m.sender_kind, "body": m.body[:1000], "at": m.created_at.isoformat()}
            for m in reversed(rows)
        ],
    }


def has_open_case_in_conversation(conversation: Conversation) -> bool:
    """Whether this conversation has a case waiting (for the team or for the customer).

    Only a case of the same conversation covers a promise (DESIGN §10.3): an open case of
    the same customer on another channel or about another matter does not."""
    return Case.objects.filter(
        organization_id=conversation.organization_id,
        conversation_id=conversation.pk,
        status__in=OPEN_STATUSES,
    ).exists()


def is_group(conversation: Conversation) -> bool:
    return conversation.contact.phone.endswith("@g.us")


def due_follow_up_ids(organization_id: uuid.UUID, now: datetime, limit: int = 500) -> list[str]:
    rows = CaseFollowUp.objects.filter(
        organization_id=organization_id, status=FollowUpStatus.PENDING, due_at__lte=now
    )
    return [str(pk) for pk in rows.order_by("due_at").values_list("pk", flat=True)[:limit]]


def follow_up_conversation_id(follow_up_id: str) -> uuid.UUID | None:
    """The conversation of a still pending follow-up (the turn locks it), or None."""
    return (
        CaseFollowUp.objects.filter(pk=follow_up_id, status=FollowUpStatus.PENDING)
        .values_list("conversation_id", flat=True)
        .first()
    )


def follow_up_template(conversation: Conversation) -> str:
    """The channel's approved template for follow-ups (``purpose == "follow_up"``)."""
    return conversation.channel.template_for(FOLLOW_UP_TEMPLATE_PURPOSE)
