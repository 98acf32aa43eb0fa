"""What happens after a tool returns. Every status change goes through a hook."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from .mutations import (
    on_finalization_emitted,
    on_finalize_recommended,
    on_next_action_requested,
    on_turn_continued,
    on_workflow_paused,
)
from .state import (
    FINALIZATION_STATUSES,
    WORKFLOW_NORMALIZERS,
    ConversationState,
    FinalizationStatus,
    PendingWorkflowResume,
)

Transition = Literal["ask_next_action", "wait_workflow_input", "finalize", "continue"]


class FinalizationMachine:
    def after_tool_result(
        self,
        state: ConversationState,
        tool_result: Mapping[str, Any],
    ) -> Transition:
        # Order matters: a non-empty queue wins over a paused workflow (spec precedence);
        # the runtime then asks the paused step's question first (``pause_mid_queue``).
        if state.action_queue.current() is not None:
            on_next_action_requested(state)
            return "ask_next_action"
        if tool_result.get("aguardando_resposta") is True:
            self._pause(state, self._pending_workflow(state, tool_result))
            return "wait_workflow_input"
        if tool_result.get("recomenda_finalizacao") is True:
            on_finalize_recommended(state)
            return "finalize"
        self.continue_turn(state)
        return "continue"

    def continue_turn(self, state: ConversationState) -> None:
        """Nothing left to run or ask: the conversation goes on (status open). A paused
        workflow the customer called off goes with it (``on_turn_continued``)."""
        on_turn_continued(state)

    def pause_mid_queue(self, state: ConversationState, tool_result: Mapping[str, Any]) -> None:
        """A step paused with steps left (issue 11 item 6): its question comes first; the
        queue goes on after the customer answers it (the confirmation covered it all)."""
        self._pause(state, self._pending_workflow(state, tool_result))

    def ask_workflow_again(self, state: ConversationState) -> str:
        """The paused question again, as asked on this turn (its answer may have gone to
        someone else: DESIGN §10.1). Returns the question."""
        pending = state.pending_workflow
        if pending is None:
            raise ValueError("no paused workflow to ask about")
        self._pause(state, replace(pending, asked_turn_index=state.turn_index))
        return pending.question

    @staticmethod
    def _pause(state: ConversationState, pending: PendingWorkflowResume) -> None:
        on_workflow_paused(state, pending)

    def build_finalize_payload(self, status: str, summary: str) -> dict[str, Any]:
        if status not in FINALIZATION_STATUSES:
            raise ValueError(f"unknown finalization status: {status!r}")
        return {"status": status, "summary": summary}

    def mark_closed(self, state: ConversationState, reason: FinalizationStatus) -> None:
        on_finalization_emitted(state, reason)

    @staticmethod
    def _pending_workflow(
        state: ConversationState, result: Mapping[str, Any]
    ) -> PendingWorkflowResume:
        execution_id = result.get("execution_id")
        if not isinstance(execution_id, str) or not execution_id:
            raise ValueError("a paused workflow must return its execution_id")
        last = state.last_completed_action
        normalize = result.get("normalize", "free_text")
        allowed = result.get("allowed_values") or ()
        return PendingWorkflowResume(
            tool=last.tool if last is not None else "",
            subject=last.subject if last is not None else "",
            execution_id=execution_id,
            expected_input_key=str(result.get("expected_input_key", "")),
            allowed_values=tuple(str(v) for v in allowed),
            question=str(result.get("question", "")),
            normalize=normalize if normalize in WORKFLOW_NORMALIZERS else "free_text",
            asked_turn_index=state.turn_index,
        )
