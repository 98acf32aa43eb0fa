"""Reads of the cases app: the inbox list, a case's detail, the organization's settings,
and what the services and the turns read before they act (the snapshot of a conversation,
whether a lead has an open case, the due follow-ups)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.db.models import Count, F, QuerySet
from django.utils.translation import gettext_lazy as _

from accounts.db.compiled import CompiledQuery
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
    HumanAction,
    ReminderStatus,
    StaffNumber,
)
from cases.phones import phone_variants
from conversation.models import (
    Conversation,
    Direction,
    Message,
    MessageStatus,
    SenderKind,
    TriggerKind,
    Turn,
    TurnStatus,
)

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
# Whose cases ("Minhas / Sem responsável / Todas"): a key → how it filters.
ASSIGNEE_FILTERS = ("todas", "minhas", "sem-responsavel")
DEFAULT_ASSIGNEE_FILTER = "todas"
SNAPSHOT_MESSAGES = 10
FOLLOW_UP_TEMPLATE_PURPOSE = "follow_up"


def notification_settings_for(organization_id: uuid.UUID | Any) -> CaseNotificationSettings:
    """The organization's row, or an unsaved one with the defaults (on, 24 h, three)."""
    org_id = getattr(organization_id, "pk", organization_id)
    row = CaseNotificationSettings.objects.filter(organization_id=org_id).first()
    return row or CaseNotificationSettings(organization_id=org_id)


def case_list(
    membership: Membership,
    *,
    filter_key: str = DEFAULT_FILTER,
    assignee_key: str = DEFAULT_ASSIGNEE_FILTER,
) -> QuerySet[Case]:
    """The inbox rows of one filter. One query per page (plus the paginator's COUNT):
    the customer, channel and assignee come joined."""
    statuses = FILTERS.get(filter_key, FILTERS[DEFAULT_FILTER])
    rows = Case.objects.filter(organization_id=membership.organization_id)
    if set(statuses) == set(OPEN_STATUSES):
        rows = rows.filter(open_flag=1)  # served in order by case_open_idx
    else:
        rows = rows.filter(status__in=statuses)
    if assignee_key == "minhas":
        rows = rows.filter(assigned_to_id=membership.user_id)
    elif assignee_key == "sem-responsavel":
        rows = rows.filter(assigned_to__isnull=True)
    rows = rows.select_related("lead", "conversation__channel", "assigned_to").only(
        "id",
        "organization_id",
        "status",
        "title",
        "source",
        "lead_unresponsive",
        "attention",
        "followup_attempts",
        "waiting_since",
        "opened_at",
        "closed_at",
        "lead__id",
        "lead__name",
        "lead__phone",
        "conversation__id",
        "conversation__channel__name",
        "assigned_to__id",
        "assigned_to__username",
        "assigned_to__first_name",
        "assigned_to__last_name",
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


class RelayState(StrEnum):
    """Whether the customer got the team's answer (the relay turn and its messages)."""

    PENDING = "pending"  # the turn has not run yet, or waits to retry the model
    QUEUED = "queued"  # written, in the outbox
    SENT = "sent"
    DELIVERED = "delivered"
    NOT_DELIVERED = "not_delivered"  # the turn ended without an AI message, or it failed


RELAY_LABELS = {
    RelayState.PENDING: _("A IA ainda não repassou a sua resposta ao cliente (tentando)."),
    RelayState.QUEUED: _("A resposta da IA ao cliente está na fila de envio."),
    RelayState.SENT: _("A IA repassou a sua resposta; o WhatsApp ainda não confirmou a entrega."),
    RelayState.DELIVERED: _("O cliente recebeu a resposta da IA."),
    RelayState.NOT_DELIVERED: _(
        "O cliente NÃO recebeu a sua resposta: a IA não conseguiu enviá-la. "
        "Fale com o cliente pela conversa."
    ),
}
_DELIVERED = {MessageStatus.DELIVERED, MessageStatus.READ}
_FAILED = {MessageStatus.FAILED, MessageStatus.REFUSED}


@dataclass(frozen=True)
class RelayStatus:
    state: RelayState
    bodies: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return str(RELAY_LABELS[self.state])

    @property
    def ok(self) -> bool:
        return self.state in (RelayState.SENT, RelayState.DELIVERED)


def relay_status(event: CaseEvent) -> RelayStatus:
    """What became of the relay of one ``human_replied`` event (two queries)."""
    turn = (
        Turn.objects.filter(
            organization_id=event.organization_id,
            trigger_kind=TriggerKind.CASE_REPLY,
            trigger_key=str(event.pk),
        )
        .only("id", "status")
        .first()
    )
    if turn is None or turn.status in (TurnStatus.RUNNING, TurnStatus.RETRY):
        return RelayStatus(RelayState.PENDING)
    sent = list(
        Message.objects.filter(
            turn_id=turn.pk, direction=Direction.OUTBOUND, sender_kind=SenderKind.AI
        )
        .order_by("created_at")
        .values_list("status", "body")
    )
    if not sent:
        return RelayStatus(RelayState.NOT_DELIVERED)
    statuses = {status for status, _body in sent}
    bodies = tuple(body for _status, body in sent)
    if statuses & _FAILED:
        return RelayStatus(RelayState.NOT_DELIVERED, bodies)
    if statuses <= _DELIVERED:
        return RelayStatus(RelayState.DELIVERED, bodies)
    if MessageStatus.SENT in statuses and not statuses - _DELIVERED - {MessageStatus.SENT}:
        return RelayStatus(RelayState.SENT, bodies)
    return RelayStatus(RelayState.QUEUED, bodies)


# The customer's lines that answer nothing: a reaction (or its removal) to one of our
# messages. The turn already gives them no reply (``conversation.turns.guards.NO_ASK_KINDS``,
# kept a subset of this by a test); a case waiting on the customer is not answered by them.
NOT_AN_ANSWER_KINDS = ("reaction",)


def customer_answers(conversation_id: Any) -> QuerySet[Message]:
    """The customer's lines of the conversation that may answer a question (``conversation_id``
    may be an ``OuterRef``); the caller bounds them in time."""
    return Message.objects.filter(
        conversation_id=conversation_id, direction=Direction.INBOUND
    ).exclude(kind__in=NOT_AN_ANSWER_KINDS)


def customer_lines_since(conversation_id: uuid.UUID, since: datetime, limit: int = 10) -> list[str]:
    """The customer's answering lines in the conversation after ``since`` (oldest first)."""
    rows = (
        customer_answers(conversation_id)
        .filter(created_at__gt=since)
        .order_by("created_at")
        .values_list("body", flat=True)[:limit]
    )
    return [body[:1000] for body in rows]


@dataclass(frozen=True)
class CaseDetail:
    case: Case
    events: list[CaseEvent]
    reminders_fired: int
    reminders_total: int
    pending_follow_up_at: Any
    notices: list[CaseNotice]
    # The latest relayed answer of the team and what became of it (None: nothing relayed).
    relay: RelayStatus | None = None


def case_events(case: Case) -> list[CaseEvent]:
    """The case's timeline, oldest first (one query, the actor joined)."""
    return list(
        CaseEvent.objects.filter(case=case).select_related("actor_user").order_by("created_at")
    )


def case_detail(case: Case) -> CaseDetail:
    events = case_events(case)
    reminders = list(
        CaseReminder.objects.filter(case=case, wait_started_at=case.waiting_since).values_list(
            "status", flat=True
        )
    )
    follow_up = (
        case.follow_ups.filter(status="pending").order_by("due_at").values_list("due_at", flat=True)
    ).first()
    relayed = [
        e
        for e in events
        if e.kind == CaseEventKind.HUMAN_REPLIED
        and e.human_action in (HumanAction.RESOLVED, HumanAction.NEED_LEAD_INFO)
    ]
    return CaseDetail(
        case=case,
        relay=relay_status(relayed[-1]) if relayed else None,
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


def _open_cases_query(conversation_id: uuid.UUID) -> QuerySet[Case]:
    return (
        Case.objects.filter(conversation_id=conversation_id, status__in=OPEN_STATUSES)
        .only("id", "status", "title", "lead_request")
        .order_by("opened_at")[:10]
    )


# Every turn reads it: compiled once per thread (accounts.db.compiled).
_OPEN_CASES = CompiledQuery(_open_cases_query, (uuid.UUID(int=1),))


def open_cases_of_conversation(conversation_id: uuid.UUID) -> list[Case]:
    """The conversation's open cases, for the model's notes (oldest first)."""
    return _OPEN_CASES.all(conversation_id)


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


# --- staff numbers (answering cases from WhatsApp) ---------------------------------------

# ``Organization.settings`` key holding a copy of the organization's staff numbers: the turn
# loads the organization with the conversation, so asking "is this a staff number?" costs
# every customer turn no query. ``StaffNumber`` stays the source of truth (the lookup that
# decides reads it); ``services.staff_number_set`` keeps the copy.
STAFF_PHONES_SETTING = "case_staff_phones"


def staff_phones(organization: Any) -> frozenset[str]:
    """The organization's staff numbers (from the loaded organization row), each in every
    form WhatsApp may give it (``cases.phones``: a Brazilian mobile with and without its 9)."""
    settings_ = getattr(organization, "settings", None) or {}
    return frozenset(
        form for p in settings_.get(STAFF_PHONES_SETTING, ()) for form in phone_variants(str(p))
    )


def staff_number_of(organization_id: uuid.UUID, phone: str) -> StaffNumber | None:
    """The staff number that ``phone`` is in this organization (in either form of a Brazilian
    mobile), with its member, or None. The number as registered wins: a second member can no
    longer register the other form (``services.staff_number_set``), but rows from before may."""
    rows = list(
        StaffNumber.objects.filter(
            organization_id=organization_id, phone__in=sorted(phone_variants(phone))
        ).select_related("membership__user")
    )
    return next((r for r in rows if r.phone == phone), rows[0] if rows else None)


def staff_number_owner(organization_id: uuid.UUID, phone: str) -> uuid.UUID | None:
    """The membership whose staff number ``phone`` is in this organization, or None."""
    row = staff_number_of(organization_id, phone)
    return row.membership_id if row else None
