"""Erasing a contact (LGPD, ``conversation.privacy.contact_erase``): the team's internal notes
about them go too. A note is written about the person (on their profile or beside one of
their conversations), so it is their personal data; registered with
``conversation.hooks.register_contact_eraser`` and run inside the erasure's transaction."""

from __future__ import annotations

from django.db import transaction

from conversation.models import Contact
from inbox.models import InternalNote


def erase_contact_notes(contact: Contact) -> int:
    """Delete the internal notes on ``contact`` and on their conversations; the rows."""
    with transaction.atomic():
        deleted, _ = InternalNote.objects.filter(contact=contact).delete()
        # A conversation's note names its contact too; this catches one whose contact field
        # was ever out of step with its conversation's.
        more, _ = InternalNote.objects.filter(conversation__contact=contact).delete()
    return deleted + more
