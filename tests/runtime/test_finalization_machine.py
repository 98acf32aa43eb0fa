from __future__ import annotations

import ast
from pathlib import Path

import pytest

import conversation.runtime.finalization_machine as fm_module
from conversation.runtime.finalization_machine import FinalizationMachine
from conversation.runtime.state import (
    ActionQueue,
    ActionStep,
    ConversationState,
    ConversationStatus,
    ResolvedAction,
    ToolKind,
    ToolOutcome,
)

PAUSED = {
    "aguardando_resposta": True,
    "execution_id": "exec-1",
    "expected_input_key": "manter",
    "allowed_values": ["sim", "nao"],
    "question": "Quer manter com desconto?",
    "normalize": "yes_no",
}


def state(queue_left: bool = False) -> ConversationState:
    steps = [ActionStep("cancelar_vas_avulso", "VOD"), ActionStep("vas_estrategico", "HBO Max")]
    return ConversationState(
        action_queue=ActionQueue(steps, cursor=1 if queue_left else 2),
        last_completed_action=ResolvedAction(
            "vas_estrategico", "HBO Max", ToolKind.ACTION, ToolOutcome.PARTIAL
        ),
    )


def test_queue_with_steps_left_asks_next_action() -> None:
    s = state(queue_left=True)
    assert FinalizationMachine().after_tool_result(s, {"success": True}) == "ask_next_action"
    assert s.status is ConversationStatus.EXECUTING_ACTION


def test_paused_workflow_waits_for_input() -> None:
    s = state()
    assert FinalizationMachine().after_tool_result(s, PAUSED) == "wait_workflow_input"
    assert s.status is ConversationStatus.AWAITING_WORKFLOW_INPUT
    pending = s.pending_workflow
    assert pending is not None and pending.execution_id == "exec-1"
    assert pending.tool == "vas_estrategico" and pending.subject == "HBO Max"
    assert pending.allowed_values == ("sim", "nao") and pending.normalize == "yes_no"
    assert pending.question == "Quer manter com desconto?"


def test_paused_workflow_without_execution_id_is_rejected() -> None:
    with pytest.raises(ValueError):
        FinalizationMachine().after_tool_result(state(), {"aguardando_resposta": True})


def test_unknown_normalizer_becomes_free_text() -> None:
    s = state()
    FinalizationMachine().after_tool_result(s, {**PAUSED, "normalize": "weird"})
    assert s.pending_workflow is not None and s.pending_workflow.normalize == "free_text"


def test_recommended_finalization_finalizes() -> None:
    s = state()
    result = {"success": True, "recomenda_finalizacao": True}
    assert FinalizationMachine().after_tool_result(s, result) == "finalize"
    assert s.status is ConversationStatus.FINALIZING


def test_otherwise_the_turn_continues() -> None:
    s = state()
    s.status = ConversationStatus.EXECUTING_ACTION  # test setup
    assert FinalizationMachine().after_tool_result(s, {"success": True}) == "continue"
    assert s.status is ConversationStatus.OPEN


def test_queue_left_wins_over_paused_workflow() -> None:
    s = state(queue_left=True)
    assert FinalizationMachine().after_tool_result(s, PAUSED) == "ask_next_action"
    assert s.pending_workflow is None


@pytest.mark.parametrize("status", ["resolvido", "nao_resolvido", "outros_assuntos"])
def test_finalize_payload_with_canonical_statuses(status: str) -> None:
    payload = FinalizationMachine().build_finalize_payload(status, "resumo")
    assert payload == {"status": status, "summary": "resumo"}


def test_finalize_payload_rejects_unknown_status() -> None:
    with pytest.raises(ValueError):
        FinalizationMachine().build_finalize_payload("talvez", "resumo")


def test_mark_closed_closes_with_reason() -> None:
    s = state()
    FinalizationMachine().mark_closed(s, "resolvido")
    assert s.status is ConversationStatus.CLOSED and s.last_finalization_reason == "resolvido"


def test_machine_never_assigns_status_directly() -> None:
    source = Path(fm_module.__file__).read_text(encoding="utf-8")
    assert "state.status =" not in source
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            assert not any(isinstance(t, ast.Attribute) and t.attr == "status" for t in targets)
