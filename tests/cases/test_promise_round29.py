"""Round 29 of the promise detector: on the way to the customer's place by its name
(detector 57).

"Tá indo aí" was on the way; "tá indo pro seu endereço" was not. The blind set r56's first
reading (on 56) sent one promise out with no case even with the model check on: the business's
van "já saiu daqui e tá indo pro seu endereço". Going to the customer's address, house,
building or work is going "aí", for a person of the business and for its vehicle.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py`` (a person of the business on
the way to the customer is a human action under way; someone else's vehicle, the order itself
or the customer going somewhere is not), not the detector.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import detect_rule_promise

# The policy: the business's people or vehicles on their way to the customer's place.
ON_THE_WAY_BY_THE_PLACE = [
    "A van da lavanderia já saiu e tá indo pro seu endereço.",
    "Nosso caminhão está indo para o seu prédio com a geladeira.",
    "O eletricista tá indo pra sua casa agora.",
    "O motoboy já está indo ao seu escritório com os documentos.",
    "A equipe de montagem está indo até a sua obra neste momento.",
]


@pytest.mark.parametrize("text", ON_THE_WAY_BY_THE_PLACE)
def test_on_the_way_to_the_customers_place_is_a_promise(text: str) -> None:
    assert detect_rule_promise(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        # The customer goes; the order travels with no person named; a carrier's vehicle.
        "Você já está indo pra sua casa?",
        "Seu pedido está indo para o seu endereço pelos Correios.",
        "A van da transportadora tá indo pro seu endereço.",
        # A habit; a condition; the past.
        "Nossa van sempre está indo pro seu bairro às terças.",
        "Se o técnico estiver indo pra sua casa, te aviso.",
        "O técnico estava indo pra sua casa quando o carro quebrou.",
    ],
)
def test_no_rule_reads_the_customer_the_order_or_someone_elses_vehicle(text: str) -> None:
    assert detect_rule_promise(text) is None
