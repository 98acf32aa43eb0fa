from __future__ import annotations

import copy

import pytest

from conversation.runtime.confirmation_manager import ConfirmationManager
from conversation.runtime.state import (
    ActionQueue,
    ActionStep,
    ConversationState,
    ConversationStatus,
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
    assert pending.authorized_queue == queue and pending.authorized_queue is not queue
    assert state.status is ConversationStatus.AWAITING_CONFIRMATION


def test_create_confirmation_refuses_an_exhausted_queue() -> None:
    with pytest.raises(ValueError):
        ConfirmationManager().create_confirmation(
            ConversationState(), ActionQueue(), prompt_text="?", turn_index=1
        )


def test_yes_on_the_next_turn_returns_the_authorized_queue() -> None:
    state, queue = asked_state()
    consumed = ConfirmationManager().consume_if_confirmed(state, " Sim ", current_turn_index=4)
    assert consumed == queue
    assert state.action_queue == queue and state.pending_confirmation is None
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
