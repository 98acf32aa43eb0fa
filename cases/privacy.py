"""LGPD erasure of a contact's cases (registered with ``conversation.hooks`` by the app).

The case rows stay — the counts and the timeline's shape are the organization's — but
nothing the contact said, or was told, survives: title, summary, blocker, the request to
the customer and the conversation snapshot are blanked, and every event of those cases
has its body and metadata replaced; a member's answer sent from WhatsApp is blanked in the
member's conversation too. Events are append-only for the application; the
erasure's own transaction may rewrite them (``rls.erasure``), nothing else can.
Its open cases end (cancelled, their reminders too): the conversation closes with the
erasure, and a case left open would remind the team of a customer who is gone. Counted in
the erasure's own audit row (no per-case row: nothing of the case may be said).
Idempotent: a second run finds nothing left to blank.

Retention (``retain_case_copies``, registered with ``conversation.hooks``): the words of a
message older than the organization's retention go from the case too — the conversation
snapshot's messages of that age, and the timeline events that quote a message (the
customer's answer, what the AI asked them) written before the cutoff. What the team and
the AI wrote about the case (title, summary, the team's answers) is the case's own record
and stays, as the case rows do.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts import rls
from cases.models import (
    OPEN_STATUSES,
    ActorKind,
    Case,
    CaseEvent,
    CaseEventKind,
    CaseReminder,
    CaseStatus,
    ReminderStatus,
    StaffNumber,
)
from cases.phones import phone_variants
from cases.services.texts import FOLLOW_UP_NOT_SENT_NOTE
from conversation.models import Contact, Conversation, Direction, Message
from conversation.privacy import ERASED_TEXT, RETAINED_TEXT

CASE_ERASED_TITLE = "[caso apagado a pedido do titular]"
# ``trace["guard"]`` of a turn that answered a case from a staff number (the turn package).
STAFF_ANSWER_GUARD = "staff_case_answer"


def erase_contact_cases(contact: Contact) -> int:
    """Blank the contact's cases and their timelines; the rows touched."""
    cases = Case.objects.filter(Q(lead=contact) | Q(conversation__contact=contact))
    with transaction.atomic(), rls.erasure():
        answers = _erase_staff_answers(contact, cases)
        blanked = cases.exclude(title=CASE_ERASED_TITLE).update(
            title=CASE_ERASED_TITLE,
            summary=ERASED_TEXT,
            blocker=ERASED_TEXT,
            lead_request="",
            context_snapshot={},
        )
        events = CaseEvent.objects.filter(case__in=cases).exclude(body=ERASED_TEXT, metadata={})
        redacted = events.erase(body=ERASED_TEXT, metadata={})
        CaseReminder.objects.filter(case__in=cases, status=ReminderStatus.PENDING).update(
            status=ReminderStatus.CANCELLED
        )
        ended = cases.filter(status__in=OPEN_STATUSES).update(
            status=CaseStatus.CANCELLED, closed_at=timezone.now()
        )
    return int(blanked) + redacted + ended + answers


def _erase_staff_answers(contact: Contact, cases: QuerySet[Case]) -> int:
    """Blank the messages in which members answered these cases from WhatsApp
    (``cases.staff_replies``): the answer's text is in the member's own conversation too,
    not only on the timeline. Found by the answer's text, among the inbound messages of a
    staff conversation (a staff number's, or one whose turn answered a case) written
    between the case's opening and the answer. Run before the events are blanked."""
    staff_forms = {
        form
        for phone in StaffNumber.objects.filter(
            organization_id=contact.organization_id
        ).values_list("phone", flat=True)
        for form in phone_variants(phone)
    }
    staff_conversations = Conversation.objects.filter(
        Q(contact__phone__in=staff_forms) | Q(turns__trace__guard=STAFF_ANSWER_GUARD),
        organization_id=contact.organization_id,
    ).exclude(contact=contact)
    match = Q(pk__in=[])
    answers = CaseEvent.objects.filter(
        case__in=cases, kind=CaseEventKind.HUMAN_REPLIED, actor_kind=ActorKind.HUMAN
    ).exclude(body__in=("", ERASED_TEXT))
    for body, opened_at, answered_at in answers.values_list(
        "body", "case__created_at", "created_at"
    ):
        # A command's text may span the lines of several messages of one burst.
        for part in {body.strip(), *(line.strip() for line in body.splitlines())} - {""}:
            match |= Q(body__contains=part, created_at__gte=opened_at, created_at__lte=answered_at)
    return Message.objects.filter(
        match,
        organization_id=contact.organization_id,
        direction=Direction.INBOUND,
        conversation__in=staff_conversations,
    ).update(body=ERASED_TEXT)


# Timeline events whose body is a message's text: the customer's answer (relayed by the AI)
# and the message(s) the AI sent to ask them.
QUOTING_KINDS = (CaseEventKind.LEAD_PROVIDED, CaseEventKind.LEAD_ASKED)


def retain_case_copies(organization_id: uuid.UUID, cutoff: datetime) -> int:
    """Erase the case copies of message text older than ``cutoff``; the rows touched."""
    with transaction.atomic(), rls.erasure():
        quotes = (
            CaseEvent.objects.filter(
                organization_id=organization_id, kind__in=QUOTING_KINDS, created_at__lt=cutoff
            )
            # A system note (no follow-up could go out) quotes no message.
            .exclude(body__in=("", RETAINED_TEXT, ERASED_TEXT, FOLLOW_UP_NOT_SENT_NOTE))
            .erase(body=RETAINED_TEXT)
        )
        snapshots = 0
        cases = Case.objects.filter(organization_id=organization_id)
        rows = cases.exclude(context_snapshot={}).values_list("pk", "context_snapshot")
        for pk, snapshot in rows.iterator(chunk_size=500):
            retained = _snapshot_retained(snapshot, cutoff)
            if retained is not None:
                # ``update``: the case's ``updated_at`` (the lists' order) does not move.
                cases.filter(pk=pk).update(context_snapshot=retained)
                snapshots += 1
    return quotes + snapshots


def _snapshot_retained(snapshot: Any, cutoff: datetime) -> dict[str, Any] | None:
    """``snapshot`` with the text of its messages older than ``cutoff`` retained; None when
    nothing in it changes."""
    if not isinstance(snapshot, dict) or not isinstance(snapshot.get("messages"), list):
        return None
    changed = False
    messages = []
    for entry in snapshot["messages"]:
        if (
            isinstance(entry, dict)
            and entry.get("body") not in ("", None, RETAINED_TEXT, ERASED_TEXT)
            and _before(entry.get("at"), cutoff)
        ):
            entry = {**entry, "body": RETAINED_TEXT}
            changed = True
        messages.append(entry)
    return {**snapshot, "messages": messages} if changed else None


def _before(at: Any, cutoff: datetime) -> bool:
    """Whether the snapshot's ISO timestamp ``at`` is before ``cutoff``; an entry without a
    readable time is treated as old (its text goes rather than outliving the retention)."""
    try:
        when = datetime.fromisoformat(str(at))
    except ValueError:
        return True
    if timezone.is_naive(when):
        when = when.replace(tzinfo=UTC)
    return when < cutoff
