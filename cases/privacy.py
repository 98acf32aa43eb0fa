"""LGPD erasure of a contact's cases (registered with ``conversation.hooks`` by the app).

The case rows stay — the counts and the timeline's shape are the organization's — but
nothing the contact said, or was told, survives: title, summary, blocker, the request to
the customer and the conversation snapshot are blanked, and every event of those cases
has its body and metadata replaced. Events are append-only for the application; the
erasure's own transaction may rewrite them (``rls.erasure``), nothing else can.
Its open cases end (cancelled, their reminders too): the conversation closes with the
erasure, and a case left open would remind the team of a customer who is gone. Counted in
the erasure's own audit row (no per-case row: nothing of the case may be said).
Idempotent: a second run finds nothing left to blank.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts import rls
from cases.models import (
    OPEN_STATUSES,
    Case,
    CaseEvent,
    CaseReminder,
    CaseStatus,
    ReminderStatus,
)
from conversation.models import Contact
from conversation.privacy import ERASED_TEXT

CASE_ERASED_TITLE = "[caso apagado a pedido do titular]"


def erase_contact_cases(contact: Contact) -> int:
    """Blank the contact's cases and their timelines; the rows touched."""
    cases = Case.objects.filter(Q(lead=contact) | Q(conversation__contact=contact))
    with transaction.atomic(), rls.erasure():
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
    return int(blanked) + redacted + ended
