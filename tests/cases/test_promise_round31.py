"""Round 31, detector 60: the business's people acting in the forms the rules did not read.

The blind set r58's first reading (on 59: local 0.953 / 0.82, three promises out even with a
perfect check) missed the team's work written as a future passive with the team as its agent,
a trade's synthetic future, the day opening the sentence before the people who come, people
who wait for the customer at a time, a commitment closed by "tá bom?", and the business's
vehicle named after the day and the place ("sai da sua casa na terça de manhã no nosso
caminhão"). Each is a person of
the business who has still to act for this customer after the message: the policy's "a person
or team will act". What the policy calls no promise stays one: the past (a relay), the habit
(a fact about the business), a passive with no agent or an outside one, a real question.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import detect_rule_promise


@pytest.mark.parametrize(
    "text",
    [
        # A future passive whose agent is the business's people.
        "A pintura do portão vai ser refeita pela nossa equipe na quinta.",
        "As cortinas serão instaladas pelos nossos montadores no sábado de manhã.",
        "A medição será conferida por um técnico nosso antes do corte.",
        # A trade's synthetic future.
        "O marceneiro fará o ajuste da porta na segunda.",
        "O montador chegará aí por volta das 10h.",
        # The day first, then the people who come or wait.
        "Amanhã cedo o encanador passa aí pra ver o vazamento.",
        "Amanhã às 8h nossos entregadores te esperam no portão 2.",
        # People who wait for the customer at a time ahead.
        "A nossa equipe te espera amanhã às 14h no galpão.",
        # The business's vehicle named a few words after the departure.
        "A geladeira sai da sua casa amanhã cedo pro conserto no nosso utilitário.",
        # A commitment closed by a tag that asks nothing.
        "A gente leva as cadeiras aí no domingo de manhã, tá bom?",
        "Passamos aí amanhã às 9h pra buscar o sofá, beleza?",
    ],
)
def test_the_business_people_acting_later_is_a_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        # The past: done, a relay.
        "A pintura do portão foi refeita pela nossa equipe na quinta.",
        # A habit: how the business works.
        "A instalação é feita pelos nossos montadores, sempre com hora marcada.",
        # A passive with no agent (automatic) or an outside one.
        "O seu reembolso será processado em até 5 dias úteis.",
        "O estorno será processado pela operadora do cartão na próxima fatura.",
        "Sua encomenda será entregue pelos Correios até sexta.",
        # A real question leaves the choice to the customer.
        "A gente leva as cadeiras aí no domingo de manhã?",
        # A condition: nobody is committed yet.
        "Se o montador vier amanhã, ele já deixa tudo pronto.",
    ],
)
def test_the_past_a_habit_an_outside_agent_or_a_question_is_no_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is None
