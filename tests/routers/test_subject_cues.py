"""The two change-of-subject cues of the resolver's rule 2 (routers/classification/
stickiness.py): a follow-up that names no subject stays, an opener moves at a lower
confidence. Oracles: the rule as the module states it, and hand-labelled pt-BR messages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routers.classification.stickiness import (
    NO_SUBJECT,
    OPENER,
    OPENER_MIN_CONFIDENCE,
    keeps_subject_unread,
    moves_subject,
    names_no_subject,
    opens_new_subject,
    subject_move,
)
from routers.classification.types import NONE_INTENT

MIN = 0.6

# Hand-labelled follow-ups that ask about the subject already on the table.
FOLLOW_UPS = [
    "quanto custa?",
    "e quanto tempo demora?",
    "pode ser sábado de manhã?",
    "e por quantas horas?",
    "Que horas posso chegar??",
    "qual o valor?",
    "vai demorar muito?",
    "ok, e quando fica pronto?",
]
# Hand-labelled messages that name a subject of their own.
WITH_SUBJECT = [
    "vcs aceitam vale refeição?",
    "e o frete pra Contagem, quanto fica?",
    "quero cancelar o plano",
    "meu cachorro ta vomitando desde cedo",
    "quanto custa a hidratação?",
    "tem estacionamento?",
]
OPENED = [
    "outra coisa, vcs vendem ração?",
    "Aproveitando: qual o horário de sábado?",
    "ah e vcs entregam no centro?",
    "oi, mudando de assunto, meu boleto venceu",
    "Além disso, preciso da nota fiscal",
]
NOT_OPENED = [
    "quero outra pizza igual",
    "vcs tem outra cor dessa camiseta?",
    "o boleto venceu, e agora? outra coisa que eu queria era a nota",  # opener too late
]

# Filler the cues must ignore: function words, question words, price and time words.
FILLER = st.sampled_from(
    ["e", "o", "a", "quanto", "custa", "pode", "ser", "amanhã", "sábado", "que", "horas", "qual"]
)
PUNCT = st.sampled_from(["", "?", "!", ",", "...", " 🙂"])


@pytest.mark.parametrize("text", FOLLOW_UPS)
def test_a_follow_up_without_a_subject_is_read_as_such(text: str) -> None:
    assert names_no_subject(text)


@pytest.mark.parametrize("text", WITH_SUBJECT + OPENED)
def test_a_message_that_names_its_subject_is_not(text: str) -> None:
    assert not names_no_subject(text)


@pytest.mark.parametrize("text", OPENED)
def test_a_change_of_subject_phrase_at_the_start_is_an_opener(text: str) -> None:
    assert opens_new_subject(text)


@pytest.mark.parametrize("text", NOT_OPENED + FOLLOW_UPS + WITH_SUBJECT)
def test_words_of_an_opener_elsewhere_are_not(text: str) -> None:
    assert not opens_new_subject(text)


@given(st.lists(st.tuples(FILLER, PUNCT), min_size=1, max_size=8), st.floats(0.0, 1.0))
def test_no_verdict_moves_a_conversation_on_filler_alone(
    words: list[tuple[str, str]], confidence: float
) -> None:
    text = " ".join(w + p for w, p in words)
    assert names_no_subject(text)
    assert not moves_subject(
        text, "precos", confidence, sticky_intent="agendar", min_confidence=MIN
    )


@given(
    st.lists(st.tuples(FILLER, PUNCT), max_size=5),
    st.sampled_from(["boleto", "entrega", "cachorro", "estacionamento", "reembolso"]),
    st.floats(0.0, 1.0),
)
def test_one_word_of_subject_restores_rule_2(
    words: list[tuple[str, str]], noun: str, confidence: float
) -> None:
    text = " ".join([*(w + p for w, p in words), noun])
    moved = moves_subject(text, "precos", confidence, sticky_intent="agendar", min_confidence=MIN)
    assert moved == (confidence >= MIN)


@given(st.sampled_from(OPENED), st.floats(0.0, 1.0))
def test_an_opener_moves_at_the_lower_confidence(text: str, confidence: float) -> None:
    moved = moves_subject(text, "precos", confidence, sticky_intent="agendar", min_confidence=MIN)
    assert moved == (confidence >= OPENER_MIN_CONFIDENCE)


@given(st.sampled_from(OPENED + WITH_SUBJECT), st.floats(0.0, 1.0))
def test_the_same_intent_or_none_never_moves(text: str, confidence: float) -> None:
    for intent in ("agendar", NONE_INTENT, None):
        assert not moves_subject(
            text, intent, confidence, sticky_intent="agendar", min_confidence=MIN
        )


def test_a_router_stricter_than_the_opener_floor_is_not_loosened_above_it() -> None:
    # min_confidence below the opener floor: the router's own (lower) floor applies.
    assert moves_subject(OPENED[0], "precos", 0.3, sticky_intent="agendar", min_confidence=0.25)


# Verdicts for a conversation whose subject is "agendar": the same, another, none, nothing.
VERDICT_INTENTS = st.sampled_from(["agendar", "precos", NONE_INTENT, None])


def move_from_agendar(
    text: str, intent: str | None, confidence: float, min_confidence: float
) -> tuple[bool, str]:
    return subject_move(
        text, intent, confidence, sticky_intent="agendar", min_confidence=min_confidence
    )


@given(
    st.sampled_from(OPENED + WITH_SUBJECT + FOLLOW_UPS + NOT_OPENED),
    VERDICT_INTENTS,
    st.floats(0.0, 1.0),
    st.floats(0.05, 0.95),
)
def test_a_cue_is_named_only_where_it_overturned_rule_2(
    text: str, intent: str | None, confidence: float, min_confidence: float
) -> None:
    moved, cue = move_from_agendar(text, intent, confidence, min_confidence)
    rule_2 = intent not in (None, NONE_INTENT, "agendar") and confidence >= min_confidence
    assert cue in ("", NO_SUBJECT, OPENER)
    assert (cue == "") == (moved == rule_2)
    assert cue != NO_SUBJECT or (rule_2 and not moved)
    assert cue != OPENER or (moved and not rule_2)


@given(
    st.one_of(st.text(max_size=60), st.sampled_from(OPENED + WITH_SUBJECT + FOLLOW_UPS)),
    VERDICT_INTENTS,
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_a_follow_up_left_unclassified_is_one_no_verdict_could_move(
    text: str, intent: str | None, confidence: float, min_confidence: float
) -> None:
    # The resolver skips the classifier for these: that must never change a decision.
    if keeps_subject_unread(text):
        moved, _ = move_from_agendar(text, intent, confidence, min_confidence)
        assert not moved
