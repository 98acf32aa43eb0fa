"""Data protection (LGPD) for the routers: what erasing a contact does here.

A suggestion (``RouterSuggestion``) is a customer's message offered for the router to learn,
with the PII the router can spot stripped, still tied to its conversation. Erasing the
contact deletes the suggestions taken from their conversations, pending or decided: a pending
one must never be offered for learning again, and a decided one has done its work. A phrase
an admin already accepted is the router's own labelled phrase now (a copy, tied to no
conversation): it stays, as the admin's training data.
"""

from __future__ import annotations

from django.db import transaction

from conversation.models import Contact
from routers.models import RouterSuggestion


def erase_contact_suggestions(contact: Contact) -> int:
    """Delete the router suggestions taken from ``contact``'s conversations; the rows."""
    with transaction.atomic():
        deleted, _ = RouterSuggestion.objects.filter(conversation__contact=contact).delete()
    return deleted
