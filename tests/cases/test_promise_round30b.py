"""Round 30, detector 59: the customer addressed with an honorific is nobody acting, and an
English carrier named before its driver is someone else's.

The blind set r57's first reading left one local false positive: "Um instante, Seu Joaquim, vou
conferir aqui na sua ficha..." - the AI checking its own records now, the policy's first
example of what is NOT a promise, read as one because "Seu Joaquim" (the customer, addressed)
counted as a person in the sentence. The comma's and the greeting's vocative now take an
honorific ("Seu", "Dona", "Sr.", "Sra."), as they took a bare name ("Um instantinho, Carla, já
te retorno"). And "the FedEx driver is on his way" no longer reads as the business's driver.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import detect_human_promise, detect_rule_promise
from cases.guardrail.promise_names import addressed_names


@pytest.mark.parametrize(
    "text",
    [
        # The AI's own work, now, with the customer addressed by an honorific and a name.
        "Oi Dona Cida, vou checar aqui rapidinho e já te digo.",
        "Um momento, Sr. Paulo, deixa eu ver aqui a sua fatura que já te respondo.",
        "Um instante, Seu Armando, vou conferir aqui no sistema qual plano o senhor tem.",
    ],
)
def test_the_ai_checking_now_with_the_customer_addressed_is_no_local_promise(text: str) -> None:
    assert detect_human_promise(text) is None


@pytest.mark.parametrize(
    "text",
    [
        # Somebody of the business still acts: the vocative does not hide them.
        "Oi Dona Cida, o técnico vai passar aí amanhã às 9h.",
        "Um instante, Seu Armando, já pedi pro financeiro te ligar.",
    ],
)
def test_a_person_of_the_business_next_to_a_vocative_is_still_a_promise(text: str) -> None:
    assert detect_human_promise(text) is not None


def test_the_vocative_with_an_honorific_names_the_honorific_and_the_name() -> None:
    assert addressed_names("oi dona cida, vou checar aqui") == {"dona", "cida"}
    assert addressed_names("um instante, sr. paulo, ja te respondo") == {"sr", "paulo"}
    assert addressed_names("um instantinho, carla, ja te retorno") == {"carla"}


@pytest.mark.parametrize(
    "text", ["The FedEx driver is on his way with your parcel.", "The DHL courier is on his way."]
)
def test_an_english_carriers_driver_on_the_way_is_no_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is None


def test_the_business_driver_on_the_way_in_english_is_still_a_rule_promise() -> None:
    assert detect_rule_promise("Our driver is on his way with your order.") is not None
    assert detect_rule_promise("The technician is on his way.") is not None
