"""Round 30 of the promise detector: people named on the way, errands, and what a habit is
(detector 58).

The blind set r57's first reading (on 57) found the local stages blind to a person of the
business named rather than described ("o Tião já tá indo pra vaga 14 ver a bomba": no list
knows Tião), to the English of a person on the way or due at a place ("our delivery guy is on
his way", "our mechanic will be at the marina tomorrow"), to the business's tow truck, and to a
vehicle on its way in a sentence that said "com todo cuidado": a bare "todo" read as a habit
("toda terça") and took the promise back.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py`` (a person of the business on
the way to the customer or to a job for them is a human action under way; the order itself,
the customer's own people, a carrier, the business's habits are not), not the detector.
"""

from __future__ import annotations

import pytest

from cases.guardrail.lexicon import HABIT_WORDS
from cases.guardrail.promise import detect_human_promise, detect_rule_promise

# The policy: the business's people (by a name, known or not) or vehicles on their way.
NAMED_ON_THE_WAY = [
    "A Bia já tá a caminho com as suas alianças.",
    # Names no list knows, read from their capitals.
    "O Dinho já está a caminho, chega em 15 minutos.",
    "Pode ficar tranquila: a Cidinha tá indo pra sua casa agora.",
    "O Betão, nosso motorista, tá indo pro depósito buscar o seu sofá.",
    "O Zeca, nossa cria da oficina, já tá indo pra garagem trocar o pneu 👍",
]
ERRANDS_AND_VEHICLES = [
    "O encanador tá indo pro prédio trocar o registro.",
    "Nosso reboque busca o seu carro amanhã às 8h.",
    # "todo" without a period is no habit.
    "Nosso caminhão já está a caminho com todo o cuidado que a sua mudança merece.",
]
ENGLISH = [
    "Our plumber is on his way, he should be there in half an hour.",
    "Our electrician will be at your house tomorrow at 10 to replace the breaker.",
    "Our driver is on the way with your order.",
]


@pytest.mark.parametrize("text", [*NAMED_ON_THE_WAY, *ERRANDS_AND_VEHICLES, *ENGLISH])
def test_the_business_on_its_way_is_a_promise_for_the_local_stages(text: str) -> None:
    match = detect_human_promise(text)
    assert match is not None
    assert match.rule_id != "learned"  # a rule, explainable, not a score near the threshold


@pytest.mark.parametrize(
    "text",
    [
        # The order travels; the customer's own person; no job named.
        "Seu pedido já está a caminho.",
        "O pedido da Ana já está a caminho pelos Correios.",
        "O motorista tá indo pra garagem agora, o expediente acabou.",
        # Habits said with their period.
        "Nossa van passa no seu bairro toda terça às 9h.",
        "Nosso caminhão passa aí todos os dias às 8h.",
        # English facts and offers.
        "The office will be closed tomorrow.",
        "If you want, our mechanic can be there tomorrow.",
    ],
)
def test_no_rule_reads_the_order_a_carrier_a_habit_or_an_offer(text: str) -> None:
    assert detect_rule_promise(text) is None


def test_an_unknown_name_is_read_from_the_marked_text_only() -> None:
    # The plain fold names nobody; the mark of ``promise_names`` is what makes "Dinho" someone.
    assert detect_rule_promise("O Dinho já está a caminho.") is None
    match = detect_human_promise("O Dinho já está a caminho.")
    assert match is not None and match.rule_id == "named_on_the_way"
    # Reported on the message's own text, not the marked one.
    assert match.start == 0 and match.end >= len("O Dinho já está a caminho")


@pytest.mark.parametrize("word", ["todo", "toda", "todos", "todas"])
def test_a_bare_todo_is_not_a_habit_but_every_period_with_it_is(word: str) -> None:
    assert word not in HABIT_WORDS
    assert any(habit.startswith(f"{word} ") for habit in HABIT_WORDS)
