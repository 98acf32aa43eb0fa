from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from conversation.runtime.confirmation_manager import ConfirmationManager
from conversation.runtime.state import (
    ActionQueue,
    ActionStep,
    ConversationState,
    ConversationStatus,
    PendingWorkflowResume,
)


def asked_state(turn: int = 3) -> tuple[ConversationState, ActionQueue]:
    state = ConversationState(session_id="conv-1", turn_index=turn)
    queue = ActionQueue([ActionStep("cancelar_vas_avulso", "Vivo Play VOD")])
    ConfirmationManager().create_confirmation(
        state, queue, prompt_text="Confirma?", turn_index=turn
    )
    return state, queue


def test_create_confirmation_stores_a_copy_and_awaits() -> None:
    state, queue = asked_state()
    pending = state.pending_confirmation
    assert pending is not None and pending.id == "conv-1#3" and pending.asked_turn_index == 3
    assert pending.authorized_queue is not queue and queue.steps[0].action_id == ""
    # Each step is stamped with the consent that covers it and its place in that queue.
    assert pending.authorized_queue == ActionQueue(
        [replace(queue.steps[0], action_id="conv-1#3/0")]
    )
    assert state.status is ConversationStatus.AWAITING_CONFIRMATION


def test_a_step_keeps_its_action_id_when_asked_about_again() -> None:
    """A retry (or the same question again) authorises the same action: the same id."""
    state = ConversationState(session_id="conv-1", turn_index=7)
    retried = ActionStep("cancelar_vas_avulso", "Vivo Play VOD", action_id="conv-1#3/0")
    added = ActionStep("vas_estrategico", "HBO Max")
    ConfirmationManager().create_confirmation(
        state, ActionQueue([retried, added]), prompt_text="De novo?", turn_index=7
    )
    assert state.pending_confirmation is not None
    steps = state.pending_confirmation.authorized_queue.steps
    assert [s.action_id for s in steps] == ["conv-1#3/0", "conv-1#7/1"]


def test_a_yes_while_a_workflow_waits_queues_the_new_steps_behind_the_paused_one() -> None:
    paused_step = ActionStep("vas_estrategico", "HBO Max", action_id="conv-1#1/0")
    state = ConversationState(
        session_id="conv-1",
        turn_index=3,
        action_queue=ActionQueue([paused_step], cursor=1),
        pending_workflow=PendingWorkflowResume(
            "vas_estrategico", "HBO Max", "exec-1", "manter", ("sim", "nao"), "Manter?"
        ),
    )
    again = ActionStep("vas_estrategico", "HBO Max")  # the waiting step, asked for again
    new = ActionStep("cancelar_vas_avulso", "Tamboro")
    manager = ConfirmationManager()
    manager.create_confirmation(state, ActionQueue([new, again]), prompt_text="?", turn_index=3)
    confirmed = manager.consume_if_confirmed(state, "sim", current_turn_index=4)
    assert confirmed is not None and len(confirmed.steps) == 2  # what the customer confirmed
    queue = state.action_queue
    assert [s.subject for s in queue.steps] == ["HBO Max", "Tamboro"] and queue.cursor == 1
    assert queue.steps[0] is paused_step and state.pending_workflow is not None


def test_create_confirmation_refuses_an_exhausted_queue() -> None:
    with pytest.raises(ValueError):
        ConfirmationManager().create_confirmation(
            ConversationState(), ActionQueue(), prompt_text="?", turn_index=1
        )


def test_yes_on_the_next_turn_returns_the_authorized_queue() -> None:
    state, queue = asked_state()
    consumed = ConfirmationManager().consume_if_confirmed(state, " Sim ", current_turn_index=4)
    stamped = ActionQueue([replace(queue.steps[0], action_id="conv-1#3/0")])
    assert consumed == stamped
    assert state.action_queue == stamped and state.pending_confirmation is None
    assert state.status is ConversationStatus.EXECUTING_ACTION


@pytest.mark.parametrize("turn", [3, 5, 10])
def test_yes_on_the_wrong_turn_returns_none(turn: int) -> None:
    state, _ = asked_state()
    assert ConfirmationManager().consume_if_confirmed(state, "sim", current_turn_index=turn) is None
    assert state.pending_confirmation is not None


def test_yes_while_open_returns_none() -> None:
    state, _ = asked_state()
    state.status = ConversationStatus.OPEN  # test setup: simulate another event owning the turn
    assert ConfirmationManager().consume_if_confirmed(state, "sim", current_turn_index=4) is None


def test_yes_without_pending_returns_none() -> None:
    state = ConversationState(status=ConversationStatus.AWAITING_CONFIRMATION)
    assert ConfirmationManager().consume_if_confirmed(state, "sim", current_turn_index=1) is None


def test_negation_on_the_right_turn_returns_none_and_changes_nothing() -> None:
    state, _ = asked_state()
    before = copy.deepcopy(state)
    assert ConfirmationManager().consume_if_confirmed(state, "não", current_turn_index=4) is None
    assert state == before


@pytest.mark.parametrize("text", ["claro", "ok", "sim, mas", "pode ser"])
def test_non_canonical_affirmation_returns_none(text: str) -> None:
    state, _ = asked_state()
    assert ConfirmationManager().consume_if_confirmed(state, text, current_turn_index=4) is None


def test_a_yes_only_the_classifier_recognised_never_consumes() -> None:
    # DESIGN §10.1 / issue 11 item 2: guard 3 reads the text, not the classifier's flag.
    state, _ = asked_state()
    manager = ConfirmationManager()
    for text in ("ok, pode", "pode cancelar sim", "claro", "quero sim", "ok"):
        assert manager.consume_if_confirmed(state, text, current_turn_index=4) is None
    assert state.pending_confirmation is not None  # untouched: it can still be answered
    assert manager.consume_if_confirmed(state, "Sim!", current_turn_index=4) is not None
