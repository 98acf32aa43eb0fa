"""Round 20 of the promise detector (detector 46), from the first reading of the blind set r42
(longer LLM-style replies; on detector 45, never tuned on: local 0.941 / 0.96, no promise out
with the model check on).

* "esta semana" is a day ahead: "o Caio, nosso editor, faz esses ajustes esta semana".
* A person or team of the business "foi despachada para o seu endereço" is on its way.
* "pedimos que evitem chegar nesse horário" asks visitors, not staff: no rule hit.
* To the check, not a local promise: an offer whose yes the message asks for, "eles" for an
  outside party named just before, and a sentence whose only people are the customer's own.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cases.guardrail.normalize import fold
from cases.guardrail.promise import assess_promise, detect_rule_promise
from cases.guardrail.promise_bookings import offered_if_wanted
from cases.guardrail.promise_carriers import customers_own_only, pronoun_for_outside

# The policy: someone of the business will act for the customer after this message.
PROMISES = [
    "A Lúcia, nossa costureira, faz a barra da calça ainda esta semana.",
    "O marceneiro termina o armário até o fim da semana.",
    "Um técnico já foi enviado para o seu endereço e chega em até 40 minutos.",
    "A nossa equipe de manutenção foi deslocada até aí agora há pouco.",
    "Os eletricistas já foram despachados para o local.",
]
# The policy: instructions to the customer, the way a process usually works, the customer's
# own trip: no one of the business committed to act.
NOT_RULE_PROMISES = [
    "A troca de plantão é às 19h, por isso pedimos que evitem chegar nesse horário.",
    "Pedimos que tragam um documento com foto no dia da consulta.",
    "Solicitamos que os visitantes aguardem na recepção.",
    "Essa semana o técnico já passou aí duas vezes.",
    "Seu pedido foi enviado para o seu endereço pelos Correios.",
]


@pytest.mark.parametrize("text", PROMISES)
def test_staff_this_week_or_already_sent_to_the_customer_is_a_promise(text: str) -> None:
    assessment = assess_promise(text)
    assert assessment.promise, assessment


@pytest.mark.parametrize("text", NOT_RULE_PROMISES)
def test_requests_to_visitors_and_past_visits_are_no_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is None


# Offers that leave the yes to the customer: nobody acts until they answer.
OFFERS = [
    "Se não resolver, posso encaminhar para o suporte técnico. Quer que eu faça isso?",
    "Posso pedir para a equipe de cobrança revisar a fatura. Deseja que eu siga?",
    "Se preferir, podemos acionar o seguro. Quer que a gente faça isso?",
]
# Not offers: the AI commits, or nothing is asked.
COMMITTED = [
    ("vou encaminhar para o suporte tecnico.", "vou encaminhar para o suporte tecnico. tudo bem?"),
    ("posso encaminhar para o suporte.", "posso encaminhar para o suporte."),
    ("ja pedi para a equipe revisar.", "ja pedi para a equipe revisar. quer que eu faca isso?"),
]


@pytest.mark.parametrize("text", OFFERS)
def test_an_offer_whose_yes_is_asked_is_an_offer(text: str) -> None:
    folded = fold(text)
    first = folded[: folded.index(".") + 1]
    assert offered_if_wanted(folded, first)


@pytest.mark.parametrize(("sentence", "text"), COMMITTED)
def test_a_commitment_or_an_offer_nobody_asks_about_is_no_offer(sentence: str, text: str) -> None:
    assert not offered_if_wanted(text, sentence)


def _span(folded: str, sentence: str) -> tuple[int, int]:
    start = folded.index(sentence)
    return start, start + len(sentence)


def test_they_for_an_outside_party_named_just_before() -> None:
    text = fold(
        "A vistoria é feita pela própria seguradora. Você já separou o boletim? "
        "Eles vão pedir esses documentos."
    )
    assert pronoun_for_outside(text, *_span(text, "eles vao pedir esses documentos."))


@pytest.mark.parametrize(
    "text",
    [
        # The business's own people named nearer than the outside party.
        "A seguradora já recebeu o aviso. Falei com o nosso técnico. Ele vai passar aí amanhã.",
        # Someone of the business in the pronoun's own sentence.
        "A transportadora recolhe amanhã. Eles e o nosso técnico vão conferir a carga.",
    ],
)
def test_they_for_the_business_own_people_is_not_taken_for_an_outside_party(text: str) -> None:
    folded = fold(text)
    last = folded.rstrip(".").rsplit(". ", 1)[1]
    assert not pronoun_for_outside(folded, *_span(folded, last))


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("o frete esta aparecendo zerado na sua loja.", True),
        ("o relatorio ja esta no seu escritorio.", True),
        # A future or a time ahead, or the business's people: not only the customer's own.
        ("o seu tecnico vai passar ai.", False),
        ("seu contador recebe a guia amanha.", False),
        ("a nossa equipe viu o problema na sua loja.", False),
        ("o frete esta zerado.", False),
    ],
)
def test_customers_own_people_only(sentence: str, expected: bool) -> None:
    assert customers_own_only(sentence) is expected


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz .,?!", max_size=120))
def test_the_new_filters_are_total(text: str) -> None:
    # Pure functions of folded text: any text, any span, no exception.
    offered_if_wanted(text, text)
    customers_own_only(text)
    pronoun_for_outside(text, 0, len(text))
