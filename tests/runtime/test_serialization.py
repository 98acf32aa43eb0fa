from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversation.runtime import DemoBackend
from conversation.runtime.runtime import build_runtime
from conversation.runtime.script_catalog import ScriptCatalog
from conversation.runtime.serialization import (
    deserialize_state,
    migrate_state,
    serialize_state,
)
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
    ToolKind,
    ToolOutcome,
)
from conversation.runtime.store import InMemoryStateStore

from .conftest import (
    CANNED,
    KNOWLEDGE,
    LINE_A,
    LINE_B,
    FixedClock,
    ScriptedClassifier,
    load_invoice,
)
from .test_state import make_item

CATALOG = ScriptCatalog()
INVOICE = load_invoice()


def round_trip(state: ConversationState) -> ConversationState:
    return deserialize_state(json.loads(json.dumps(serialize_state(state))))


def rich_state() -> ConversationState:
    step = ActionStep(
        "cancelar_vas_avulso",
        "Vivo Play VOD",
        ({"canonical_name": "Vivo Play VOD", "msisdn": LINE_A, "value": "14.90"},),
    )
    strategic = ActionStep("vas_estrategico", "HBO Max", ({"canonical_name": "HBO Max"},))
    return ConversationState(
        session_id="conv-1",
        turn_index=5,
        channel=Channel.TEXT,
        status=ConversationStatus.AWAITING_CONFIRMATION,
        msisdn=LINE_A,
        pending_confirmation=PendingConfirmation(
            "conv-1#5", ActionQueue([step, strategic]), 5, "Correto?"
        ),
        pending_workflow=PendingWorkflowResume(
            "vas_estrategico", "HBO Max", "exec-1", "manter", ("sim", "nao"), "Quer?", "yes_no"
        ),
        action_queue=ActionQueue([step, strategic], cursor=1),
        last_completed_action=ResolvedAction(
            "cancelar_vas_avulso",
            "Vivo Play VOD",
            ToolKind.ACTION,
            ToolOutcome.SUCCESS,
            {"success": True, "message": "ok"},
        ),
        last_invoice_answer="SIM",
        client_requested_end=True,
        off_context_count=2,
        informative_answer_delivered=True,
        last_finalization_reason="resolvido",
        invoice_snapshot=(make_item("A"), make_item("B", LINE_B)),
        invoice_snapshot_source_turn=3,
        invoice_snapshot_source_msisdn=LINE_A,
        decision_trace=[{"turn": 5, "rule": "5", "items": ["Vivo Play VOD"]}],
    )


def test_round_trip_of_an_empty_state() -> None:
    state = ConversationState(session_id="conv-1")
    assert round_trip(state) == state


def test_round_trip_with_queue_in_the_middle_of_execution() -> None:
    state = rich_state()
    assert state.action_queue.cursor == 1
    restored = round_trip(state)
    assert restored == state and restored.action_queue.current() == state.action_queue.current()


def test_round_trip_with_pending_confirmation_nested_queue() -> None:
    state = rich_state()
    data = serialize_state(state)
    assert data["pending_confirmation"]["authorized_queue"]["steps"][1]["tool"] == "vas_estrategico"
    assert round_trip(state).pending_confirmation == state.pending_confirmation


def test_round_trip_of_the_v7_invoice_snapshot() -> None:
    state = rich_state()
    data = serialize_state(state)
    assert data["schema_version"] == SCHEMA_VERSION == 8
    assert data["invoice_snapshot"][0]["value"] == "14.90"
    restored = round_trip(state)
    assert restored.invoice_snapshot == state.invoice_snapshot
    assert restored.invoice_snapshot[0].value == Decimal("14.90")


def test_serialization_uses_json_types_and_omits_none() -> None:
    data = serialize_state(ConversationState(channel=Channel.TEXT))
    assert data["channel"] == "text" and data["status"] == "open"
    for key in (
        "pending_confirmation",
        "pending_workflow",
        "last_completed_action",
        "last_invoice_answer",
        "last_finalization_reason",
    ):
        assert key not in data
    assert json.loads(json.dumps(serialize_state(rich_state()))) == serialize_state(rich_state())


def test_v6_session_restores_with_an_empty_snapshot() -> None:
    v6 = serialize_state(rich_state())
    v6["schema_version"] = 6
    for key in (
        "invoice_snapshot",
        "invoice_snapshot_source_turn",
        "invoice_snapshot_source_msisdn",
        "msisdn",
        "pending_workflow",
    ):
        v6.pop(key)
    restored = deserialize_state(v6)
    assert restored.schema_version == 8 and restored.invoice_snapshot == ()
    assert restored.pending_workflow is None and restored.msisdn == ""
    assert restored.action_queue == rich_state().action_queue
    assert restored.pending_confirmation == rich_state().pending_confirmation
    assert migrate_state(v6) == restored


def test_a_steps_action_id_round_trips_and_is_optional() -> None:
    state = rich_state()
    step = state.action_queue.steps[0]
    state.action_queue.steps[0] = ActionStep(step.tool, step.subject, step.items, "conv-1#2/0")
    data = serialize_state(state)
    assert data["action_queue"]["steps"][0]["action_id"] == "conv-1#2/0"
    assert deserialize_state(data).action_queue.steps[0].action_id == "conv-1#2/0"
    del data["action_queue"]["steps"][0]["action_id"]  # stored before ids were stamped
    assert deserialize_state(data).action_queue.steps[0].action_id == ""


@pytest.mark.parametrize("version", [99, 0, 5, -1, "7", None])
def test_unknown_version_resets_keeping_the_session_id(version: Any) -> None:
    data = serialize_state(rich_state())
    data["schema_version"] = version
    restored = deserialize_state(data)
    assert restored == ConversationState(session_id="conv-1", channel=Channel.TEXT)


def test_missing_version_resets_without_exception() -> None:
    assert deserialize_state({"session_id": "conv-9", "turn_index": 4}) == ConversationState(
        session_id="conv-9"
    )
    assert deserialize_state({}) == ConversationState()


@pytest.mark.parametrize(
    "corrupt",
    [
        {"status": "sleeping"},
        {"action_queue": {"steps": [], "cursor": 3}},
        {"action_queue": {"steps": [{"tool": "teleport", "subject": "x"}]}},
        {"last_invoice_answer": "TALVEZ"},
        {"pending_confirmation": {"id": "x"}},
    ],
)
def test_malformed_current_version_raises_value_error(corrupt: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="malformed conversation state"):
        deserialize_state({"schema_version": SCHEMA_VERSION, **corrupt})


def test_serializing_a_non_json_value_fails_fast() -> None:
    state = ConversationState(decision_trace=[{"at": object()}])
    with pytest.raises(ValueError):
        serialize_state(state)


# --- every reachable state round-trips ------------------------------------------------------

MESSAGES = [*CANNED, "sim", "não", "Sim!", "tchau", "nao", "quero falar de outra coisa qualquer"]


@settings(max_examples=60, deadline=None)
@given(
    turns=st.lists(
        st.tuples(st.sampled_from(MESSAGES), st.sampled_from([LINE_A, LINE_A, LINE_B])),
        min_size=1,
        max_size=10,
    ),
    retention=st.booleans(),
    broken_cancel=st.booleans(),
)
def test_any_reachable_state_round_trips(
    turns: list[tuple[str, str]], retention: bool, broken_cancel: bool
) -> None:
    backend = DemoBackend(
        INVOICE,
        knowledge=KNOWLEDGE,
        strategic_retention_offer=retention,
        unavailable_tools={"cancelar_vas_single"} if broken_cancel else (),
    )
    store = InMemoryStateStore(channel=Channel.TEXT)
    runtime = build_runtime(
        classifier=ScriptedClassifier(),
        backend=backend,
        catalog=CATALOG,
        state_store=store,
        clock=FixedClock(),
    )
    for text, msisdn in turns:
        context = {"session_id": "conv-h", "msisdn": msisdn, "invoice_detail": INVOICE}
        runtime.try_handle(user_text=text, context=context)
        state = store.load({"session_id": "conv-h"})
        assert round_trip(state) == state
        assert runtime.export_state() == serialize_state(state)
