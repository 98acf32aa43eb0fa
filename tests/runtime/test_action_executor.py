from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversation.runtime.action_executor import (
    ActionQueueExecutor,
    ToolAdapter,
    ValueInterpreter,
    classify_outcome,
    summarize,
)
from conversation.runtime.action_queue import ActionQueueBuilder
from conversation.runtime.invoice_resolver import InvoiceResolver
from conversation.runtime.state import (
    ActionQueue,
    ActionStep,
    ConversationState,
    ConversationStatus,
    PendingWorkflowResume,
    ToolKind,
    ToolOutcome,
)


class RecordingBackend:
    """Hand-written fake backend: canned result per method, every call recorded."""

    def __init__(self, **results: dict[str, Any]) -> None:
        self.results = results
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.action_ids: list[str] = []  # the ``action_id`` of every action call

    def _answer(self, name: str, **kwargs: Any) -> dict[str, Any]:
        self.calls.append((name, kwargs))
        return self.results.get(name, {"success": True})

    def cancelar_vas_single(
        self, *, items: list, workflow_input: dict, action_id: str = ""
    ) -> dict[str, Any]:
        self.action_ids.append(action_id)
        return self._answer("cancelar_vas_single", items=items, workflow_input=workflow_input)

    def vas_strategic(
        self, *, items: list, workflow_input: dict, action_id: str = ""
    ) -> dict[str, Any]:
        self.action_ids.append(action_id)
        return self._answer("vas_strategic", items=items, workflow_input=workflow_input)

    def pro_rata(self, *, items: list, remaining: list, action_id: str = "") -> dict[str, Any]:
        self.action_ids.append(action_id)
        return self._answer("pro_rata", items=items, remaining=remaining)

    def resume_workflow(self, *, tool: str, execution_id: str, input_key: str, value: str) -> dict:
        return self._answer(
            "resume_workflow",
            tool=tool,
            execution_id=execution_id,
            input_key=input_key,
            value=value,
        )

    def invoice_explanation(self, *, msisdn: str) -> dict[str, Any]:
        return self._answer("invoice_explanation", msisdn=msisdn)

    def buscar_informacao(self, *, queries: Sequence[str]) -> dict[str, Any]:
        return self._answer("buscar_informacao", queries=queries)


def state_with(invoice: dict[str, Any], *mentions: str) -> ConversationState:
    items = InvoiceResolver().resolve_items(list(mentions), invoice)
    return ConversationState(action_queue=ActionQueueBuilder().build(items))


def executor(backend: RecordingBackend) -> ActionQueueExecutor:
    return ActionQueueExecutor(ToolAdapter(backend))


def test_avulso_step_calls_cancelar_vas_single(invoice: dict[str, Any]) -> None:
    backend = RecordingBackend()
    state = state_with(invoice, "VOD")
    result = executor(backend).execute_next(state)
    assert result == {"success": True}
    ((name, kwargs),) = backend.calls
    assert name == "cancelar_vas_single"
    assert kwargs["items"] == [
        {"service": "Vivo Play VOD", "msisdn": "11987654321", "value": "14.90"}
    ]
    assert kwargs["workflow_input"] == {"remaining": []}


def test_strategic_step_calls_vas_strategic(invoice: dict[str, Any]) -> None:
    backend = RecordingBackend()
    executor(backend).execute_next(state_with(invoice, "HBO Max"))
    ((name, kwargs),) = backend.calls
    assert name == "vas_strategic"
    assert kwargs["items"] == [
        {"name": "HBO Max", "msisdn": "11987654321", "item_type": "estrategico"}
    ]


def test_pro_rata_step_calls_pro_rata() -> None:
    backend = RecordingBackend()
    item = {"canonical_name": "Plano", "msisdn": "11987654321"}
    state = ConversationState(action_queue=ActionQueue([ActionStep("pro_rata", "Plano", (item,))]))
    executor(backend).execute_next(state)
    assert backend.calls == [
        ("pro_rata", {"items": [{"service": "Plano", "msisdn": "11987654321"}], "remaining": []})
    ]


def test_unsupported_tool_raises() -> None:
    step = ActionStep("desconhecida", "X")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Unsupported action tool"):
        ToolAdapter(RecordingBackend()).invoke(step, remaining=[])


def test_empty_queue_reports_queue_empty() -> None:
    backend = RecordingBackend()
    state = ConversationState()
    assert executor(backend).execute_next(state) == {"success": True, "queue_empty": True}
    assert backend.calls == [] and state.last_completed_action is None


def test_remaining_comes_from_the_queue(invoice: dict[str, Any]) -> None:
    backend = RecordingBackend()
    state = state_with(invoice, "VOD", "HBO Max")
    executor(backend).execute_next(state)
    assert backend.calls[0][1]["workflow_input"] == {
        "remaining": [{"tool": "vas_estrategico", "subject": "HBO Max"}]
    }


def test_success_advances_the_cursor_and_records_the_action(invoice: dict[str, Any]) -> None:
    state = state_with(invoice, "VOD", "HBO Max")
    executor(RecordingBackend(cancelar_vas_single={"success": True, "message": "ok"})).execute_next(
        state
    )
    assert state.action_queue.cursor == 1
    done = state.last_completed_action
    assert done is not None and done.tool == "cancelar_vas_avulso"
    assert done.subject == "Vivo Play VOD" and done.tool_kind is ToolKind.ACTION
    assert done.outcome is ToolOutcome.SUCCESS and done.result_summary["message"] == "ok"


def test_failure_keeps_the_cursor_for_a_later_retry(invoice: dict[str, Any]) -> None:
    state = state_with(invoice, "VOD", "HBO Max")
    executor(RecordingBackend(cancelar_vas_single={"error": "timeout"})).execute_next(state)
    assert state.action_queue.cursor == 0
    assert state.last_completed_action is not None
    assert state.last_completed_action.outcome is ToolOutcome.FAILURE


@pytest.mark.parametrize(
    ("result", "outcome"),
    [
        ({"success": True}, ToolOutcome.SUCCESS),
        ({"success": True, "errors": []}, ToolOutcome.SUCCESS),
        ({"not_found": True}, ToolOutcome.NO_MATCH),
        ({"error": "boom"}, ToolOutcome.FAILURE),
        ({"success": True, "errors": ["HBO Max"]}, ToolOutcome.PARTIAL),
        ({"aguardando_resposta": True, "execution_id": "e"}, ToolOutcome.PARTIAL),
        ({}, ToolOutcome.FAILURE),
    ],
)
def test_outcome_table(result: dict[str, Any], outcome: ToolOutcome) -> None:
    assert classify_outcome(result) is outcome


def test_summary_keeps_only_known_scalar_keys() -> None:
    assert summarize({"success": True, "message": "m", "items": [1], "error": None, "x": 1}) == {
        "success": True,
        "message": "m",
        "error": None,
    }


def test_resume_current_reinvokes_backend_with_execution_id() -> None:
    backend = RecordingBackend(resume_workflow={"success": True, "recomenda_finalizacao": True})
    pending = PendingWorkflowResume(
        "vas_estrategico", "HBO Max", "exec-9", "manter", ("sim", "nao"), "?"
    )
    state = ConversationState(
        status=ConversationStatus.AWAITING_WORKFLOW_INPUT, pending_workflow=pending
    )
    executor(backend).resume_current(state, "nao")
    assert backend.calls == [
        (
            "resume_workflow",
            {
                "tool": "vas_estrategico",
                "execution_id": "exec-9",
                "input_key": "manter",
                "value": "nao",
            },
        )
    ]
    assert state.pending_workflow is None and state.status is ConversationStatus.EXECUTING_ACTION
    assert state.last_completed_action is not None
    assert state.last_completed_action.subject == "HBO Max"


def test_resume_without_paused_workflow_raises() -> None:
    with pytest.raises(ValueError):
        executor(RecordingBackend()).resume_current(ConversationState(), "sim")


def test_search_knowledge_never_runs_without_a_query() -> None:
    with pytest.raises(ValueError):
        ToolAdapter(RecordingBackend()).search_knowledge(())


def pending(normalize: str, allowed: tuple[str, ...] = ()) -> PendingWorkflowResume:
    return PendingWorkflowResume("t", "s", "e", "k", allowed, "?", normalize)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Sim!", "sim"), ("pode", "sim"), ("não", "nao"), ("N", "nao"), ("talvez", None), ("", None)],
)
def test_value_interpreter_yes_no(text: str, expected: str | None) -> None:
    assert ValueInterpreter().interpret(text, pending("yes_no", ("sim", "nao"))) == expected


def test_value_interpreter_yes_no_respects_allowed_values() -> None:
    assert ValueInterpreter().interpret("sim", pending("yes_no", ("nao",))) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Boleto", "boleto"), ("quero pix", "pix"), ("pix ou boleto", None), ("cartão", None)],
)
def test_value_interpreter_choice(text: str, expected: str | None) -> None:
    assert ValueInterpreter().interpret(text, pending("choice", ("boleto", "pix"))) == expected


def test_value_interpreter_free_text_returns_the_answer() -> None:
    assert ValueInterpreter().interpret("  dia 10  ", pending("free_text")) == "dia 10"


@pytest.mark.parametrize(
    "text",
    [
        "não quero cancelar",
        "cancelar não",
        "se eu cancelar perco o desconto?",
        "nao, manter nao",
        "cancelar?",
        "nem pensar em cancelar",
    ],
)
def test_naming_an_option_inside_a_negation_question_or_condition_chooses_nothing(
    text: str,
) -> None:
    # A refusal must never run the option it refuses: unclear, the message is read as one.
    choice = pending("choice", ("cancelar", "manter"))
    assert ValueInterpreter().interpret(text, choice) is None


@pytest.mark.parametrize(
    ("text", "expected"), [("pode cancelar", "cancelar"), ("manter", "manter")]
)
def test_a_plain_choice_is_still_read(text: str, expected: str) -> None:
    assert ValueInterpreter().interpret(text, pending("choice", ("cancelar", "manter"))) == expected


@given(
    option=st.sampled_from(["cancelar", "manter"]),
    before=st.sampled_from(["não quero", "nao vou", "nem", "não"]),
    tail=st.sampled_from(["", " agora", " o serviço", ", obrigado"]),
)
def test_a_negated_option_is_never_chosen(option: str, before: str, tail: str) -> None:
    text = f"{before} {option}{tail}"
    assert ValueInterpreter().interpret(text, pending("choice", ("cancelar", "manter"))) is None


@pytest.mark.parametrize("text", ["espera, não cancela", "desisto", "esquece isso"])
def test_stopping_a_workflow_is_no_free_text_answer(text: str) -> None:
    assert ValueInterpreter().interpret(text, pending("free_text")) is None
