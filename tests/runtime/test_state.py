from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from conversation.runtime.intent_extractor import ExtractedIntent, IntentClassifierContext
from conversation.runtime.invoice_resolver import ItemResolution, ResolutionOutcome
from conversation.runtime.policy_engine import ConversationDecision
from conversation.runtime.script_catalog import RenderedMessage, Script, ScriptRef
from conversation.runtime.state import (
    SCHEMA_VERSION,
    ActionQueue,
    ActionStep,
    Channel,
    ConversationState,
    ConversationStatus,
    PendingConfirmation,
    PendingWorkflowResume,
    ResolvedAction,
    ResolvedInvoiceItem,
    ToolKind,
    ToolOutcome,
)


def make_item(name: str = "Vivo Play VOD", msisdn: str = "11987654321") -> ResolvedInvoiceItem:
    return ResolvedInvoiceItem(
        canonical_name=name,
        tool_category="cancelar_vas_avulso",
        item_type="avulso",
        msisdn=msisdn,
        value=Decimal("14.90"),
        section="SVA Detalhe Total",
        raw_entry={"desc": name, "valor": "R$ 14,90"},
    )


def step(tool: str = "cancelar_vas_avulso", subject: str = "Vivo Play VOD") -> ActionStep:
    return ActionStep(tool=tool, subject=subject, items=({"canonical_name": subject},))  # type: ignore[arg-type]


@pytest.mark.parametrize("enum", [ConversationStatus, Channel, ToolKind, ToolOutcome])
def test_enum_values_are_lowercase_snake_case(enum: type) -> None:
    for member in enum:
        assert member.value == member.value.lower()
        assert " " not in member.value and "-" not in member.value


FROZEN_VALUES = [
    make_item(),
    step(),
    PendingConfirmation(
        id="s#1",
        authorized_queue=ActionQueue([step()]),
        asked_turn_index=1,
        prompt_text="Confirma?",
    ),
    ResolvedAction("cancelar_vas_avulso", "VOD", ToolKind.ACTION, ToolOutcome.SUCCESS, {"a": 1}),
    PendingWorkflowResume("vas_estrategico", "HBO Max", "exec-1", "k", ("sim", "nao"), "Quer?"),
    ExtractedIntent(kind="action_request", mentioned_items=("VOD",)),
    IntentClassifierContext(False, None, None, None, None, 0),
    ConversationDecision("ask_confirmation", "5", action_queue=ActionQueue()),
    ItemResolution("aya", (make_item(),)),
    ResolutionOutcome((make_item(),), (), ()),
    Script("x", "x", "texto", (), {Channel.VOICE: "same"}),
    RenderedMessage("texto", "x", "v1"),
    ScriptRef("x", "v1"),
]


@pytest.mark.parametrize("value", FROZEN_VALUES, ids=lambda v: type(v).__name__)
def test_frozen_value_objects_hash_and_refuse_assignment(value: object) -> None:
    assert isinstance(hash(value), int)
    assert hash(value) == hash(dataclasses.replace(value))  # type: ignore[type-var]
    field_name = dataclasses.fields(value)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field_name, None)


def test_action_queue_empty_has_no_current_and_is_exhausted() -> None:
    queue = ActionQueue()
    assert queue.is_empty() and queue.is_exhausted()
    assert queue.current() is None
    assert queue.remaining_after_current() == []


def test_action_queue_with_one_step_exhausts_after_advance() -> None:
    only = step()
    queue = ActionQueue([only])
    assert queue.current() == only
    assert queue.remaining_after_current() == []
    assert not queue.is_empty() and not queue.is_exhausted()
    queue.advance()
    assert queue.current() is None and queue.is_exhausted() and not queue.is_empty()


def test_action_queue_remaining_lists_steps_after_the_cursor() -> None:
    a, b, c = step(subject="A"), step("pro_rata", "B"), step("vas_estrategico", "C")
    queue = ActionQueue([a, b, c])
    assert queue.remaining_after_current() == [b, c]
    queue.advance()
    assert queue.current() == b and queue.remaining_after_current() == [c]


def test_action_queue_advance_stops_at_the_end_when_exhausted() -> None:
    queue = ActionQueue([step()], cursor=1)
    queue.advance()
    assert queue.cursor == 1


def test_conversation_state_defaults_are_safe_without_arguments() -> None:
    state = ConversationState()
    assert state.schema_version == SCHEMA_VERSION == 8
    assert state.status is ConversationStatus.OPEN and state.channel is Channel.VOICE
    assert state.action_queue.is_empty() and state.decision_trace == []
    assert state.pending_confirmation is None and state.pending_workflow is None
    other = ConversationState()
    other.decision_trace.append({"x": 1})
    assert state.decision_trace == []  # no shared mutable defaults


def test_invoice_snapshot_defaults_to_empty() -> None:
    state = ConversationState()
    assert state.invoice_snapshot == ()
    assert state.invoice_snapshot_source_turn == 0
    assert state.invoice_snapshot_source_msisdn == ""


def test_to_prompt_context_on_empty_state_has_turn_channel_and_status_only() -> None:
    assert ConversationState().to_prompt_context() == "Turno atual: 0\nCanal: voice\nStatus: open"


def test_to_prompt_context_mentions_pending_confirmation() -> None:
    state = ConversationState(
        pending_confirmation=PendingConfirmation("s#1", ActionQueue([step()]), 1, "Você confirma?")
    )
    assert "Aguardando confirmação do cliente sobre: Você confirma?" in state.to_prompt_context()


def test_to_prompt_context_describes_queue_and_last_action() -> None:
    queue = ActionQueue([step(), step("pro_rata", "B"), step("vas_estrategico", "HBO Max")], 1)
    state = ConversationState(
        action_queue=queue,
        last_completed_action=ResolvedAction(
            "cancelar_vas_avulso", "Vivo Play VOD", ToolKind.ACTION, ToolOutcome.SUCCESS
        ),
        last_invoice_answer="SIM",
        client_requested_end=True,
        off_context_count=2,
        msisdn="11987654321",
    )
    text = state.to_prompt_context()
    assert "Próxima ação na fila: pro_rata para B" in text
    assert "Pendentes depois: HBO Max" in text
    assert (
        "Última ação executada: cancelar_vas_avulso para Vivo Play VOD, resultado: success" in text
    )
    assert "Resposta do cliente sobre a fatura: SIM" in text
    assert "Cliente pediu encerramento." in text
    assert "2 turno(s) fora de contexto" in text
    assert "Linha ativa: final 4321" in text


def test_to_prompt_context_excludes_telemetry_and_snapshot() -> None:
    state = ConversationState(
        decision_trace=[{"rule": "SECRET_TRACE"}],
        last_finalization_reason="SECRET_REASON",
        invoice_snapshot=(make_item("SECRET_ITEM"),),
    )
    text = state.to_prompt_context()
    assert "SECRET" not in text
