"""Round 27 of the promise detector (detector 54), from the blind set r52's first reading (a
security agent on the way went out with no case even with the model check on).

* A security company's field staff ("o agente de pronta-resposta", "o vigilante", "a
  socorrista") are people on their way like a technician or a courier.
* A vehicle named as the business's by whose it is ("no carro da loja", "na van da empresa")
  puts one of its drivers to work, like "no nosso caminhão"; a partner's is not the
  business's own.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import assess_promise, detect_rule_promise

# The policy: a person of the business is already acting for the customer, still to arrive.
FIELD_STAFF_ON_THE_WAY = [
    "O alarme disparou e nossa central já acionou o agente de ronda, que está a caminho.",
    "Os vigilantes já estão a caminho da sua loja.",
    "A socorrista está a caminho, fique com o celular por perto.",
]
# The policy: the business's own vehicle named as such (DESIGN §10, round 15).
OWN_VEHICLE_BY_WHOSE = [
    "Os convites seguem amanhã no carro da loja, direto pra sua casa.",
    "A encomenda vai na van da empresa na quinta de manhã.",
]
# Not the business's vehicle, or the customer's own trip: no rule decides these.
NOT_THE_BUSINESS_VEHICLE = [
    "O pedido vai no carro da loja parceira, que entrega na sua região.",
    "Você pode ir no carro da empresa até a portaria e estacionar na vaga 3.",
]


@pytest.mark.parametrize("text", FIELD_STAFF_ON_THE_WAY)
def test_a_security_companys_field_staff_on_the_way_is_a_promise(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == "staff_on_the_way", match
    assert assess_promise(text).promise


@pytest.mark.parametrize("text", OWN_VEHICLE_BY_WHOSE)
def test_the_business_vehicle_named_by_whose_it_is_is_a_promise(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == "own_vehicle_delivery", match


@pytest.mark.parametrize("text", NOT_THE_BUSINESS_VEHICLE)
def test_a_partners_vehicle_or_the_customers_trip_is_no_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is None
