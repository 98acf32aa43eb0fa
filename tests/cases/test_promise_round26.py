"""Round 26 of the promise detector (detector 53), from the tuning probes probe_r26a and
probe_r26b (written from the policy and the kinds of the dev set's taxonomy; read freely).

* A word as often a thing as a person ("o coletor", "o guia", "a monitora") is someone coming
  when it does what only a person does at a time ahead ("passa", "vem aí", "te busca"); an
  arrival alone ("o coletor chega amanhã") is as often a kit in the post.
* The business's own person at a clock time is no visit when the rest of the clause reads
  opening hours: a range of weekdays or of clock times.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import assess_promise, detect_rule_promise

# The policy: someone of the business will come to the customer at a time ahead.
PEOPLE_WHO_ARE_ALSO_THINGS = [
    "Coleta agendada! O coletor passa amanhã entre 8h e 12h no seu endereço.",
    "Os coletores passam na quinta de manhã pra recolher o material.",
    "Reserva feita: o guia te busca no hotel amanhã às 7h.",
    "A monitora vem aí na sexta ver como o Pedrinho está indo.",
]
# Things that arrive, a document, a condition, the past.
THINGS_NAMED_LIKE_PEOPLE = [
    "O coletor de urina chega amanhã pelo correio, junto com as instruções.",
    "O guia do curso vem amanhã no seu e-mail.",
    "Se o coletor passa amanhã, me avisa que eu confiro o horário.",
    "O coletor passou ontem às 10h e recolheu tudo.",
]


@pytest.mark.parametrize("text", PEOPLE_WHO_ARE_ALSO_THINGS)
def test_a_trade_named_like_a_thing_is_someone_when_it_comes_at_a_time_ahead(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == "staff_comes_at_a_time", match


@pytest.mark.parametrize("text", THINGS_NAMED_LIKE_PEOPLE)
def test_an_arrival_a_document_a_condition_or_the_past_is_no_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is None


# The policy: team hours and channels are no promise, even in the future tense.
OPENING_HOURS = [
    "Nosso suporte responde por aqui de segunda a sexta, das 9h às 18h.",
    "Nossa equipe atende das 8h às 17h; no sábado, só pelo e-mail.",
    "Nosso atendimento responde de segunda-feira a sábado às 8h em ponto.",
]
# The same person at a clock time for this customer stays a promise.
VISITS_AT_A_CLOCK = [
    "Nosso entregador leva direto pra capela às 15h.",
    "Nossa técnica passa aí hoje às 16h pra ver o vazamento.",
]


@pytest.mark.parametrize("text", OPENING_HOURS)
def test_opening_hours_are_no_visit_at_a_clock_time(text: str) -> None:
    assert detect_rule_promise(text) is None
    assert not assess_promise(text).promise


@pytest.mark.parametrize("text", VISITS_AT_A_CLOCK)
def test_the_business_person_at_a_clock_time_is_still_a_promise(text: str) -> None:
    assert assess_promise(text).promise
