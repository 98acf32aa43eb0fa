"""Per-hook spans (spec, mutations contract): ``conversation.hook.<name>`` with the state
diff, emitted by the external decorator, only while a caller records, never with text."""

from __future__ import annotations

import json

from conversation.runtime import DemoBackend, mutations
from conversation.runtime.spans import SPAN_PREFIX, HookSpan, recording_spans
from conversation.runtime.state import ConversationState, ConversationStatus

from .conftest import RuntimeFactory, context_for


def test_every_hook_is_wrapped_by_the_span_decorator() -> None:
    assert all(hasattr(hook, "__wrapped__") for hook in mutations.HOOKS)


def test_a_hook_records_its_diff_only_inside_a_recording_block() -> None:
    state = ConversationState()
    mutations.on_off_context_detected(state)  # nobody records: nothing is kept
    with recording_spans() as spans:
        mutations.on_off_context_detected(state)
        mutations.on_turn_continued(state)  # OPEN -> OPEN: a span with an empty diff
    assert state.off_context_count == 2
    assert spans == [
        HookSpan(f"{SPAN_PREFIX}on_off_context_detected", {"off_context_count": (1, 2)}),
        HookSpan(f"{SPAN_PREFIX}on_turn_continued", {}),
    ]
    assert spans[0].as_trace() == {
        "hook": "on_off_context_detected",
        "changed": {"off_context_count": [1, 2]},
    }


def test_a_cancellation_turn_emits_its_hooks_in_order_without_any_text(
    make_runtime: RuntimeFactory, backend: DemoBackend
) -> None:
    runtime = make_runtime()
    runtime.try_handle(user_text="quero cancelar o VOD e o HBO Max", context=context_for(backend))
    with recording_spans() as spans:
        runtime.try_handle(user_text="sim", context=context_for(backend))

    hooks = [s.hook for s in spans]
    assert hooks[0] == "on_turn_started" and hooks[-1] == "on_decision_traced"
    assert hooks.index("on_confirmation_consumed") < hooks.index("on_action_started")
    assert hooks.count("on_action_completed") == 2  # VOD, then HBO Max
    consumed = next(s for s in spans if s.hook == "on_confirmation_consumed")
    assert consumed.diff["status"] == (
        ConversationStatus.AWAITING_CONFIRMATION.value,
        ConversationStatus.EXECUTING_ACTION.value,
    )
    assert consumed.diff["pending_confirmation"][1] is None
    dumped = json.dumps([s.as_trace() for s in spans], ensure_ascii=False)
    for text in ("Vivo Play VOD", "HBO Max", "sim", "11987654321", "Vamos seguir"):
        assert text not in dumped


def test_spans_of_nested_blocks_stay_apart() -> None:
    state = ConversationState()
    with recording_spans() as outer:
        mutations.on_off_context_detected(state)
        with recording_spans() as inner:
            mutations.on_in_context_message(state)
        mutations.on_off_context_detected(state)
    assert [s.hook for s in inner] == ["on_in_context_message"]
    assert [s.hook for s in outer] == ["on_off_context_detected", "on_off_context_detected"]
