"""Round 23 of the promise detector: detector 52, from the first reading of the blind set r47
(on detector 51, never tuned on: local 0.98 / 0.98, share 0.21, one promise out with no case
with the check on).

The policy counts the business's own vehicle named as such a promise ("o colchão sai amanhã
no nosso caminhão": one of its drivers works for the customer). A bus company's bus is such a
vehicle when the message says it is theirs ("vai no próximo ônibus da nossa linha"); a bus the
customer rides, or the city's, is not.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import assess_promise, detect_rule_promise


@pytest.mark.parametrize(
    "text",
    [
        "Sua bagagem vai no próximo ônibus da nossa linha e chega à rodoviária às 18h.",
        "A caixa que ficou no guichê segue no nosso ônibus das 14h, tá?",
        "As encomendas saem amanhã cedo no nosso próximo ônibus para Bauru.",
    ],
)
def test_things_on_the_business_own_bus_are_a_promise(text: str) -> None:
    assert assess_promise(text).promise


@pytest.mark.parametrize(
    "text",
    [
        # The customer is the traveller.
        "Você vai no próximo ônibus da nossa linha, com saída às 21h10.",
        "O senhor embarca no nosso ônibus das 7h, plataforma 12.",
        # The city's bus: an instruction to the customer.
        "Pegue o próximo ônibus da linha 302 e desça no terminal.",
        # No vehicle of the business named: order status.
        "Sua encomenda sai hoje do terminal com previsão de chegada amanhã.",
    ],
)
def test_a_bus_the_customer_rides_or_no_bus_of_ours_is_no_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is None
