"""Round 19 of the promise detector (detector 37), from the first reading of the blind set r36
(on detector 36, never tuned on: local 0.978 / 0.90, one promise out with the model check on).

* A cleft names who comes: "Quem leva é o Seu Dito ... por volta das 14h" goes to the model
  check like any visit of the business's people at a clock time (a clock time alone is as
  often a schedule, so no rule decides it).
* The business's truck "deixa" the thing at the customer's on a day ahead; "deixa de passar"
  is no visit.
* Someone of the business "sai com" the order at a time ahead ("o motoqueiro sai com ele em
  uns 30 minutinhos").
* The people an outside party sends are theirs: "a seguradora vai mandar um perito" is the
  insurer's process, and "nos próximos dias" is "em + os", not "us".

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cases.guardrail.normalize import fold
from cases.guardrail.promise import assess_promise, detect_rule_promise
from cases.guardrail.promise_carriers import automatic_only, carrier_only
from cases.guardrail.promise_relays import relayed_or_instructed

# The policy: a person or vehicle of the business that will act for the customer (round 15:
# "the business's own vehicle named as such").
PROMISES = [
    "Nosso caminhão deixa o entulho na caçamba da obra amanhã às 8h.",
    "A nossa van deixa as cadeiras aí no salão na sexta de manhã.",
    "O motoqueiro sai com a sua pizza em uns 15 minutos 🍕",
    "O entregador sai com o seu pedido amanhã cedo.",
]
NOT_PROMISES = [
    # A habit; a truck that stops coming; the customer's own trip; a past delivery.
    "O motoqueiro sai com os pedidos da tarde todo dia às 17h.",
    "Nosso caminhão deixa de passar no seu bairro a partir de amanhã.",
    "Você sai com o carro amanhã cedo? Então o lava-rápido abre às 7h.",
    "Nosso caminhão deixou a caçamba aí ontem às 8h.",
]


@pytest.mark.parametrize("text", PROMISES)
def test_the_business_vehicle_or_courier_on_its_way_is_a_promise(text: str) -> None:
    assessment = assess_promise(text)
    assert assessment.promise, assessment


@pytest.mark.parametrize("text", NOT_PROMISES)
def test_habits_stops_and_past_runs_are_no_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is None


# The policy: someone of the business coming for the customer; a clock time alone does not
# say whether it is this customer's visit, so the check decides (never cleared locally).
CLEFTS = [
    "Pedido confirmado! Quem leva é o Seu Tonho, lá pelas 15h.",
    "Quem busca é a Dona Cida, por volta das 10h, tá?",
    "Quem instala é o técnico, às 9h, no seu apartamento.",
]


def test_a_cleft_with_no_time_ahead_is_no_visit() -> None:
    # "Quem leva é o Seu Tonho" with no clock: a fact about who delivers.
    assessment = assess_promise("Quem leva os pedidos é o Seu Tonho, ele é muito cuidadoso.")
    assert not assessment.promise


# The policy: people outside the business are no subject of a promise ("a transportadora vai
# entregar"); an insurer's expert belongs to the insurer.
@given(
    party=st.sampled_from(["A seguradora", "O Detran", "A prefeitura"]),
    person=st.sampled_from(["um perito", "uma perita", "um vistoriador", "o regulador"]),
    when=st.sampled_from(["nos próximos 10 dias", "nos próximos dias úteis", "em até 5 dias"]),
)
def test_an_outside_party_sending_its_own_assessor_is_outside_only(
    party: str, person: str, when: str
) -> None:
    assert carrier_only(fold(f"{party} vai mandar {person} para vistoriar o imóvel {when}."))


@pytest.mark.parametrize(
    "sentence",
    [
        # "nos" as "us", a word of the business, keeps the sentence ours.
        "A seguradora nos mandou o laudo e nós vamos te passar amanhã.",
        # The business's own expert.
        "A seguradora pediu a vistoria e o nosso perito vai até aí amanhã.",
    ],
)
def test_the_business_in_the_sentence_keeps_it_ours(sentence: str) -> None:
    assert not carrier_only(fold(sentence))


# --- detector 38: bookings, offers, vocatives and instructions (precision) ----------------

# The policy: what the AI does itself, now, is no promise; an offer that leaves the choice to
# the customer is none; instructions to the customer are none.
NEAR_MISSES_TO_THE_CHECK = [
    # A booking with someone of the business: the customer comes to it.
    "Pronto! Marquei sua limpeza de pele com a Bia para sábado às 10h 😊",
    "Sua sessão de fisioterapia com o Dr. Caio está confirmada para segunda, 8h.",
    # Free times offered, the choice asked.
    "Deixa eu ver a agenda... o Dr. Caio tem horário na quarta às 9h ou na sexta. Qual prefere?",
    # The AI's own immediate return, the customer addressed by name, a colleague as a complement.
    "Só um minutinho, Juliana, já te retorno com a agenda da Bia.",
    # Instructions, then the people the customer was sent to.
    "O melhor é ligar direto para a recepção no (11) 4002-8922; eles confirmam na hora.",
    "Ligue para a clínica e peça para falar com a Dra. Marta, ela vai te explicar o preparo.",
]


# The policy: someone of the business coming to the customer, or getting back to them, is a
# promise; a booking does not hide it.
BOOKINGS_THAT_PROMISE = [
    "Agendei a visita do técnico para amanhã às 9h, ele vai até a sua casa.",
    "Marquei com a Bia para quinta e ela te liga amanhã para confirmar o endereço.",
    "Temos horário na terça; o instalador passa aí às 14h. Qual prefere, terça ou quarta?",
]


# --- detector 39: relays of a check already made, instructions (precision) -----------------

# The policy: relays and completed actions, and instructions to the customer, are none.
RELAYS_AND_INSTRUCTIONS = [
    "Já conferi com o pessoal da cozinha agora: o bolo de cenoura não leva leite.",
    "Acabei de falar com a Dra. Lúcia: ela pediu para te avisar que o jejum é de 8 horas.",
    "A senhora deve ligar para o 0800 do seguro para acionar o guincho, o número está na apólice.",
]
# Someone of the business still to act: the verdict stands (or goes to the check).
STILL_TO_COME = [
    "Já falei com o Dr. Paulo: ele vai analisar os exames amanhã e te liga.",
    "Acabei de conversar com a equipe: assim que a peça chegar, a gente te avisa.",
    "Amanhã a Bruna te liga pra confirmar o horário da entrega.",
]


@given(
    checked=st.sampled_from(["Já verifiquei com", "Acabei de falar com", "Confirmei com"]),
    who=st.sampled_from(["a equipe", "o gerente", "a Dra. Lúcia", "o pessoal da loja"]),
    then=st.sampled_from(["ele vai te ligar amanhã", "vamos te avisar", "te retorno depois"]),
)
def test_a_relay_with_anything_still_to_come_is_no_relay(checked: str, who: str, then: str) -> None:
    assert not relayed_or_instructed(fold(f"{checked} {who}: {then}."))
    assert relayed_or_instructed(fold(f"{checked} {who}: o valor é R$ 50 e aceita pix."))


# --- detector 40: what someone asked the AI to pass on, documents sent, the hours --------

# The policy: relays and completed actions, courtesy and facts about the team are none ("mas
# encaminhei o boleto para o seu e-mail não conta").
RELAYS_DOCUMENTS_AND_HOURS = [
    "O financeiro me pediu para te informar que o boleto novo vence dia 10.",
    "Enviei o comprovante para o seu e-mail, Marcos. Qualquer dúvida é só chamar.",
    "Já gerei o boleto atualizado, segue o link: https://exemplo.com/b/123",
    "Nossa loja estará fechada no feriado e retomamos o atendimento na segunda às 9h.",
    "Deixa eu dar uma olhada aqui no seu cadastro para te passar o valor certinho.",
]


@pytest.mark.parametrize(
    "text", [*NEAR_MISSES_TO_THE_CHECK, *RELAYS_AND_INSTRUCTIONS, *RELAYS_DOCUMENTS_AND_HOURS]
)
def test_the_near_misses_of_detectors_38_to_40_are_no_local_promise(text: str) -> None:
    assert not assess_promise(text).promise


@pytest.mark.parametrize("text", [*CLEFTS, *BOOKINGS_THAT_PROMISE, *STILL_TO_COME])
def test_a_visit_a_call_back_or_what_is_still_to_come_is_never_cleared(text: str) -> None:
    # A cleft at a clock time goes to the check; a booking with someone coming or calling
    # back, and a relay with something still to come, keep their verdict.
    assessment = assess_promise(text)
    assert assessment.promise or assessment.uncertain, assessment


# --- rules 41: the business's own person or vehicle at a clock time (recall) -------------

# The policy: the business's own vehicle or person named as such puts them to work for the
# customer; a habit stays a fact about the team.
OURS_AT_A_CLOCK = [
    "Nosso entregador leva o bolo direto no salão às 15h 🎂",
    "A nossa van busca o Thor às 8h30 na portaria.",
    "Nosso motoboy chega aí em uns 20 minutinhos com o seu pedido.",
]


@pytest.mark.parametrize("text", OURS_AT_A_CLOCK)
def test_ours_coming_at_a_clock_time_is_a_rule_promise(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id in ("staff_comes_at_a_time", "own_vehicle_delivery")


@pytest.mark.parametrize(
    "text",
    [
        "Nosso motoboy sempre passa na sua rua às 15h.",
        "Nossa van faz a rota do seu bairro toda terça às 8h.",
        "Se o nosso entregador chegar às 15h e você não estiver, ele deixa na portaria.",
    ],
)
def test_ours_at_a_clock_time_in_a_habit_or_a_condition_is_no_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is None


# --- rules 42 (from r40's first reading) ---------------------------------------------------


def test_their_courier_is_no_subject_of_ours() -> None:
    # The policy: "a transportadora vai entregar" is shipping status, so is its courier.
    assert (
        detect_rule_promise(
            "O pedido foi para a transportadora e o motoboy deles deve entregar amanhã."
        )
        is None
    )
    ours = detect_rule_promise("O motoboy deve entregar o pedido amanhã até as 14h.")
    assert ours is not None


@pytest.mark.parametrize(
    "text",
    [
        "Nosso motorista, o Tião, pega vocês às 6h no hotel.",
        "O eletricista remarcou: ele vai aí amanhã às 10h.",
        "A diarista não pôde ir hoje, mas ela vem aí na sexta de manhã.",
    ],
)
def test_a_person_of_the_business_coming_to_the_customer_is_a_rule_promise(text: str) -> None:
    assert detect_rule_promise(text) is not None


# An order arriving, a condition, a negation (rules 42); things named like people (rules 44).
NO_VISITS = [
    "Seu pedido saiu hoje e ele chega aí amanhã.",
    "Se ele vai aí amanhã, me avisa que eu confirmo o endereço.",
    "O eletricista não vai aí amanhã, só na semana que vem a gente vê.",
]


# --- detector 43: automatic processes ------------------------------------------------------

# The policy: "seu reembolso será processado", "você receberá um e-mail automático".


@pytest.mark.parametrize(
    "sentence",
    [
        "quando o pagamento compensar, o app te envia o comprovante.",
        "oi, marina! o sistema te manda um sms quando o pedido sair.",
        "o estorno é feito automaticamente em até 2 faturas.",
    ],
)
def test_an_automatic_process_alone_is_no_one_acting(sentence: str) -> None:
    assert automatic_only(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "vou cadastrar no sistema e a equipe te liga amanhã.",
        "o sistema avisa o técnico e ele passa aí amanhã.",
        "a gente confere no sistema e te retorna.",
    ],
)
def test_someone_acting_beside_the_system_keeps_the_sentence_ours(sentence: str) -> None:
    assert not automatic_only(sentence)


# --- rules 44: more trades as the business's people -----------------------------------------


@given(
    trade=st.sampled_from(
        ["A cuidadora", "O manobrista", "A recreadora", "O adestrador", "A maquiadora"]
    ),
    when=st.sampled_from(["amanhã às 8h", "na sexta de manhã", "sábado às 15h"]),
)
def test_a_trade_of_the_business_coming_on_a_day_ahead_is_a_rule_promise(
    trade: str, when: str
) -> None:
    assert detect_rule_promise(f"{trade} chega aí {when}.") is not None
    # The same trade in a habit is a fact about the team.
    assert detect_rule_promise(f"{trade} sempre chega aí {when}.") is None


NO_VISITS += [
    "A guia do DAS vai por e-mail amanhã.",
    "O monitor chega amanhã pela transportadora.",
    "O piloto automático do carro vem desligado de fábrica.",
]


@pytest.mark.parametrize("text", NO_VISITS)
def test_orders_conditions_negations_and_things_are_no_visit(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is None or match.rule_id != "staff_comes_at_a_time"


# --- rules 45: the business acting in its own voice on a day ahead ---------------------------


@given(
    act=st.sampled_from(["a gente resolve", "a gente confere", "corrigimos", "te ligamos"]),
    when=st.sampled_from(["amanhã", "até sexta", "na segunda de manhã"]),
)
def test_the_business_acting_on_a_day_ahead_is_a_promise_unless_offered_or_asked(
    act: str, when: str
) -> None:
    assert detect_rule_promise(f"Pode deixar, {act} isso {when}.") is not None
    assert detect_rule_promise(f"Se preferir, {act} isso {when}.") is None
    assert detect_rule_promise(f"{act.capitalize()} isso {when}?") is None


def test_sending_on_a_day_ahead_is_shipping_status() -> None:
    # The policy: "seu pedido foi encaminhado para a transportadora" is shipping status.
    assert detect_rule_promise("Enviamos o seu pedido amanhã pelos Correios.") is None
