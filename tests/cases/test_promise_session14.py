"""Session 14 of the promise detector (detectors 13 and 14), from the one promise of the blind set
r20 that reached no case with the model check on: a courier who had already left ("já saiu
com suas peças") "e deve chegar" in minutes. The commitment cue passed no actor on from a
clause that told the past, so the clause that followed, opening on its verb with no subject
of its own, had no one to commit. Then r21's two: a crew "já saíram... e chegam aí" (a plural
present opens the clause) and a florist, whom the learned stage read as no one.

Every message here was written for this test and is in no corpus or measurement set.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import detect_rule_promise
from cases.guardrail.promise_features import shape

# A person of the business did something, then, with the same subject left unsaid, will do
# something for the customer: a promise.
ELLIPTIC_PROMISES = [
    "O entregador já pegou o seu bolo na confeitaria e deve chegar aí em meia hora.",
    "O instalador terminou o serviço no vizinho e vai passar aí depois do almoço.",
    "O Rafa saiu daqui agora com o seu pedido e deve tocar o interfone em uns 15 minutos.",
    "O pessoal da montagem já carregou o caminhão e vai chegar no seu prédio às 14h.",
]


# Each is also found or sent to the model check (test_promise_session13's found-or-checked
# test), and read by the cue (test_promise_round15's cue tests, with the lists below).

# A past actor is not carried into a clause with a subject of its own, or with no verb.
PAST_ACTOR_NOT_CARRIED = [
    # A new subject that is no actor: the technician's past act, then a thing's state.
    "O técnico trocou o disjuntor e a energia deve voltar em instantes.",
    # The same subject, still in the past.
    "O motoboy saiu às 10h e entregou tudo na portaria às 10h20.",
    # The past without a second clause.
    "O motoboy já saiu com as suas peças.",
    # A past subject, then a clause that opens with the customer.
    "A montadora esteve aí ontem e você pode chamar de novo se precisar.",
]


# --- detector 14, from r21's two promises that went out with no case with the check on -------


@pytest.mark.parametrize(
    "text",
    [
        "Fica tranquila, o chaveiro já está a caminho do seu prédio.",
        "Os rapazes da entrega tão indo aí agora com a geladeira.",
        "A entregadora da padaria já tá a caminho com as suas encomendas.",
        "O eletricista Juca está se deslocando até a sua casa.",
    ],
)
def test_a_trade_on_its_way_to_the_customer_is_a_rule_hit(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == "staff_on_the_way", text


@pytest.mark.parametrize(
    "text",
    [
        # An outside carrier's courier: shipping status, not the business acting.
        "O entregador da transportadora está a caminho.",
        "O motorista do aplicativo já está a caminho.",
        # A trade as the subject of anything but being on the way stays with the learned stage.
        "O motoboy está esperando na portaria.",
        "O chaveiro estava a caminho quando a senhora ligou.",
        # No person: an order on its way.
        "Seu pedido está a caminho com a transportadora.",
    ],
)
def test_on_the_way_without_a_trade_of_the_business_is_no_rule_hit(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is None or match.rule_id != "staff_on_the_way", text


@pytest.mark.parametrize("word", ["rapazes", "florista", "chaveiro", "entregadora", "motoboys"])
def test_plural_and_feminine_staff_and_trades_are_people(word: str) -> None:
    assert shape(word) == "HUM"


# A plural present opens the clause and keeps the past clause's actor (test_promise_round15).
PLURAL_PRESENT_PROMISES = [
    "Os meninos do estoque já separaram tudo e levam aí amanhã cedo.",
    "Os instaladores terminaram a obra ao lado e chegam na sua loja às 15h.",
]


# --- detector 15 (features f12) ----------------------------------------------------------------


@pytest.mark.parametrize("word", ["paisagista", "projetista", "recepcionista", "manobristas"])
def test_a_word_in_ista_is_a_person(word: str) -> None:
    assert shape(word) == "HUM"


@pytest.mark.parametrize("word", ["revista", "prevista", "entrevista", "conquistas", "lista"])
def test_nouns_in_ista_that_are_no_one_are_not_people(word: str) -> None:
    assert shape(word) != "HUM"
