"""Consent (DESIGN §10.1) and end phrases (§10.2): the pure reading of short answers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversation.runtime.consent import (
    awaits_answer,
    is_bare_affirmation,
    is_canonical_yes,
    note_unseen_turn,
    qualifier,
)
from conversation.runtime.intent_extractor import IntentExtractor, is_goodbye
from conversation.runtime.serialization import deserialize_state, serialize_state
from conversation.runtime.state import ActionQueue, ConversationState, PendingConfirmation

from .conftest import ScriptedClassifier

END = IntentExtractor.END_PHRASES


@pytest.mark.parametrize(
    "text", ["sim", "Sim!", "SIM!!!", "siiiim", "Sim 👍", "sím", "Confirmo.", "isso mesmo"]
)
def test_canonical_yes_survives_case_accents_stretching_emoji_and_punctuation(text: str) -> None:
    assert is_canonical_yes(text)


@pytest.mark.parametrize("text", ["sim, obrigado", "sim\nobrigado", "Sim, por favor!"])
def test_canonical_yes_with_a_thank_you_is_still_a_yes(text: str) -> None:
    assert is_canonical_yes(text)


@pytest.mark.parametrize(
    "text",
    [
        "sim, mas só o VOD",
        "sim, menos o Tamboro",
        "sim, e cancela o Tamboro também",
        "sim, quer dizer, não",
        "acho que sim",
        "👍",
        "claro",
        "ok",
        "sim não",
        "",
    ],
)
def test_qualified_doubtful_contradictory_or_empty_answers_are_not_canonical(text: str) -> None:
    assert not is_canonical_yes(text)


@pytest.mark.parametrize("text", ["ok, pode", "pode cancelar sim", "claro", "quero sim", "ok"])
def test_bare_affirmations_a_classifier_may_vouch_for(text: str) -> None:
    assert is_bare_affirmation(text)


@pytest.mark.parametrize(
    "text", ["sim, mas só o VOD", "acho que sim", "sim, quer dizer, não", "pode, exceto o jogo"]
)
def test_an_affirmation_with_anything_else_is_not_bare(text: str) -> None:
    assert not is_bare_affirmation(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("sim, mas só o VOD", "only"),
        ("apenas o HBO", "only"),
        ("sim, menos o Tamboro", "except"),
        ("pode, exceto o jogo", "except"),
        ("sim, e cancela o Tamboro também", "also"),
        ("na verdade, o HBO Max", "correction"),
        ("sim", None),
        ("era só isso", None),
    ],
)
def test_qualifiers_that_make_an_answer_a_new_request(text: str, kind: str | None) -> None:
    assert qualifier(text) == kind


@pytest.mark.parametrize(
    "text",
    ["cancelar, obrigada", "tchau", "Obrigada!", "é só isso", "não, só isso obrigada",
     "era só isso mesmo, obrigada", "obrigado pela explicação", "valeu, tchau"],
)  # fmt: skip
def test_goodbyes_still_end(text: str) -> None:
    assert is_goodbye(text, END)
    assert IntentExtractor(ScriptedClassifier({})).extract(
        text, state=ConversationState()
    ).kind == ("human_or_end")


@pytest.mark.parametrize(
    "text",
    [
        "fui obrigado a pagar isso, cancela o Tamboro",
        "caso isso continue vou cancelar o VOD",
        "sim, obrigado",
        "obrigado, mas quero cancelar o VOD",
        "estou obrigada a pagar esse serviço?",
    ],
)
def test_end_phrases_inside_content_or_with_a_yes_do_not_end(text: str) -> None:
    assert not is_goodbye(text, END)


def test_a_yes_with_thanks_is_read_as_a_yes_by_the_fast_path() -> None:
    fake = ScriptedClassifier({})
    intent = IntentExtractor(fake).extract("sim\nobrigado", state=ConversationState())
    assert intent.kind == "confirmation_response" and intent.affirmation
    assert intent.source == "rules" and fake.calls == []


def test_a_goodbye_starting_with_no_declines_what_was_asked() -> None:
    intent = IntentExtractor(ScriptedClassifier({})).extract(
        "não, só isso, obrigada", state=ConversationState()
    )
    assert intent.kind == "human_or_end" and intent.negation


def pending_state() -> ConversationState:
    return ConversationState(
        session_id="s",
        turn_index=3,
        pending_confirmation=PendingConfirmation("s#3", ActionQueue(), 3, "Você confirma?"),
        informative_answer_delivered=True,
    )


def test_an_unseen_turn_moves_the_counter_and_closes_the_informative_question() -> None:
    before = pending_state()
    after = note_unseen_turn(before, "human_owned")
    assert after.turn_index == 4 and not after.informative_answer_delivered
    assert after.pending_confirmation == before.pending_confirmation
    assert after.decision_trace[-1] == {
        "turn": 4,
        "decision": "unseen_turn",
        "reason": "human_owned",
    }
    assert before.turn_index == 3 and before.informative_answer_delivered  # pure
    assert deserialize_state(serialize_state(after)) == after


def test_awaits_answer_only_while_a_question_is_open() -> None:
    assert awaits_answer(pending_state())
    assert not awaits_answer(ConversationState())


@given(st.text(max_size=40))
def test_a_canonical_yes_is_always_a_bare_affirmation(text: str) -> None:
    if is_canonical_yes(text):
        assert is_bare_affirmation(text)
        assert qualifier(text) is None
