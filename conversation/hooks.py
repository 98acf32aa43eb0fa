"""Explicit extension points of the conversation app.

Apps above ``conversation`` (cases) register here in their ``AppConfig.ready`` so that
conversation-level actions can reach their rows without ``conversation`` importing
them: when a contact opts out or a human takes a conversation over, every pending
scheduled contact (follow-ups) is cancelled, and re-armed when the conversation goes back
to the AI; when a contact's personal data is erased (LGPD), each registered eraser erases it
from its own rows; when the retention erases old message text, each registered sweeper
erases the copies of that text its own rows hold.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from accounts.hooks import Hook
from conversation.models import Contact, Conversation

# (the conversation, why) -> follow-ups cancelled
_cancel_pending: Hook[[Conversation, str]] = Hook()
register_cancel_pending = _cancel_pending.register

# A person gave the conversation back to the AI: what a handoff paused may resume.
_resume_pending: Hook[[Conversation]] = Hook()
register_resume_pending = _resume_pending.register

# LGPD erasure (conversation.privacy): an app above erases the contact's personal data in
# its own rows (inside the erasure's transaction) and returns how many rows it touched.
_contact_erasers: Hook[[Contact]] = Hook()
register_contact_eraser = _contact_erasers.register

# LGPD retention (conversation.privacy): an app above erases, in its own rows, the copies of
# message text older than the cutoff (inside the retention's transaction); rows touched.
_retention_sweepers: Hook[[uuid.UUID, datetime]] = Hook()
register_retention_sweeper = _retention_sweepers.register


def cancel_pending_for_conversation(conversation: Conversation, reason: str) -> int:
    """Cancel scheduled follow-ups of ``conversation``; returns how many were cancelled."""
    return _cancel_pending.run(conversation, reason)


def resume_pending_for_conversation(conversation: Conversation) -> int:
    """Re-arm what the handoff cancelled (the cases' follow-ups); returns how many."""
    return _resume_pending.run(conversation)


def erase_contact_elsewhere(contact: Contact) -> int:
    """Run every registered eraser for ``contact``; returns the rows they touched."""
    return _contact_erasers.run(contact)


def retain_copies_elsewhere(organization_id: uuid.UUID, cutoff: datetime) -> int:
    """Run every registered retention sweeper; returns the rows they touched."""
    return _retention_sweepers.run(organization_id, cutoff)
