"""Session 14 of the promise detector (detector 13), from the one promise of the blind set
r20 that reached no case with the model check on: a courier who had already left ("já saiu
com suas peças") "e deve chegar" in minutes. The commitment cue passed no actor on from a
clause that told the past, so the clause that followed, opening on its verb with no subject
of its own, had no one to commit.

Every message here was written for this test and is in no corpus or measurement set.
"""

from __future__ import annotations

import pytest

from cases.guardrail.normalize import fold
from cases.guardrail.promise import assess_promise
from cases.guardrail.promise_cue import commitment_cue


def cue(text: str) -> bool:
    folded = fold(text)
    return commitment_cue(folded, 0, len(folded))


# A person of the business did something, then, with the same subject left unsaid, will do
# something for the customer: a promise.
ELLIPTIC_PROMISES = [
    "O entregador já pegou o seu bolo na confeitaria e deve chegar aí em meia hora.",
    "O instalador terminou o serviço no vizinho e vai passar aí depois do almoço.",
    "O Rafa saiu daqui agora com o seu pedido e deve tocar o interfone em uns 15 minutos.",
    "O pessoal da montagem já carregou o caminhão e vai chegar no seu prédio às 14h.",
]


@pytest.mark.parametrize("text", ELLIPTIC_PROMISES)
def test_a_verb_first_clause_keeps_the_actor_of_a_past_clause(text: str) -> None:
    assert cue(text), text


@pytest.mark.parametrize("text", ELLIPTIC_PROMISES)
def test_such_a_promise_is_found_or_sent_to_the_check(text: str) -> None:
    verdict = assess_promise(text)
    assert verdict.promise or verdict.uncertain, text


@pytest.mark.parametrize(
    "text",
    [
        # A new subject that is no actor: the technician's past act, then a thing's state.
        "O técnico trocou o disjuntor e a energia deve voltar em instantes.",
        # The same subject, still in the past.
        "O motoboy saiu às 10h e entregou tudo na portaria às 10h20.",
        # The past without a second clause.
        "O motoboy já saiu com as suas peças.",
        # A past subject, then a clause that opens with the customer.
        "A montadora esteve aí ontem e você pode chamar de novo se precisar.",
    ],
)
def test_a_past_actor_is_not_carried_into_a_clause_with_a_subject_or_no_verb(text: str) -> None:
    assert not cue(text), text
