"""What one turn carries from its claim to its finish: ``TurnContext``.

The decide step runs with no transaction open (``pipeline``), so what a turn writes is not
written while it decides: every write of its own — the texts it sends, the handoff, the
runtime's state — is an *effect*, deferred with ``defer`` and applied in order by the
finish, in one short transaction that first checks the turn still owns its claim. The
texts are ``Reply`` values until then; ``messages`` holds the outbox rows once written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from conversation import model_calls
from conversation.agents import AgentConfig
from conversation.models import Conversation, Message, Turn
from conversation.outbox import outbound_enqueue


@dataclass(frozen=True)
class Reply:
    """A text the turn sends; it reaches the outbox when the turn finishes."""

    body: str
    sender_kind: str
    script_id: str = ""
    script_version: str = ""


@dataclass
class TurnContext:
    conversation: Conversation
    turn: Turn
    batch: list[Message]
    ledger: model_calls.Ledger
    agent: AgentConfig | None = None
    sent: list[Reply] = field(default_factory=list)
    handed_off: bool = False
    # Telemetry: ids and codes only, never the customer's text. Nothing decides on it.
    trace: dict[str, Any] = field(default_factory=dict)
    # Control state the before-send gates and the case tools decide on; ``finished_trace``
    # copies it into the trace at the end of the turn.
    vetoes: list[str] = field(default_factory=list)  # gate codes, one per vetoed text
    cases_opened: list[str] = field(default_factory=list)  # ids of the cases this turn opened
    # Internal lines the model gets in the last user message (open cases; a case reply's
    # re-entry block instead of customer text). Outside the cached prefix.
    notes: list[str] = field(default_factory=list)
    reentry: str = ""
    # The runtime's state summary/directive when it fell back: an extra text block on the
    # customer's message for the orchestrator's call only (never stored).
    runtime_note: str = ""
    # The turn's writes, in order, for the finish (see the module docstring).
    effects: list[Callable[[], object]] = field(default_factory=list)
    # The outbox rows of ``sent``, once the finish wrote them.
    messages: list[Message] = field(default_factory=list)
    # Set when the model is down and the agent retries later: the turn stays active and
    # the sweeper re-drives it then (``unavailable``).
    retry_at: datetime | None = None

    @property
    def ids(self) -> dict[str, str]:
        return {"conversation_id": str(self.conversation.pk), "turn_id": str(self.turn.pk)}

    def customer_text(self) -> str:
        return "\n".join(m.body for m in self.batch if m.body)

    def defer(self, effect: Callable[[], object]) -> None:
        self.effects.append(effect)

    def send(self, reply: Reply) -> Reply:
        """Send ``reply`` when the turn finishes (after the effects deferred before it)."""
        self.sent.append(reply)
        self.defer(lambda: self.messages.append(self._enqueue(reply)))
        return reply

    def apply_effects(self) -> None:
        """Run the deferred writes, in order (the finish's transaction)."""
        effects, self.effects = self.effects, []
        for effect in effects:
            effect()

    def finished_trace(self) -> dict[str, Any]:
        """The trace the turn stores: telemetry plus the control state (a key only when the
        turn has some, as the trace always had it)."""
        trace = dict(self.trace)
        if self.vetoes:
            trace["vetoes"] = list(self.vetoes)
        if self.cases_opened:
            trace["cases_opened"] = list(self.cases_opened)
        return trace

    def _enqueue(self, reply: Reply) -> Message:
        return outbound_enqueue(
            conversation=self.conversation,
            body=reply.body,
            sender_kind=reply.sender_kind,
            turn=self.turn,
            script_id=reply.script_id,
            script_version=reply.script_version,
        )


def new_context(
    conversation: Conversation, turn: Turn, batch: list[Message], trace: dict[str, Any]
) -> TurnContext:
    """A context with the turn's model-call ledger."""
    return TurnContext(
        conversation=conversation,
        turn=turn,
        batch=batch,
        ledger=model_calls.Ledger(
            organization_id=conversation.organization_id,
            conversation_id=conversation.pk,
            turn_id=turn.pk,
        ),
        trace=trace,
    )
