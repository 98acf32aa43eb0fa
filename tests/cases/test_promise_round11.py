"""Round 11 of the promise detector: the customer writes first ("me avisa que eu abro um
chamado"), nouns that end like a future ("véspera", "sexta-feira"), purchases that are not a
department ("das suas compras").

Every message here was written for this test and is in no corpus or measurement set.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import detect_rule_promise
from cases.guardrail.promise_features import message_features, shape


@pytest.mark.parametrize(
    "text",
    [
        "Se a fatura não chegar até sexta, me avisa que eu abro um chamado para o financeiro.",
        "É só me chamar aqui e eu peço para o técnico passar aí.",
        "Qualquer coisa me avisa que eu já encaminho para a coordenação.",
        "Se o barulho voltar, me fala que a gente aciona a assistência.",
    ],
)
def test_an_action_after_the_customer_writes_again_is_not_a_rule_promise(text: str) -> None:
    # The AI acts in a later turn, answering the customer's next message; that reply is gated.
    assert detect_rule_promise(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Vou abrir um chamado para o financeiro e te aviso.",
        "Ele me avisou do problema, então já encaminhei para a coordenação.",
        "Me avisa se precisar de algo. Já encaminhei o seu pedido para o financeiro.",
    ],
)
def test_a_promise_beside_a_request_to_write_back_is_still_found(text: str) -> None:
    assert detect_rule_promise(text) is not None


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("feira", "W"),
        ("financeira", "W"),
        ("primeira", "W"),
        ("vespera", "W"),
        ("camara", "W"),
        ("ligara", "FUT"),
        ("enviara", "FUT"),
        ("recebera", "FUT"),
        ("resolvera", "FUT"),
    ],
)
def test_nouns_that_end_like_a_future_are_not_a_future(word: str, expected: str) -> None:
    assert shape(word) == expected


def test_purchases_are_not_people_but_the_purchasing_team_is() -> None:
    assert shape("compras") != "HUM"
    assert shape("setor") == "HUM"


def test_what_follows_a_request_to_write_back_is_scoped_like_an_instruction() -> None:
    (asked,) = message_features("me avisa que eu abro um chamado")
    (said,) = message_features("eu abro um chamado")
    assert any(feature.startswith("k:i_") for feature in asked)
    assert not any(feature.startswith("k:i_") for feature in said)
