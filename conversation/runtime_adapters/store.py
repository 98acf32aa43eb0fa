"""The runtime's state between turns, kept on ``Conversation.runtime_state``.

Layout of the JSON field (one key per mode, so a shadow run never steers a live one and
switching an agent from shadow to on starts the live dialogue fresh)::

    {"live": <serialize_state(...)>, "shadow": <serialize_state(...)>}

``load`` restores once per turn; a state that does not restore (malformed, unknown
version, another layout) is replaced by a fresh one and the turn goes on. A dialogue the
runtime closed (status ``closed``) starts afresh on the next message. ``save`` only keeps
the state in memory: ``persist`` writes it (one UPDATE), so the turn decides whether the
turn's changes stand (a reply vetoed before sending does not advance the dialogue).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from conversation.models import Conversation
from conversation.runtime import (
    SCHEMA_VERSION,
    Channel,
    ConversationState,
    deserialize_state,
    serialize_state,
)
from conversation.runtime.state import ConversationStatus

logger = logging.getLogger(__name__)

StoreKey = Literal["live", "shadow"]
StateOrigin = Literal["new", "restored", "migrated", "reset", "reopened"]


class ConversationFieldStore:
    """``ConversationStateStore`` over one conversation row (one session per conversation)."""

    def __init__(
        self,
        conversation: Conversation,
        *,
        key: StoreKey = "live",
        channel: Channel = Channel.TEXT,
    ) -> None:
        self._conversation = conversation
        self._key = key
        self._channel = channel
        self._state: ConversationState | None = None
        self.origin: StateOrigin = "new"

    @property
    def session_id(self) -> str:
        return str(self._conversation.pk)

    def load(self, context: Mapping[str, Any]) -> ConversationState:
        if self._state is None:
            self._state = self._restore()
        return self._state

    def save(self, context: Mapping[str, Any], state: ConversationState) -> None:
        self._state = state

    def persist(self) -> None:
        """Write the state to the conversation row (one UPDATE)."""
        if self._state is None:
            return
        data = serialize_state(self._state)  # the runtime bounds its own decision trace
        current = self._conversation.runtime_state
        envelope = dict(current) if isinstance(current, dict) and _is_envelope(current) else {}
        envelope[self._key] = data
        self._conversation.runtime_state = envelope
        self._conversation.save(update_fields=["runtime_state"])

    def _restore(self) -> ConversationState:
        raw = self._conversation.runtime_state
        stored = raw.get(self._key) if isinstance(raw, dict) and _is_envelope(raw) else raw
        if stored is None:
            return ConversationState(session_id=self.session_id, channel=self._channel)
        # A dialogue started afresh keeps counting the conversation's turns: confirmations
        # and the action ids they stamp are named by the turn, and an action of a new
        # dialogue must never carry the idempotency key of an older one (billing_http).
        turns = stored.get("turn_index") if isinstance(stored, dict) else None
        fresh = ConversationState(
            session_id=self.session_id,
            channel=self._channel,
            turn_index=turns if type(turns) is int and turns > 0 else 0,
        )
        try:
            if not isinstance(stored, dict):
                raise ValueError("the stored runtime state is not an object")
            state = deserialize_state(stored)
            if state.session_id != self.session_id:
                raise ValueError("the stored runtime state belongs to another session")
        except Exception:
            # Never let a bad state break the turn: start over, say so in the trace.
            logger.warning(
                "runtime state reset",
                extra={"conversation_id": self.session_id, "key": self._key},
                exc_info=True,
            )
            self.origin = "reset"
            return fresh
        if state.status is ConversationStatus.CLOSED:
            self.origin = "reopened"
            return fresh
        # An older version migrates (or resets, keeping the session) inside the runtime.
        self.origin = "restored" if stored.get("schema_version") == SCHEMA_VERSION else "migrated"
        if state.turn_index < fresh.turn_index:
            # An unknown version resets to a new state: the turn counter still goes on.
            return replace(state, turn_index=fresh.turn_index)
        return state


def _is_envelope(raw: dict[str, Any]) -> bool:
    return set(raw) <= {"live", "shadow"}
