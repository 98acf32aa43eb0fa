"""Explicit extension points of the conversation app.

Apps above ``conversation`` (cases) register here in their ``AppConfig.ready`` so that
conversation-level actions can reach their rows without ``conversation`` importing
them: when a contact opts out or a human takes a conversation over, every pending
scheduled contact (follow-ups) is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable

from conversation.models import Conversation

CancelPending = Callable[[Conversation, str], int]
_cancel_pending: list[CancelPending] = []


def register_cancel_pending(fn: CancelPending) -> None:
    if fn not in _cancel_pending:
        _cancel_pending.append(fn)


def cancel_pending_for_conversation(conversation: Conversation, reason: str) -> int:
    """Cancel scheduled follow-ups of ``conversation``; returns how many were cancelled."""
    return sum(fn(conversation, reason) for fn in _cancel_pending)
