"""Where the runtime keeps its state between turns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .state import Channel, ConversationState


class ConversationStateStore(Protocol):
    """Where the runtime keeps state between turns; ``context`` carries ``session_id``."""

    def load(self, context: Mapping[str, Any]) -> ConversationState: ...

    def save(self, context: Mapping[str, Any], state: ConversationState) -> None: ...


class InMemoryStateStore:
    def __init__(self, *, channel: Channel = Channel.VOICE) -> None:
        self._states: dict[str, ConversationState] = {}
        self._channel = channel

    def load(self, context: Mapping[str, Any]) -> ConversationState:
        session_id = str(context.get("session_id", ""))
        state = self._states.get(session_id)
        if state is None:
            state = ConversationState(session_id=session_id, channel=self._channel)
            self._states[session_id] = state
        return state

    def save(self, context: Mapping[str, Any], state: ConversationState) -> None:
        self._states[str(context.get("session_id", ""))] = state
