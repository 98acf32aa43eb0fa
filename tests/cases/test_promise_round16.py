"""Round 16 of the promise detector (rules 20), from the first reading of the blind set r27: a
delivery "no nosso utilitário" reached the customer with no case with the model check on (the
commitment cue knew no "utilitário"), and every other delivery on the business's own vehicle
was only sent to the check, since the learned stage's corpus has none. The policy (round 15)
counts such a delivery a promise: one of the business's drivers has still to act. The same
reading found a crew that "chega às 7h do dia 15" only sent to the check: a person of the
business coming on a day ahead, in the present, is now a rule too.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cases.guardrail.promise import assess_promise, detect_rule_promise
from cases.guardrail.promise_rules_dispatch import FLEET_WORDS

OWN_VEHICLE_PROMISES = [
    "O sofá vai no nosso caminhão na quinta de manhã.",
    "Sua geladeira sai amanhã cedo no nosso caminhão, entre 8h e 12h.",
    "Nossa van passa aí pra buscar o notebook amanhã à tarde.",
    "As telhas seguem no nosso caminhão ainda hoje 🚚",
    "o gás vai na nossa moto daqui uns 30 min",
    "Seu pedido vai no próximo carro de entrega, lá pelas 15h.",
    "A nossa Fiorino leva as caixas pra você na segunda.",
    "Os móveis vão pela nossa carreta na semana que vem.",
    "Nosso caminhão chega aí às 7h com a caçamba.",
    "Seu botijão sai na próxima moto, coisa de 20 minutos.",
    # A vehicle's run named by its time is the business's own.
    "Os 40 módulos vão no caminhão de amanhã cedo, junto com as sapatas.",
    "A encomenda sai no carro de entregas das 13h amanhã.",
    "Os sacos de gelo vão no caminhão refrigerado das 15h.",
    "Entregamos com o nosso utilitário na sexta, antes do meio-dia.",
    "Nossa picape leva o material na obra amanhã cedo.",
]

# Not promises: a habit or a standing fact about the fleet, the past, an outside carrier, the
# house's "carro-chefe", an offer or a question, a negation, a price.
NOT_OWN_VEHICLE_PROMISES = [
    "Nossa van faz entregas no seu bairro toda terça e quinta.",
    "Nossa van sempre passa no centro às 10h.",
    "Nosso caminhão está na oficina esta semana.",
    "O pedido saiu ontem no nosso caminhão e já foi entregue.",
    "Seu pedido vai pela transportadora e chega em 5 dias úteis.",
    "Nosso carro-chefe é a feijoada de sábado!",
    "Nosso carro chefe vai ser o combo família no fim de semana.",
    "Você pode retirar na loja ou pedir entrega pela nossa van, o que prefere?",
    "Infelizmente não vai dar pra ir no nosso caminhão hoje, ele está lotado.",
    "Nossa moto de entrega só roda de segunda a sábado.",
    "O frete no nosso caminhão custa R$ 80 para o seu CEP.",
    "Quer que mande no nosso caminhão ou prefere buscar?",
    "A entrega no nosso caminhão é gratuita acima de R$ 500.",
    "Se quiser, o pedido vai no nosso caminhão amanhã; é só confirmar.",
    "Seu pedido foi no caminhão de ontem.",
    "O caminhão de entrega da transportadora passou ontem.",
]


@given(
    vehicle=st.sampled_from([w for w in FLEET_WORDS if w != "carro"]),
    verb=st.sampled_from(["vai", "sai", "segue", "vão", "saem"]),
    when=st.sampled_from(["amanhã", "na sexta", "hoje à tarde", "às 9h", "semana que vem"]),
    habit=st.sampled_from(["toda semana", "todas as terças", "sempre cedo", "normalmente às 8h"]),
)
def test_a_habit_anywhere_after_the_vehicle_takes_the_fleet_rule_back(
    vehicle: str, verb: str, when: str, habit: str
) -> None:
    # The same sentence is a promise with a time ahead and a standing fact with a habit.
    ours = (
        "nossa" if vehicle in ("van", "vanzinha", "moto", "picape", "carreta", "kombi") else "nosso"
    )
    head = f"O pedido {verb} {'na' if ours == 'nossa' else 'no'} {ours} {vehicle}"
    promise = detect_rule_promise(f"{head} {when}.")
    assert promise is not None and promise.rule_id == "own_vehicle_delivery"
    habitual = detect_rule_promise(f"{head} {habit}.")
    assert habitual is None or habitual.rule_id != "own_vehicle_delivery"


# --- a person of the business who comes or acts at a day ahead, in the present ------------

STAFF_AT_A_TIME_PROMISES = [
    "Nossa equipe chega às 7h amanhã.",
    "O técnico chega às 14h na quinta.",
    "O montador passa aí amanhã às 9h.",
    "A equipe de instalação chega na sexta de manhã.",
    "O eletricista vem amanhã às 8h.",
    "Os carregadores chegam amanhã às 7h.",
    "O motoboy leva seu pedido daqui a 20 min.",
    "O técnico da nossa equipe passa aí na sexta-feira entre 8h e 12h.",
    "A professora corrige as provas na semana que vem.",
    "A enfermeira separa as luvas na próxima visita.",
    # A clock time at the customer's place is this customer's appointment; an ETA too.
    "O entregador passa aí entre 14h e 16h.",
    "O técnico chega aí às 14h.",
    "Os rapazes da mudança chegam aí em uns 40 minutos.",
    "Eles voltam amanhã às 9h para finalizar.",
]
# A schedule with no day, a habit, an outside carrier, the past, a negation, a condition, an
# offer, an instruction, a person's own news.
NOT_STAFF_AT_A_TIME_PROMISES = [
    "A equipe chega às 7h para abrir a loja.",
    "O técnico chega às 8h todos os dias.",
    "O técnico sempre passa na quinta.",
    "O consultor liga para os clientes toda segunda.",
    "O entregador da transportadora passa aí amanhã.",
    "O técnico chegou ontem e já resolveu.",
    "O técnico não vem amanhã, ele está de folga.",
    "Se o técnico vem amanhã, você precisa estar em casa?",
    "Quer que o técnico passe aí amanhã?",
    "O gerente volta de férias dia 15.",
    "Já falei com a equipe e eles confirmaram que a entrega é amanhã, como previsto.",
    "A professora corrige as provas toda semana.",
    "A secretaria confirma as consultas até as 17h do dia anterior.",
    "O financeiro libera os pagamentos até as 15h.",
    "O entregador passa no seu bairro entre 14h e 16h todos os dias.",
    "O técnico atende aí entre 8h e 12h de segunda a sexta.",
    "Normalmente a equipe de suporte responde os chamados em até 48 horas úteis.",
    "O escritório fecha no feriado e volta a abrir na segunda-feira.",
    "O motoboy passa aí? Que horas?",
]


# --- a trade of the business with a future (rules 21) -------------------------------------

TRADE_FUTURE_PROMISES = [
    "O montador deve chegar às 9h.",
    "O motoboy vai levar seu pedido agora à tarde.",
    "A costureira vai refazer a barra.",
    "Os pintores vão terminar a sala amanhã.",
    "O serralheiro vai medir o portão na quinta.",
]
NOT_TRADE_FUTURE_PROMISES = [
    "O entregador da transportadora vai passar amanhã.",
    "Se o montador vai chegar tarde, me avisa.",
    "O motoboy não vai conseguir passar hoje.",
    "O montador vai precisar de acesso à garagem.",
    "O motoboy foi entregar outro pedido.",
    "Quer que o motoboy vá buscar?",
    "O pintor sempre vai terminar antes das 17h.",
]

# Each dispatch rule: the promises it must find, and the near misses it must leave alone.
RULE_CASES = {
    "own_vehicle_delivery": (OWN_VEHICLE_PROMISES, NOT_OWN_VEHICLE_PROMISES),
    "staff_comes_at_a_time": (STAFF_AT_A_TIME_PROMISES, NOT_STAFF_AT_A_TIME_PROMISES),
    "staff_will_act": (TRADE_FUTURE_PROMISES, NOT_TRADE_FUTURE_PROMISES),
}


@pytest.mark.parametrize(
    ("rule_id", "text"),
    [(rule_id, text) for rule_id, (found, _) in RULE_CASES.items() for text in found],
)
def test_each_dispatch_rule_finds_its_promises_locally(rule_id: str, text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == rule_id, text
    assessment = assess_promise(text)
    assert assessment.promise and not assessment.uncertain


@pytest.mark.parametrize(
    ("rule_id", "text"),
    [(rule_id, text) for rule_id, (_, left) in RULE_CASES.items() for text in left],
)
def test_each_dispatch_rule_leaves_its_near_misses_alone(rule_id: str, text: str) -> None:
    match = detect_rule_promise(text)
    assert match is None or match.rule_id != rule_id, text
