"""The runtime's state on ``Conversation.runtime_state``: round trip, reset, reopen."""

from __future__ import annotations

from typing import Any

import pytest

from conversation.runtime import ConversationState, serialize_state
from conversation.runtime.mutations import on_finalization_emitted
from conversation.runtime.state import ConversationStatus
from conversation.runtime_adapters.store import ConversationFieldStore
from tests import factories


@pytest.fixture
def conversation(db: Any) -> Any:
    org = factories.make_org()
    return factories.make_conversation(factories.make_channel(org))


def reload(conversation: Any) -> Any:
    conversation.refresh_from_db()
    return conversation


def test_a_persisted_state_restores_on_the_next_turn(conversation):
    store = ConversationFieldStore(conversation)
    state = store.load({})
    assert store.origin == "new" and state.session_id == str(conversation.pk)
    state.turn_index = 4
    store.save({}, state)
    store.persist()

    again = ConversationFieldStore(reload(conversation))
    assert again.load({}).turn_index == 4 and again.origin == "restored"


def test_live_and_shadow_states_live_side_by_side(conversation):
    live = ConversationFieldStore(conversation, key="live")
    live.load({}).turn_index = 2
    live.persist()
    shadow = ConversationFieldStore(reload(conversation), key="shadow")
    assert shadow.load({}).turn_index == 0  # never steered by the live dialogue
    shadow.load({}).turn_index = 9
    shadow.persist()
    stored = reload(conversation).runtime_state
    assert (stored["live"]["turn_index"], stored["shadow"]["turn_index"]) == (2, 9)


@pytest.mark.parametrize(
    "stored",
    [
        ["not", "an", "object"],
        {"live": "texto"},
        {"live": {"schema_version": 7, "status": "nao-existe"}},
        {"live": {"schema_version": 7, "action_queue": {"steps": [], "cursor": 5}}},
        {"other": 1, "live": {}},
    ],
    ids=["list", "string", "bad_status", "bad_cursor", "other_layout"],
)
def test_a_state_that_does_not_restore_is_replaced_by_a_fresh_one(conversation, stored):
    conversation.runtime_state = stored
    store = ConversationFieldStore(conversation)
    state = store.load({})
    assert store.origin == "reset"
    assert (state.turn_index, state.session_id) == (0, str(conversation.pk))


def test_a_state_of_another_conversation_is_not_restored(conversation):
    conversation.runtime_state = {"live": serialize_state(ConversationState(session_id="x"))}
    store = ConversationFieldStore(conversation)
    store.load({})
    assert store.origin == "reset"


def test_an_older_version_migrates(conversation):
    old = serialize_state(ConversationState(session_id=str(conversation.pk), turn_index=3))
    old["schema_version"] = 6
    del old["invoice_snapshot"]
    conversation.runtime_state = {"live": old}
    store = ConversationFieldStore(conversation)
    assert store.load({}).turn_index == 3 and store.origin == "migrated"


def test_a_dialogue_the_runtime_closed_starts_afresh(conversation):
    store = ConversationFieldStore(conversation)
    state = store.load({})
    state.turn_index = 5
    on_finalization_emitted(state, "resolvido")
    assert state.status is ConversationStatus.CLOSED
    store.persist()
    again = ConversationFieldStore(reload(conversation))
    # Fresh, but the conversation's turn counter goes on (review r30: a new dialogue's
    # confirmations must not reuse the ids, hence the idempotency keys, of the closed one).
    reopened = again.load({})
    assert again.origin == "reopened" and reopened.status is ConversationStatus.OPEN
    assert reopened.turn_index == 5 and reopened.pending_confirmation is None
