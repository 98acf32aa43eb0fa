from __future__ import annotations

import inspect
from typing import Any

import pytest

from conversation.runtime.action_queue import ActionQueueBuilder
from conversation.runtime.intent_extractor import ExtractedIntent
from conversation.runtime.policy_engine import RULES, ConversationDecision, PolicyEngine
from conversation.runtime.state import (
    ActionQueue,
    ActionStep,
    ConversationState,
    PendingConfirmation,
)

from .test_state import make_item

PENDING_QUEUE = ActionQueue([ActionStep("cancelar_vas_avulso", "Vivo Play VOD")])


def with_pending(**kwargs: Any) -> ConversationState:
    return ConversationState(
        pending_confirmation=PendingConfirmation("s#1", PENDING_QUEUE, 1, "Confirma?"), **kwargs
    )


def decide(
    state: ConversationState | None = None,
    *,
    items: int = 0,
    ambiguous: bool = False,
    **intent: Any,
) -> ConversationDecision:
    resolved = [make_item(f"Item {i}") for i in range(items)]
    return PolicyEngine().decide(
        state or ConversationState(),
        intent=ExtractedIntent(**intent),
        resolved_items=resolved,
        action_queue=ActionQueueBuilder().build(resolved),
        has_ambiguity=ambiguous,
    )


def test_rule_1_affirmation_with_pending_executes_the_authorized_queue() -> None:
    d = decide(with_pending(), kind="confirmation_response", affirmation=True)
    assert (d.kind, d.rule) == ("execute_action_queue", "1")
    assert d.action_queue == PENDING_QUEUE


def test_rule_1_5_affirmation_after_informative_answer_finalizes_resolved() -> None:
    state = ConversationState(informative_answer_delivered=True)
    d = decide(state, kind="confirmation_response", affirmation=True)
    assert (d.kind, d.status, d.rule) == ("finalize", "resolvido", "1.5")


def test_orphan_affirmation_without_informative_answer_falls_back() -> None:
    d = decide(kind="confirmation_response", affirmation=True)
    assert (d.kind, d.reason) == ("fallback_to_orchestrator", "uncovered_intent")


def test_rule_1_5b_orphan_negation_falls_back() -> None:
    d = decide(kind="confirmation_response", negation=True)
    assert (d.kind, d.reason, d.rule) == (
        "fallback_to_orchestrator",
        "negation_without_pending",
        "1.5b",
    )


def test_rule_1_5b_orphan_negation_with_verb_still_falls_back() -> None:
    d = decide(kind="confirmation_response", negation=True, action_verbs=("cancelar",), items=1)
    assert d.reason == "negation_without_pending"


def test_rule_1_6_negation_with_pending_and_no_verb_falls_back_with_reason() -> None:
    d = decide(with_pending(), kind="confirmation_response", negation=True)
    assert (d.kind, d.reason, d.rule) == (
        "fallback_to_orchestrator",
        "confirmation_response_negation_pending",
        "1.6",
    )


def test_rule_1_6_falls_through_to_rule_5_when_an_action_verb_is_present() -> None:
    d = decide(
        with_pending(),
        kind="confirmation_response",
        negation=True,
        action_verbs=("cancelar",),
        items=2,
    )
    assert (d.kind, d.rule) == ("ask_confirmation", "5")
    assert d.action_queue is not None and d.action_queue != PENDING_QUEUE


def test_rule_1_wins_over_rule_1_6_when_both_flags_are_set() -> None:
    d = decide(with_pending(), kind="confirmation_response", affirmation=True, negation=True)
    assert d.rule == "1"


def test_rule_2_end_requested_finalizes_not_resolved() -> None:
    d = decide(kind="human_or_end")
    assert (d.kind, d.status, d.rule) == ("finalize", "nao_resolvido", "2")


def test_rule_3_conceptual_question_uses_refined_queries() -> None:
    d = decide(
        kind="conceptual_question",
        rag_query=("tamboro o que é", " ", "tim fashion o que é"),
        raw_text="um tal de tamboro e tim fashion",
    )
    assert (d.kind, d.rule) == ("rag", "3")
    assert d.queries == ("tamboro o que é", "tim fashion o que é")


def test_rule_3_without_refined_queries_uses_the_literal_text() -> None:
    d = decide(kind="conceptual_question", raw_text="  o que é tamboro?  ")
    assert d.queries == ("o que é tamboro?",)


def test_rule_3_with_nothing_to_search_has_no_queries() -> None:
    d = decide(kind="conceptual_question", raw_text="   ")
    assert d.kind == "rag" and d.queries == ()


def test_rule_3_5_ambiguity_wins_over_ask_confirmation() -> None:
    d = decide(kind="action_request", requested_action=True, items=1, ambiguous=True)
    # Issue 11 item 4: the runtime asks which line itself (the orchestrator's question was
    # a dead end: nothing could read the answer).
    assert (d.kind, d.reason, d.rule) == ("ask_which_line", "ambiguous_item_match", "3.5")


def test_rule_4_invoice_overview_calls_the_explanation_tool() -> None:
    d = decide(kind="invoice_overview")
    assert (d.kind, d.tool, d.rule) == ("call_informative_tool", "invoice_explanation", "4")


def test_rule_5_action_with_items_asks_confirmation_with_the_queue() -> None:
    d = decide(kind="action_request", requested_action=True, items=2)
    assert (d.kind, d.rule) == ("ask_confirmation", "5")
    assert d.action_queue is not None and len(d.action_queue.steps) == 1


def test_rule_6_action_without_items_is_item_not_found() -> None:
    d = decide(kind="action_request", requested_action=True)
    assert (d.kind, d.rule) == ("item_not_found", "6")


def test_rule_7_third_off_context_turn_finalizes_other_subjects() -> None:
    d = decide(ConversationState(off_context_count=3), kind="off_context")
    assert (d.kind, d.status, d.rule) == ("finalize", "outros_assuntos", "7")


def test_off_context_below_the_limit_falls_back() -> None:
    d = decide(ConversationState(off_context_count=2), kind="off_context")
    assert d.kind == "fallback_to_orchestrator" and d.rule == "default"


def test_rule_1_wins_over_rule_5_when_both_would_match() -> None:
    d = decide(
        with_pending(),
        kind="confirmation_response",
        affirmation=True,
        requested_action=True,
        mentioned_items=("VOD",),
        items=1,
    )
    assert d.rule == "1"


def test_rule_2_wins_over_rule_6_when_both_would_match() -> None:
    d = decide(kind="human_or_end", requested_action=True, mentioned_items=("xyz",))
    assert d.rule == "2"


@pytest.mark.parametrize("kind", ["unknown", "value_question", "broad_invoice_complaint", "start"])
def test_uncovered_intents_fall_back_to_the_orchestrator(kind: str) -> None:
    d = decide(kind=kind)
    assert (d.kind, d.reason, d.rule) == ("fallback_to_orchestrator", "uncovered_intent", "default")


def test_decide_is_pure() -> None:
    state = with_pending(off_context_count=1)
    args = {"kind": "confirmation_response", "negation": True}
    first, second = decide(state, **args), decide(state, **args)
    assert first == second
    assert state.status.value == "open" and state.pending_confirmation is not None


@pytest.mark.parametrize(("rule_id", "rule"), RULES, ids=[r for r, _ in RULES])
def test_every_rule_cites_the_case_it_covers(rule_id: str, rule: Any) -> None:
    source = inspect.getsource(rule)
    assert f"# Rule {rule_id} —" in source
