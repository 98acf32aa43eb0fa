"""LGPD erasure of a contact's cases (registered with ``conversation.hooks`` by the app).

The case rows stay — the counts and the timeline's shape are the organization's — but
nothing the contact said, or was told, survives: title, summary, blocker, the request to
the customer and the conversation snapshot are blanked, and every event of those cases
has its body and metadata replaced. Events are append-only for the application; the
erasure's own transaction may rewrite them (``rls.erasure``), nothing else can.
Idempotent: a second run finds nothing left to blank.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from accounts import rls
from cases.models import Case, CaseEvent
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
    return int(blanked) + redacted
