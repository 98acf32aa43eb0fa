"""Rounds 11 and 12 of the promise detector: the customer writes first ("me avisa que eu abro
um chamado"), nouns that end like a future ("véspera", "sexta-feira"), purchases that are not a
department ("das suas compras"); a request under review by a team; "Mr." and "R$ 1.200,50"
end no sentence; an offer followed by "Quer?" is a question.

Every message here was written for this test and is in no corpus or measurement set.
"""

from __future__ import annotations

import pytest

from cases.guardrail.normalize import fold
from cases.guardrail.promise import detect_rule_promise
from cases.guardrail.promise_features import sentence_spans, shape
from cases.guardrail.promise_ngrams import message_features


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


@pytest.mark.parametrize(
    "text",
    [
        "Seu pedido de troca foi registrado e está em análise pela equipe de qualidade.",
        "A sua proposta segue em avaliação com o financeiro.",
        "O reembolso está em análise no jurídico desde ontem.",
    ],
)
def test_a_request_under_review_by_a_team_is_a_rule_promise(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == "under_review_by_human"


@pytest.mark.parametrize(
    "text",
    [
        "Seu pedido não está em análise pela equipe: ele foi aprovado automaticamente.",
        "O seu cadastro está em análise pelo sistema antifraude.",
        "O documento está em análise.",
    ],
)
def test_review_by_no_one_or_negated_is_not_a_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is None


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("I can't guarantee that Mr. Lewis will sign it today.", 1),
        ("A Dra. Paula confirmou o horário. Até amanhã!", 2),
        ("O valor ficou em R$ 1.200,50. O técnico passa amanhã.", 2),
        ("Tudo certo. Obrigado!", 2),
    ],
)
def test_titles_and_numbers_end_no_sentence(text: str, sentences: int) -> None:
    folded = fold(text)
    assert len(message_features(folded)) == sentences
    assert len(sentence_spans(folded)) == sentences


def test_a_number_keeps_its_clause() -> None:
    (features,) = message_features(fold("nao cobramos os R$ 89,90 da visita"))
    # The comma inside the number closes no negation scope: the whole clause stays negated.
    assert "u:8990" in features
    assert not any(feature == "b:, 90" for feature in features)


def test_an_offer_followed_by_a_short_acceptance_question_is_read_as_a_question() -> None:
    offer, _ = message_features(fold("Posso pedir para o Lucas reagendar a visita. Quer?"))
    commitment, _ = message_features(fold("Vou pedir para o Lucas reagendar a visita. Pode ser?"))
    plain = message_features(fold("Posso pedir para o Lucas reagendar a visita."))[0]
    assert "q" in offer and "q" not in plain
    assert "q" not in commitment  # "vou pedir" commits whatever the question after it
