"""The bookkeeping half of a ``ConversationRuntime`` turn: the signals a turn leaves in the
state (in-context, off-context, informative answers), the invoice snapshot's life cycle, and
finishing the turn (trace, persistence). A mixin so ``runtime.py`` keeps the policy flow.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from .intent_extractor import (
    ExtractedIntent,
)
from .mutations import (
    on_decision_traced,
    on_in_context_message,
    on_informative_answered,
    on_invoice_answer,
    on_invoice_snapshot_invalidated,
    on_invoice_snapshot_populated,
    on_off_context_detected,
)
from .request_reading import _NO_RESOLUTION, _Turn
from .result import RuntimeResult
from .state import (
    ConversationState,
    ResolvedAction,
    ToolKind,
    ToolOutcome,
)

logger = logging.getLogger(__name__)


class TurnBookkeeping:
    """Mixed into ``ConversationRuntime``; see that class for the attributes used here."""

    _resolver: Any
    _clock: Any
    _store: Any

    def _record_turn_signals(self, state: ConversationState, intent: ExtractedIntent) -> None:
        if intent.kind == "off_context":
            on_off_context_detected(state)
        elif intent.kind != "unknown" and state.off_context_count:
            # "in a row": any classified in-context turn resets; an unknown one says nothing.
            on_in_context_message(state)
        answers_informative = state.pending_confirmation is None and (
            state.informative_answer_delivered
        )
        if answers_informative and (intent.is_affirmation or intent.is_negation):
            on_invoice_answer(state, "SIM" if intent.is_affirmation else "NAO")

    def _informative_answered(self, state: ConversationState, tool: str, kind: ToolKind) -> None:
        action = ResolvedAction(
            tool=tool,
            subject="fatura" if kind is ToolKind.EXPLANATION else "base de conhecimento",
            tool_kind=kind,
            outcome=ToolOutcome.SUCCESS,
            result_summary={"success": True},
        )
        on_informative_answered(state, action)

    def _populate_invoice_snapshot_if_needed(self, state: ConversationState, turn: _Turn) -> None:
        invoice_detail = turn.context.get("invoice_detail")
        if not invoice_detail:
            return
        snapshot = self._resolver.build_snapshot(invoice_detail, state.msisdn)
        on_invoice_snapshot_populated(state, snapshot, state.msisdn, state.turn_index)

    def _invalidate_stale_snapshot(self, state: ConversationState, turn: _Turn) -> None:
        if not state.invoice_snapshot:
            return
        line_changed = state.invoice_snapshot_source_msisdn != state.msisdn
        cancelled = any(
            a.tool == "cancelar_vas_avulso" and a.outcome is ToolOutcome.SUCCESS
            for a in turn.executed
        )
        if line_changed or cancelled:
            on_invoice_snapshot_invalidated(state)

    def _finish(
        self,
        state: ConversationState,
        turn: _Turn,
        result: RuntimeResult,
        *,
        decision: str,
        rule: str,
    ) -> RuntimeResult:
        self._invalidate_stale_snapshot(state, turn)
        entry: dict[str, Any] = {
            "turn": state.turn_index,
            "at": self._clock.now().isoformat(),
            "intent": turn.intent.kind,
            "source": turn.intent.source,
            "decision": decision,
            "rule": rule,
            "handled": result.handled,
        }
        if result.fallback_reason:
            entry["reason"] = result.fallback_reason
        if turn.resolution is not _NO_RESOLUTION:
            entry["items"] = [i.canonical_name for i in turn.resolution.resolved]
            entry["ambiguous"] = len(turn.resolution.ambiguous)
            entry["not_found"] = len(turn.resolution.not_found)
        on_decision_traced(state, entry)
        self._store.save(turn.context, state)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "conversation runtime turn",
                extra={
                    "session_id": state.session_id,
                    "turn_index": state.turn_index,
                    "decision": decision,
                    "rule": rule,
                },
            )
        return replace(result, decision=decision, rule=rule, actions=tuple(turn.executed))
