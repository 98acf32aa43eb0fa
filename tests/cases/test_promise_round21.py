"""Round 21 of the promise detector (detector 47, features f19), from the first reading of the
blind set r43 (on detector 46, never tuned on: local 0.94 / 0.94, no promise out with the
model check on).

* A name in apposition after the subject of a visit: "o motorista, Seu Nilton, chega aí".
* A relay of a talk with someone stands when that person acts for the customer now ("falei
  com o Beto: ele te pega às 7h30"), not when they acted before ("ela te mandou").
* To the check, never a local promise: a standing schedule ("às terças e quintas"), the AI's
  own "já te retorno" whose only name is a complement with its honorific ("da Dra. Vanessa").
* Names after "com o" / "para a" are marked for the learned stage, and after a bare article a
  name may end its sentence; "a fono" is a person.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cases.guardrail.normalize import fold
from cases.guardrail.promise import assess_promise, detect_rule_promise
from cases.guardrail.promise_features import token_info
from cases.guardrail.promise_names import NAME_MARK, NOT_NAMES, mark_names
from cases.guardrail.promise_relays import relayed_or_instructed
from cases.guardrail.promise_stall import immediate_stall

# The policy: someone of the business will act for the customer after this message.
RULE_PROMISES = [
    "O instalador, Seu Jair, chega aí amanhã às 8h.",
    "A eletricista, Dona Rosa, passa aí na quinta de manhã.",
    "O motoboy, o Kiko, leva o pedido aí em uns 20 minutos.",
]
PROMISES = [
    *RULE_PROMISES,
    "Conversei com o Juca agora: ele te busca na rodoviária às 18h.",
    "Falei com a Dirce: ela te encaixa no sábado às 10h.",
    "Vou encaminhar o seu laudo para a fono, tudo bem?",
    "Vou passar o seu pedido para o Quinzinho.",
    "Vou confirmar com a Zuleica e já te falo o valor.",
]
# The policy: no commitment — a hedge, the agenda as it stands, the AI's own immediate return,
# what someone already did.
NOT_LOCAL_PROMISES = [
    "Não posso garantir que o veterinário vai conseguir te atender hoje.",
    "As consultas com a Dra. Helena são às segundas e quartas, a partir das 14h.",
    "Os atendimentos do Dr. Mauro acontecem nas terças, das 8h às 12h.",
    "Só um instante, já te retorno com a agenda do Dr. Mauro.",
    "Falei com a Dirce: ela te mandou o orçamento ontem.",
]


@pytest.mark.parametrize("text", RULE_PROMISES)
def test_a_named_apposition_keeps_the_visit_a_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is not None


@pytest.mark.parametrize("text", PROMISES)
def test_named_people_acting_for_the_customer_are_promises(text: str) -> None:
    assessment = assess_promise(text)
    assert assessment.promise, assessment


@pytest.mark.parametrize("text", NOT_LOCAL_PROMISES)
def test_hedges_schedules_and_past_relays_are_no_local_promise(text: str) -> None:
    assert not assess_promise(text).promise


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("os horarios com a dra. fernanda sao as tercas e quintas a tarde.", True),
        ("falei com o beto: ele te pega em casa as 7h30.", False),
        ("falei com a renata: ela te mandou o orcamento.", True),
        ("o tecnico passa ai amanha as 9h.", False),
        ("vou pedir para a dra. fernanda te atender nas tercas.", False),
    ],
)
def test_schedule_and_relay_reading(sentence: str, expected: bool) -> None:
    assert relayed_or_instructed(sentence) is expected


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        # The AI's own return, the names only a complement's: nobody else acts.
        ("Um instante, já te retorno com os horários da Dra. Vanessa.", True),
        ("Um minutinho, já te passo a agenda do Seu Tião.", True),
        # Someone named the AI goes to: not a stall.
        ("Vou confirmar com a Zuleica e já te falo o valor.", False),
        ("Vou ver com o Chicão e já te retorno.", False),
    ],
)
def test_the_stall_reads_marked_names(original: str, expected: bool) -> None:
    folded = fold(original)
    known = frozenset(word for word in folded.split() if token_info(word)[0] != "W")
    assert immediate_stall(mark_names(original, folded, known)) is expected


_NAME = st.from_regex(r"[A-Z][a-z]{3,9}", fullmatch=True).filter(
    lambda word: word.lower() not in NOT_NAMES and token_info(word.lower())[0] == "W"
)


@given(_NAME, st.sampled_from(["com o", "com a", "para o", "para a"]), st.sampled_from(".!,"))
def test_a_name_the_ai_goes_to_is_marked(name: str, lead: str, end: str) -> None:
    # Whatever the name, after "com o"/"para a" it is someone, even at the sentence's end.
    original = f"Vou falar {lead} {name}{end}"
    folded = fold(original)
    assert mark_names(original, folded, frozenset()).split()[4].startswith(NAME_MARK)


@given(_NAME, st.sampled_from(["Oi", "Olá", "Bom dia"]), st.sampled_from(".!,"))
def test_an_honorific_vocative_is_never_marked(name: str, greeting: str, end: str) -> None:
    # "Olá, Seu Geraldo!" addresses the customer: the name acts in nothing.
    original = f"{greeting}, Seu {name}{end} Seu pedido está pronto."
    folded = fold(original)
    assert NAME_MARK not in mark_names(original, folded, frozenset())


# --- detector 48 (r44's first reading) ------------------------------------------------------

# The policy: how a process goes (a step in a "depois que"/"quando" clause, a deadline the
# process gives someone, a phone option in a list) commits no one in this message.
PROCESS_STEPS = [
    "Depois que a reclamação é registrada, a operadora tem até 10 dias para responder.",
    "Quando o chamado é aberto pelo app, a análise leva até 2 dias úteis.",
]
STILL_TICKETS = [
    "Sua reclamação foi registrada e o time responde em até 10 dias.",
    "Informo que o seu chamado foi aberto.",
]


@pytest.mark.parametrize("text", PROCESS_STEPS)
def test_a_ticket_in_a_process_step_is_no_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is None


@pytest.mark.parametrize("text", STILL_TICKETS)
def test_a_ticket_registered_for_the_customer_is_still_a_rule_promise(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == "open_ticket"


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("ligando para o 0800 - la o time de retencao pode apresentar ofertas;", True),
        ("depois que o pacote chega ao vendedor, ele tem ate 3 dias uteis para confirmar.", True),
        ("vou pedir e o time tem ate 2 dias para te retornar.", False),
    ],
)
def test_phone_options_and_process_deadlines(sentence: str, expected: bool) -> None:
    assert relayed_or_instructed(sentence) is expected
