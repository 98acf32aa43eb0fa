"""Governance §2: no state makes two rules match (so no two rules can disagree).

The rules only read a finite set of signals, so the whole space is enumerated, then
every pair of rules is checked against it. A hypothesis test adds arbitrary free text.
"""

from __future__ import annotations

import itertools
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversation.runtime.action_queue import ActionQueueBuilder
from conversation.runtime.intent_extractor import INTENT_KINDS, ExtractedIntent
from conversation.runtime.policy_engine import RULES, PolicyEngine, PolicyFacts
from conversation.runtime.state import ActionQueue, ConversationState, PendingConfirmation

from .test_state import make_item

PENDING = PendingConfirmation("s#1", ActionQueue(), 1, "Confirma?")
ITEMS = (make_item(),)
ITEMS_QUEUE = ActionQueueBuilder().build(ITEMS)


def facts_for(
    kind: str,
    affirmation: bool,
    negation: bool,
    verbs: bool,
    pending: bool,
    informative: bool,
    off_context: int,
    items: bool,
    ambiguous: bool,
) -> PolicyFacts:
    intent = ExtractedIntent(
        kind=kind,  # type: ignore[arg-type]
        affirmation=affirmation,
        negation=negation,
        action_verbs=("cancelar",) if verbs else (),
        raw_text="texto",
    )
    state = ConversationState(
        pending_confirmation=PENDING if pending else None,
        informative_answer_delivered=informative,
        off_context_count=off_context,
    )
    if items:
        return PolicyFacts(state, intent, ITEMS, ITEMS_QUEUE, ambiguous)
    return PolicyFacts(state, intent, (), ActionQueue(), ambiguous)


@cache
def match_matrix() -> tuple[tuple[str, ...], ...]:
    """For every point of the signal space, the ids of the rules that match."""
    bools = (False, True)
    # off_context: just below and at the limit; rag queries never change which rule matches.
    space = itertools.product(INTENT_KINDS, bools, bools, bools, bools, bools, (2, 3), bools, bools)
    return tuple(
        tuple(rule_id for rule_id, rule in RULES if rule(facts_for(*point)) is not None)
        for point in space
    )


PAIRS = list(itertools.combinations([rule_id for rule_id, _ in RULES], 2))


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}-vs-{b}" for a, b in PAIRS])
def test_no_state_matches_both_rules(a: str, b: str) -> None:
    both = [m for m in match_matrix() if a in m and b in m]
    assert both == []


def test_every_rule_matches_some_state() -> None:
    matched = {rule_id for m in match_matrix() for rule_id in m}
    assert matched == {rule_id for rule_id, _ in RULES}


def test_the_default_is_reached_only_when_no_rule_matches() -> None:
    engine = PolicyEngine()
    for point in [("unknown",) + (False,) * 5 + (0, False, False)]:
        f = facts_for(*point)  # type: ignore[arg-type]
        decision = engine.decide(
            f.state,
            intent=f.intent,
            resolved_items=f.resolved_items,
            action_queue=f.action_queue,
            has_ambiguity=f.has_ambiguity,
        )
        assert decision.rule == "default"


@given(
    kind=st.sampled_from(INTENT_KINDS),
    affirmation=st.booleans(),
    negation=st.booleans(),
    verbs=st.lists(st.text(max_size=8), max_size=2),
    rag=st.lists(st.text(max_size=8), max_size=2),
    raw=st.text(max_size=20),
    pending=st.booleans(),
    informative=st.booleans(),
    off_context=st.integers(min_value=0, max_value=10),
    items=st.integers(min_value=0, max_value=3),
    ambiguous=st.booleans(),
)
def test_at_most_one_rule_matches_any_generated_state(
    kind: str,
    affirmation: bool,
    negation: bool,
    verbs: list[str],
    rag: list[str],
    raw: str,
    pending: bool,
    informative: bool,
    off_context: int,
    items: int,
    ambiguous: bool,
) -> None:
    intent = ExtractedIntent(
        kind=kind,  # type: ignore[arg-type]
        affirmation=affirmation,
        negation=negation,
        action_verbs=tuple(verbs),
        rag_query=tuple(rag),
        raw_text=raw,
    )
    state = ConversationState(
        pending_confirmation=PENDING if pending else None,
        informative_answer_delivered=informative,
        off_context_count=off_context,
    )
    resolved = tuple(make_item(f"I{i}") for i in range(items))
    facts = PolicyFacts(state, intent, resolved, ActionQueueBuilder().build(resolved), ambiguous)
    matching = [rule_id for rule_id, rule in RULES if rule(facts) is not None]
    assert len(matching) <= 1
    decision = PolicyEngine().decide(
        state,
        intent=intent,
        resolved_items=resolved,
        action_queue=facts.action_queue,
        has_ambiguity=ambiguous,
    )
    assert decision.rule == (matching[0] if matching else "default")
