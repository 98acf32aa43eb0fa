"""Round 28 of the promise detector: the business's vehicle named by whose it is (detector 55)
and the business's vehicle on its way (detector 56).

Detector 54 taught the rule ``own_vehicle_delivery`` that "no carro da loja" / "na van da
empresa" is the business's own vehicle; the learned stage's commitment cue still read only
"nosso caminhão" and "o carro de entrega". So a sentence no rule decides ("os docinhos chegam
no carro da loja lá pelas 16h") was settled locally as no promise and went out with no case.
The cue now reads the same names, and both leave out a partner's vehicle ("da loja parceira").

The blind set r55's first reading (on 55) sent one promise out with no case even with the
model check on: "Nosso caminhão saiu do CD agora de manhã e tá a caminho com a sua mesa de
jantar". A vehicle of the business on its way is a driver of the business on the way, as
"o motoboy está a caminho" already was (detector 56; a departure may now take five words
before "e").

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py`` (the business's own vehicle
puts one of its drivers to work; someone else's is shipping status), not the detector.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import assess_promise, detect_rule_promise

from .test_promise_round15 import cue

# The policy: the business's own vehicle coming to the customer at a time ahead.
OWN_VEHICLE_NO_RULE_READS = [
    "Os docinhos chegam no carro da loja lá pelas 16h.",
    "As flores chegam na van da empresa depois do almoço.",
]


@pytest.mark.parametrize("text", OWN_VEHICLE_NO_RULE_READS)
def test_the_cue_reads_a_vehicle_named_as_the_businesss(text: str) -> None:
    assert cue(text)


@pytest.mark.parametrize("text", OWN_VEHICLE_NO_RULE_READS)
def test_the_businesss_vehicle_is_never_settled_locally_as_no_promise(text: str) -> None:
    assessment = assess_promise(text)
    assert assessment.promise or assessment.uncertain, assessment


@pytest.mark.parametrize(
    "text",
    [
        "Os docinhos chegam no carro da loja parceira lá pelas 16h.",
        "As flores chegam na van da empresa parceira depois do almoço.",
    ],
)
def test_a_partners_vehicle_commits_nobody_of_the_business(text: str) -> None:
    assert not cue(text)


@pytest.mark.parametrize(
    "text",
    [
        "A encomenda vai na van da loja parceira amanhã às 10h.",
        "Os vasos seguem no caminhão da empresa parceira na quinta.",
    ],
)
def test_no_rule_reads_a_partners_vehicle_as_the_businesss_own(text: str) -> None:
    assert detect_rule_promise(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "A encomenda vai na van da loja amanhã às 10h.",
        "Os vasos seguem no caminhão da empresa na quinta.",
    ],
)
def test_the_businesss_own_vehicle_still_is_a_rule(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == "own_vehicle_delivery", match


# The policy: a vehicle of the business on its way to the customer carries one of its drivers,
# like "o motoboy está a caminho".
VEHICLE_ON_THE_WAY = [
    "O caminhão já está a caminho com o seu sofá.",
    "Nossa van saiu da loja agora há pouco e tá a caminho com as flores.",
    "A ambulância já está a caminho do endereço informado.",
]


@pytest.mark.parametrize("text", VEHICLE_ON_THE_WAY)
def test_the_businesss_vehicle_on_its_way_is_a_promise(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == "staff_comes_at_a_time", match


@pytest.mark.parametrize(
    "text",
    [
        # An outside carrier's or the city's vehicle: shipping status, someone else's process.
        "O caminhão da transportadora está a caminho.",
        "O caminhão da prefeitura está a caminho.",
        # The order, not a vehicle; a habit; a condition; the past.
        "Seu pedido está a caminho.",
        "Nossa van sempre está a caminho do centro às 10h.",
        "Se o caminhão já estiver a caminho, te aviso.",
        "O caminhão estava a caminho quando quebrou.",
    ],
)
def test_no_rule_reads_someone_elses_vehicle_or_a_habit_on_the_way(text: str) -> None:
    assert detect_rule_promise(text) is None
