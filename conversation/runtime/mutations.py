"""The named hooks: the only code that writes ``ConversationState``.

Contract (enforced by tests/runtime/test_governance.py):
- each hook takes ``state`` first and mutates it in place;
- each hook is called from exactly one place in the package;
- hooks never call other hooks (the caller composes) and never log;
- ``state.status`` is written nowhere else;
- each emits the span ``conversation.hook.<name>`` with the state's diff — through the
  external decorator ``spans.hook_span``, as the spec asks, not from its own body.

The first fifteen are the spec's catalogue; the last four come from its as-built notes
(invoice snapshot lifecycle, active line, decision trace).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .spans import hook_span
from .state import (
    DECISION_TRACE_LIMIT,
    ActionQueue,
    ActionStep,
    ConversationState,
    ConversationStatus,
    InvoiceAnswer,
    PendingConfirmation,
    PendingWorkflowResume,
    ResolvedAction,
    ResolvedInvoiceItem,
    ToolOutcome,
)

if TYPE_CHECKING:
    from .intent_extractor import ExtractedIntent


# --- turn cycle -------------------------------------------------------------------------


@hook_span
def on_turn_started(state: ConversationState, intent: ExtractedIntent) -> None:
    state.turn_index += 1
    state.client_requested_end = intent.kind == "human_or_end"
    # A message after the conversation closed reopens it: the customer is talking again.
    if state.status is ConversationStatus.CLOSED:
        state.status = ConversationStatus.OPEN


# --- confirmation -----------------------------------------------------------------------


@hook_span
def on_confirmation_requested(state: ConversationState, confirmation: PendingConfirmation) -> None:
    state.pending_confirmation = confirmation
    state.status = ConversationStatus.AWAITING_CONFIRMATION


@hook_span
def on_confirmation_consumed(state: ConversationState, queue: ActionQueue) -> None:
    state.action_queue = queue
    state.pending_confirmation = None
    state.status = ConversationStatus.EXECUTING_ACTION


# --- actions ----------------------------------------------------------------------------


@hook_span
def on_action_started(state: ConversationState, step: ActionStep) -> None:
    # Observability only: the decorator around hooks sees the step; no mutation.
    del state, step


@hook_span
def on_action_completed(state: ConversationState, action: ResolvedAction) -> None:
    state.last_completed_action = action
    # The latest answer is now an action: a later "sim" no longer closes as "resolvido".
    state.informative_answer_delivered = False
    # A failed step stays current so a later confirmation can retry it; a resumed workflow's
    # step left the queue when it paused (a second advance would skip the next step).
    queue = state.action_queue
    resumed = bool(action.result_summary.get("resumed"))
    if action.outcome is not ToolOutcome.FAILURE:
        if not resumed:
            queue.advance()
    elif resumed and queue.cursor > 0:
        # The resume failed: the paused step — the one just behind the cursor, since a
        # queue waits on its paused step and only grows after it — is current again, so a
        # retry re-runs the step that failed instead of skipping to the one after it.
        paused = queue.steps[queue.cursor - 1]
        if (paused.tool, paused.subject) == (action.tool, action.subject):
            queue.cursor -= 1


# --- workflow ---------------------------------------------------------------------------


@hook_span
def on_workflow_paused(state: ConversationState, pending: PendingWorkflowResume) -> None:
    state.status = ConversationStatus.AWAITING_WORKFLOW_INPUT
    state.pending_workflow = pending


@hook_span
def on_workflow_resumed(state: ConversationState) -> None:
    state.status = ConversationStatus.EXECUTING_ACTION
    state.pending_workflow = None


# --- domain answers ---------------------------------------------------------------------


@hook_span
def on_invoice_answer(state: ConversationState, answer: InvoiceAnswer) -> None:
    state.last_invoice_answer = answer


@hook_span
def on_informative_answered(state: ConversationState, action: ResolvedAction) -> None:
    # The informative tool becomes the "last tool" the classifier sees ("certo" after it).
    state.informative_answer_delivered = True
    state.last_completed_action = action


# --- off-context ------------------------------------------------------------------------


@hook_span
def on_off_context_detected(state: ConversationState) -> None:
    state.off_context_count += 1


@hook_span
def on_in_context_message(state: ConversationState) -> None:
    state.off_context_count = 0


# --- finalization -----------------------------------------------------------------------


@hook_span
def on_finalization_emitted(state: ConversationState, reason: str) -> None:
    state.last_finalization_reason = reason
    state.status = ConversationStatus.CLOSED
    # A closed conversation has nothing pending: a later "sim" must not execute old actions.
    state.pending_confirmation = None
    state.pending_workflow = None


# --- status transitions (FinalizationMachine) -------------------------------------------


@hook_span
def on_next_action_requested(state: ConversationState) -> None:
    state.status = ConversationStatus.EXECUTING_ACTION


@hook_span
def on_finalize_recommended(state: ConversationState) -> None:
    state.status = ConversationStatus.FINALIZING


@hook_span
def on_turn_continued(state: ConversationState) -> None:
    state.status = ConversationStatus.OPEN
    # Departure from the spec's pure-status hook (review r31): "nothing left to run or ask"
    # holds in the state too. Only when the customer calls off a paused workflow is one
    # still set here: its question and the steps queued behind it go (the backend's paused
    # execution is never resumed, so nothing acts).
    if state.pending_workflow is not None:
        state.pending_workflow = None
        state.action_queue = ActionQueue()


# --- as-built: invoice snapshot, active line, trace -------------------------------------


@hook_span
def on_invoice_snapshot_populated(
    state: ConversationState,
    snapshot: tuple[ResolvedInvoiceItem, ...],
    msisdn: str,
    source_turn: int,
) -> None:
    state.invoice_snapshot = snapshot
    state.invoice_snapshot_source_msisdn = msisdn
    state.invoice_snapshot_source_turn = source_turn


@hook_span
def on_invoice_snapshot_invalidated(state: ConversationState) -> None:
    state.invoice_snapshot = ()
    state.invoice_snapshot_source_msisdn = ""
    state.invoice_snapshot_source_turn = 0


@hook_span
def on_msisdn_changed(state: ConversationState, msisdn: str) -> None:
    state.msisdn = msisdn


@hook_span
def on_decision_traced(state: ConversationState, entry: dict[str, Any]) -> None:
    state.decision_trace.append(entry)
    del state.decision_trace[:-DECISION_TRACE_LIMIT]


HOOKS = (
    on_turn_started,
    on_confirmation_requested,
    on_confirmation_consumed,
    on_action_started,
    on_action_completed,
    on_workflow_paused,
    on_workflow_resumed,
    on_invoice_answer,
    on_informative_answered,
    on_off_context_detected,
    on_in_context_message,
    on_finalization_emitted,
    on_next_action_requested,
    on_finalize_recommended,
    on_turn_continued,
    on_invoice_snapshot_populated,
    on_invoice_snapshot_invalidated,
    on_msisdn_changed,
    on_decision_traced,
)
