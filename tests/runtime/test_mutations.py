from __future__ import annotations

from conversation.runtime import mutations as m
from conversation.runtime.intent_extractor import ExtractedIntent
from conversation.runtime.state import (
    ActionQueue,
    ActionStep,
    ConversationState,
    ConversationStatus,
    PendingConfirmation,
    PendingWorkflowResume,
    ResolvedAction,
    ToolKind,
    ToolOutcome,
)

from .test_state import make_item


def queue_of(*subjects: str) -> ActionQueue:
    return ActionQueue([ActionStep("cancelar_vas_avulso", s) for s in subjects])


def action(
    outcome: ToolOutcome = ToolOutcome.SUCCESS, tool: str = "cancelar_vas_avulso"
) -> ResolvedAction:
    return ResolvedAction(tool, "Vivo Play VOD", ToolKind.ACTION, outcome)


def pending_workflow() -> PendingWorkflowResume:
    return PendingWorkflowResume("vas_estrategico", "HBO Max", "exec-1", "k", ("sim",), "Quer?")


def test_on_turn_started_increments_turn_and_flags_end_request() -> None:
    state = ConversationState()
    m.on_turn_started(state, ExtractedIntent(kind="human_or_end"))
    assert state.turn_index == 1 and state.client_requested_end
    m.on_turn_started(state, ExtractedIntent(kind="unknown"))
    assert state.turn_index == 2 and not state.client_requested_end


def test_on_turn_started_reopens_a_closed_conversation_only() -> None:
    closed = ConversationState(status=ConversationStatus.CLOSED)
    m.on_turn_started(closed, ExtractedIntent(kind="unknown"))
    assert closed.status is ConversationStatus.OPEN
    waiting = ConversationState(status=ConversationStatus.AWAITING_CONFIRMATION)
    m.on_turn_started(waiting, ExtractedIntent(kind="unknown"))
    assert waiting.status is ConversationStatus.AWAITING_CONFIRMATION


def test_on_confirmation_requested_stores_pending_and_awaits() -> None:
    state = ConversationState()
    confirmation = PendingConfirmation("s#1", queue_of("A"), 1, "Confirma?")
    m.on_confirmation_requested(state, confirmation)
    assert state.pending_confirmation is confirmation
    assert state.status is ConversationStatus.AWAITING_CONFIRMATION


def test_on_confirmation_requested_replaces_an_older_pending() -> None:
    state = ConversationState()
    m.on_confirmation_requested(state, PendingConfirmation("s#1", queue_of("A"), 1, "A?"))
    newer = PendingConfirmation("s#2", queue_of("B"), 2, "B?")
    m.on_confirmation_requested(state, newer)
    assert state.pending_confirmation is newer


def test_on_confirmation_consumed_installs_queue_and_clears_pending() -> None:
    state = ConversationState()
    m.on_confirmation_requested(state, PendingConfirmation("s#1", queue_of("A"), 1, "A?"))
    queue = queue_of("A")
    m.on_confirmation_consumed(state, queue)
    assert state.action_queue is queue and state.pending_confirmation is None
    assert state.status is ConversationStatus.EXECUTING_ACTION


def test_on_confirmation_consumed_accepts_an_empty_queue() -> None:
    state = ConversationState()
    m.on_confirmation_consumed(state, ActionQueue())
    assert state.action_queue.is_empty() and state.status is ConversationStatus.EXECUTING_ACTION


def test_on_action_started_changes_nothing() -> None:
    state = ConversationState(action_queue=queue_of("A"))
    before = repr(state)
    m.on_action_started(state, state.action_queue.steps[0])
    assert repr(state) == before


def test_on_action_completed_records_action_and_advances() -> None:
    state = ConversationState(action_queue=queue_of("A", "B"), informative_answer_delivered=True)
    done = action()
    m.on_action_completed(state, done)
    assert state.last_completed_action is done and state.action_queue.cursor == 1
    assert not state.informative_answer_delivered


def test_on_action_completed_keeps_cursor_on_failure() -> None:
    state = ConversationState(action_queue=queue_of("A", "B"))
    m.on_action_completed(state, action(ToolOutcome.FAILURE))
    assert state.action_queue.cursor == 0
    assert state.last_completed_action is not None
    assert state.last_completed_action.outcome is ToolOutcome.FAILURE


def test_on_action_completed_puts_a_step_whose_resume_failed_back_in_front() -> None:
    # The paused step advanced the cursor when it paused; its failed resume makes it current
    # again (a retry re-runs it), and never skips to the step after it.
    state = ConversationState(action_queue=queue_of("Vivo Play VOD", "B"))
    state.action_queue.cursor = 1  # paused on the first step
    failed = ResolvedAction(
        "cancelar_vas_avulso",
        "Vivo Play VOD",
        ToolKind.ACTION,
        ToolOutcome.FAILURE,
        {"error": "x", "resumed": True},
    )
    m.on_action_completed(state, failed)
    assert state.action_queue.cursor == 0
    resumed_ok = ResolvedAction(
        "cancelar_vas_avulso",
        "Vivo Play VOD",
        ToolKind.ACTION,
        ToolOutcome.SUCCESS,
        {"resumed": True},
    )
    state.action_queue.cursor = 1
    m.on_action_completed(state, resumed_ok)
    assert state.action_queue.cursor == 1  # left the queue when it paused: no second advance


def test_on_workflow_paused_stores_pending_workflow() -> None:
    state = ConversationState()
    pending = pending_workflow()
    m.on_workflow_paused(state, pending)
    assert state.pending_workflow is pending
    assert state.status is ConversationStatus.AWAITING_WORKFLOW_INPUT


def test_on_workflow_resumed_consumes_pending_workflow() -> None:
    state = ConversationState()
    m.on_workflow_paused(state, pending_workflow())
    m.on_workflow_resumed(state)
    assert state.pending_workflow is None and state.status is ConversationStatus.EXECUTING_ACTION
    m.on_workflow_resumed(state)  # edge: nothing pending stays nothing pending
    assert state.pending_workflow is None


def test_on_invoice_answer_records_and_overwrites() -> None:
    state = ConversationState()
    m.on_invoice_answer(state, "SIM")
    assert state.last_invoice_answer == "SIM"
    m.on_invoice_answer(state, "NAO")
    assert state.last_invoice_answer == "NAO"


def test_on_informative_answered_flags_delivery_and_last_tool() -> None:
    state = ConversationState()
    explained = ResolvedAction(
        "invoice_explanation", "fatura", ToolKind.EXPLANATION, ToolOutcome.SUCCESS
    )
    m.on_informative_answered(state, explained)
    assert state.informative_answer_delivered and state.last_completed_action is explained
    assert state.action_queue.cursor == 0  # an informative answer never moves the queue


def test_off_context_hooks_count_and_reset() -> None:
    state = ConversationState()
    m.on_off_context_detected(state)
    m.on_off_context_detected(state)
    assert state.off_context_count == 2
    m.on_in_context_message(state)
    assert state.off_context_count == 0
    m.on_in_context_message(state)  # edge: resetting zero stays zero
    assert state.off_context_count == 0


def test_on_finalization_emitted_closes_and_drops_pending_items() -> None:
    state = ConversationState()
    m.on_confirmation_requested(state, PendingConfirmation("s#1", queue_of("A"), 1, "A?"))
    m.on_workflow_paused(state, pending_workflow())
    m.on_finalization_emitted(state, "nao_resolvido")
    assert state.status is ConversationStatus.CLOSED
    assert state.last_finalization_reason == "nao_resolvido"
    assert state.pending_confirmation is None and state.pending_workflow is None


def test_status_transition_hooks_set_their_status() -> None:
    state = ConversationState(status=ConversationStatus.CLOSED)
    m.on_next_action_requested(state)
    assert state.status is ConversationStatus.EXECUTING_ACTION
    m.on_finalize_recommended(state)
    assert state.status is ConversationStatus.FINALIZING
    m.on_turn_continued(state)
    assert state.status is ConversationStatus.OPEN
    m.on_turn_continued(state)  # edge: idempotent
    assert state.status is ConversationStatus.OPEN


def test_snapshot_hooks_populate_and_invalidate() -> None:
    state = ConversationState()
    snapshot = (make_item("A"), make_item("B"))
    m.on_invoice_snapshot_populated(state, snapshot, "11987654321", 3)
    assert state.invoice_snapshot == snapshot
    assert state.invoice_snapshot_source_msisdn == "11987654321"
    assert state.invoice_snapshot_source_turn == 3
    m.on_invoice_snapshot_invalidated(state)
    assert state.invoice_snapshot == () and state.invoice_snapshot_source_turn == 0
    assert state.invoice_snapshot_source_msisdn == ""


def test_on_msisdn_changed_sets_active_line() -> None:
    state = ConversationState()
    m.on_msisdn_changed(state, "11912345678")
    assert state.msisdn == "11912345678"


def test_on_decision_traced_keeps_only_the_latest_entries() -> None:
    state = ConversationState()
    for turn in range(m.DECISION_TRACE_LIMIT + 5):
        m.on_decision_traced(state, {"turn": turn})
    assert len(state.decision_trace) == m.DECISION_TRACE_LIMIT
    assert state.decision_trace[-1] == {"turn": m.DECISION_TRACE_LIMIT + 4}
