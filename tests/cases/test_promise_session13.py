"""Session 13 of the promise detector (rules 11, features f10), from the two promises of the
blind sets r17 and r18 that reached no case with the model check on: staff who go by a
nickname ("o Rafa ficou de redesenhar...") were read as no one, and a technician on the way
("um técnico tá indo aí") matched no rule.

Every message here was written for this test and is in no corpus or measurement set.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import assess_promise, detect_rule_promise
from cases.guardrail.promise_features import shape


@pytest.mark.parametrize("nickname", ["rafa", "gui", "fe", "duda", "beto", "nanda"])
def test_staff_nicknames_are_names(nickname: str) -> None:
    assert shape(nickname) == "NAME"


@pytest.mark.parametrize("word", ["mel", "digo", "clara", "re"])
def test_words_that_are_also_names_are_not_read_as_names(word: str) -> None:
    assert shape(word) != "NAME"


@pytest.mark.parametrize(
    "text",
    [
        "O Gui ficou de conferir as medidas e te manda o orçamento amanhã.",
        "A Duda vai separar as peças e te avisa quando estiverem prontas.",
        "O Beto ficou de refazer o acabamento da mesa esta semana.",
    ],
)
def test_a_promise_by_staff_with_a_nickname_is_not_let_through(text: str) -> None:
    # Found locally or sent to the model check: never confidently "no promise".
    verdict = assess_promise(text)
    assert verdict.promise or verdict.uncertain, text


@pytest.mark.parametrize(
    "text",
    [
        "Fique longe da tomada, por favor: o eletricista da nossa equipe já está a caminho.",
        "Um técnico nosso tá indo aí agora e chega em meia hora.",
        "A equipe de manutenção está se deslocando até o seu prédio.",
        "O nosso técnico está indo até você, deve chegar antes das 15h.",
    ],
)
def test_staff_on_their_way_to_the_customer_is_a_rule_hit(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == "human_is_acting", text


@pytest.mark.parametrize(
    "text",
    [
        "Seu pedido está a caminho e chega até sexta.",
        "A encomenda já está a caminho do centro de distribuição.",
        "Se o técnico estiver a caminho, você recebe um SMS automático.",
    ],
)
def test_an_order_on_its_way_or_a_hypothetical_is_no_rule_hit(text: str) -> None:
    assert detect_rule_promise(text) is None, text
