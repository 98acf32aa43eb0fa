"""Explicit extension points of the conversation app.

Apps above ``conversation`` (cases) register here in their ``AppConfig.ready`` so that
conversation-level actions can reach their rows without ``conversation`` importing
them: when a contact opts out or a human takes a conversation over, every pending
scheduled contact (follow-ups) is cancelled, and re-armed when the conversation goes back
to the AI; when a contact's personal data is erased (LGPD), each registered eraser erases it
from its own rows.
"""

from __future__ import annotations

from collections.abc import Callable

from conversation.models import Contact, Conversation

CancelPending = Callable[[Conversation, str], int]
_cancel_pending: list[CancelPending] = []
# LGPD erasure (conversation.privacy): an app above erases the contact's personal data in
# its own rows (inside the erasure's transaction) and returns how many rows it touched.
ContactEraser = Callable[[Contact], int]
_contact_erasers: list[ContactEraser] = []


def register_cancel_pending(fn: CancelPending) -> None:
    if fn not in _cancel_pending:
        _cancel_pending.append(fn)


def cancel_pending_for_conversation(conversation: Conversation, reason: str) -> int:
    """Cancel scheduled follow-ups of ``conversation``; returns how many were cancelled."""
    return sum(fn(conversation, reason) for fn in _cancel_pending)


# A person gave the conversation back to the AI: what a handoff paused may resume.
ResumePending = Callable[[Conversation], int]
_resume_pending: list[ResumePending] = []


def register_resume_pending(fn: ResumePending) -> None:
    if fn not in _resume_pending:
        _resume_pending.append(fn)


def resume_pending_for_conversation(conversation: Conversation) -> int:
    """Re-arm what the handoff cancelled (the cases' follow-ups); returns how many."""
    return sum(fn(conversation) for fn in _resume_pending)


def register_contact_eraser(fn: ContactEraser) -> None:
    if fn not in _contact_erasers:
        _contact_erasers.append(fn)


def erase_contact_elsewhere(contact: Contact) -> int:
    """Run every registered eraser for ``contact``; returns the rows they touched."""
    return sum(fn(contact) for fn in _contact_erasers)
