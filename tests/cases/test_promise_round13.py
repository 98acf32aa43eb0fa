"""Round 13 of the promise detector (features f9): how a process usually goes is a description,
not a commitment ("normalmente o pessoal liga"); advice is an instruction to the customer
("recomendo ligar para o consultor"); "consegue" is an ability; "câmera" is no future.

Every message here was written for this test and is in no corpus or measurement set.
"""

from __future__ import annotations

import pytest

from cases.guardrail.normalize import fold
from cases.guardrail.promise_features import message_features, shape
from cases.guardrail.promise_learned import learned_model


def _keys(text: str) -> set[str]:
    return {
        f
        for sentence in message_features(fold(text))
        for f in sentence
        if f.startswith(("k:", "p:"))
    }


def test_a_habitual_word_marks_the_rest_of_the_sentence_across_commas() -> None:
    habit = _keys("Normalmente, quando o móvel chega, o pessoal da montagem liga para agendar.")
    plain = _keys("Quando o móvel chega, o pessoal da montagem liga para agendar.")
    assert any("h_HUM" in feature for feature in habit)
    assert not any("h_" in feature for feature in plain)


def test_a_contrast_ends_the_habitual_scope() -> None:
    keys = _keys("Normalmente leva dois dias, mas a equipe vai te ligar hoje.")
    # "a equipe vai te ligar" after "mas" keeps the plain frame of a promise.
    assert "k:HUM FUT" in keys
    assert not any("h_FUT" in feature for feature in keys)


def test_a_quantifier_opens_no_habitual_scope() -> None:
    keys = _keys("Assim que chegarem todos os documentos, a equipe vai analisar o seu pedido.")
    assert not any("h_" in feature for feature in keys)


@pytest.mark.parametrize("advice", ["recomendo", "sugiro", "aconselho", "recommend"])
def test_advice_scopes_what_follows_like_an_instruction(advice: str) -> None:
    (sentence,) = message_features(f"{advice} ligar para o nosso consultor")
    assert any(feature.startswith("k:i_") or "<i_" in feature for feature in sentence)


@pytest.mark.parametrize(
    ("word", "expected"),
    [("camera", "W"), ("cratera", "W"), ("consegue", "consegue"), ("retornara", "FUT")],
)
def test_word_shapes_of_round_13(word: str, expected: str) -> None:
    assert shape(word) == expected


@pytest.mark.parametrize(
    ("habitual", "committed"),
    [
        (
            "Normalmente o pessoal da montagem liga para agendar a visita.",
            "O pessoal da montagem vai ligar para agendar a visita.",
        ),
        (
            "Costuma funcionar assim: quando o laudo sai, o laboratório te manda por e-mail.",
            "Quando o laudo sair, o laboratório vai te mandar por e-mail.",
        ),
    ],
)
def test_a_habit_scores_below_the_same_action_promised(habitual: str, committed: str) -> None:
    model = learned_model()
    assert model.score(habitual).probability < model.score(committed).probability
