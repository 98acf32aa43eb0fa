"""Round 17 of the promise detector (rules 22), from the first reading of the blind set r30: a
moving company's truck that "chega aí por volta das 8h" reached the customer with no case with
the model check on, and six more promises of someone coming at a time were only sent to the
check (a technician "será enviado ao local", a broker who "te busca no metrô às 10h", a tow
truck that "já saiu da base e chega em uns 40 min", a cleaner who "vai aí na quarta", a
lawyer who "retorna sua ligação amanhã", a technician who "is on the way").

What the rule ``staff_comes_at_a_time`` reads now, besides a person in the present with a day
ahead:
* a vehicle sent to the customer (it carries one of the business's drivers), unless it is a
  carrier's, an app's or the city's;
* a person of the business who "será enviado / deslocado / designado";
* "ele / ela te liga", "ele retorna sua ligação": only a person calls back;
* a clock time when the person acts for "te" ("te busca às 10h"), and "por volta das",
  "lá pelas", "perto das" as clock times ahead;
* "já saiu ... e chega", and the English "is on the way".

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cases.guardrail.normalize import fold
from cases.guardrail.promise import assess_promise, detect_rule_promise
from cases.guardrail.promise_carriers import carrier_only
from cases.guardrail.promise_features import message_sentences

RULE = "staff_comes_at_a_time"

PROMISES = [
    # A vehicle sent to the customer.
    "A van da lavanderia passa aí por volta das 17h pra recolher as peças.",
    "A caminhonete chega no seu prédio lá pelas 14h com as caixas.",
    "A ambulância já saiu e chega em uns 15 minutos.",
    "O furgão vem amanhã cedo buscar as cadeiras do evento.",
    "O caminhão chega aí perto das 10h, deixa a garagem livre.",
    # A person sent, in the passive.
    "Uma eletricista vai ser enviada até o seu endereço na sexta.",
    "Os montadores serão enviados amanhã cedo pra montar o guarda-roupa.",
    "Um vistoriador será designado para o seu sinistro.",
    # Only a person calls back.
    "A Patrícia já anotou e ela te liga amanhã de manhã com o orçamento.",
    "Passei o seu pedido pro Jorge e ele te responde ainda hoje.",
    "O doutor está em consulta, mas ele retorna a sua ligação depois das 18h.",
    # For you, at a clock time.
    "O vendedor Caio te encontra na loja às 15h pra fechar o contrato.",
    "A motorista te busca no hotel às 6h30 para o passeio.",
    # An appointment confirmed for a day ahead, then the person coming to it (rules 25).
    "Instalação confirmada para sexta! O técnico Lucas chega com os cabos às 8h.",
    "Limpeza agendada para 14/05. Nossa equipe chega cedo com o material.",
    "A coleta ficou para segunda. O motorista passa aí com a van.",
    # Left already, and English.
    "O técnico já saiu da loja e chega em 20 min.",
    "O instalador Marcos is on the way e chega em 30 min.",
    "A Dona Lurdes confirmou e vai aí na segunda, 9h, pra passar as roupas.",
]

NOT_PROMISES = [
    # Someone else's vehicle.
    "O caminhão de lixo da prefeitura passa aí às 8h.",
    "O caminhão da transportadora chega aí por volta das 8h.",
    "O motorista do Uber chega em 5 minutos, acompanhe pelo app.",
    "O carro do aplicativo chega em uns 10 minutos.",
    "O ônibus da excursão sai às 7h da rodoviária.",
    # Habits, schedules, conditions, offers.
    "Todo sábado a van passa aí por volta das 9h.",
    "Normalmente o técnico chega por volta das 8h.",
    "Nossa loja abre às 8h e a equipe chega por volta das 7h30.",
    "Se o técnico for enviado amanhã, alguém precisa estar em casa.",
    "Se a van passa aí amanhã, você recebe?",
    "Quer que o técnico vá aí na quarta? É só confirmar.",
    # Things, not people, sent; a product "ele".
    "O boleto será enviado para o seu e-mail amanhã.",
    "Seu pedido já saiu e ele chega amanhã pela transportadora.",
    "Ele chega amanhã, é só acompanhar o rastreio.",
    # An appointment and then a fact, a habit, an instruction or someone else's courier.
    "Consulta marcada para 15/04. Nossa recepção abre às 7h.",
    "Seu horário ficou para terça. A equipe sempre chega 10 minutos antes.",
    "Pedido confirmado para amanhã! O motoboy da Loggi leva até as 18h.",
    "Agendamento confirmado para amanhã. Se o técnico não chegar até as 9h, me avisa.",
    # The customer calls; a negation.
    "Você pode ligar pro consultor às 16h, ele atende até as 18h.",
    "Ele não te liga, o contato é só pelo e-mail.",
    "O técnico não é enviado em feriados.",
]


@pytest.mark.parametrize("text", PROMISES)
def test_rules_22_find_someone_coming_at_a_time(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == RULE, text
    assert assess_promise(text).promise


@pytest.mark.parametrize("text", NOT_PROMISES)
def test_rules_22_leave_the_near_misses_alone(text: str) -> None:
    match = detect_rule_promise(text)
    assert match is None or match.rule_id != RULE, text


@given(
    vehicle=st.sampled_from(["caminhão", "van", "carro", "guincho", "moto", "furgão"]),
    owner=st.sampled_from(
        ["da transportadora", "dos Correios", "do Uber", "do aplicativo", "da prefeitura"]
    ),
    arrival=st.sampled_from(
        ["chega aí às 9h", "passa aí amanhã", "chega em uns 30 min", "vem na sexta"]
    ),
)
def test_a_vehicle_of_someone_else_is_never_the_business_s_dispatch(
    vehicle: str, owner: str, arrival: str
) -> None:
    # The same arrival is a promise for the business's vehicle and shipping status for a
    # carrier's, an app's or the city's.
    article = "a" if vehicle in ("van", "moto") else "o"
    ours = detect_rule_promise(f"{article.upper()} {vehicle} {arrival}.")
    assert ours is not None and ours.rule_id == RULE
    theirs = detect_rule_promise(f"{article.upper()} {vehicle} {owner} {arrival}.")
    assert theirs is None or theirs.rule_id != RULE


# --- detector 23 (r32's first reading): a negated guarantee and a closing "pode ser?" ------

# The policy: "negated or explicitly hedged statements ... do not commit anyone to anything",
# also when an apposition puts commas between the guarantee and what it governs.
HEDGED = [
    "Não posso garantir que o técnico, que está em outra visita, chega antes das 18h.",
    "Não consigo prometer que a equipe, que está bem cheia, vai conseguir ligar hoje.",
    "Infelizmente não dá pra garantir que o Rui, nosso montador, vai passar aí na sexta.",
]
# ... but a "mas" ends what is not guaranteed, and a commitment after it counts.
HEDGED_THEN_PROMISED = [
    "Não posso garantir nada agora, mas a equipe vai te ligar amanhã cedo.",
    "Não tem como garantir o horário, mas o Jorge, nosso técnico, vai passar aí amanhã.",
]


@pytest.mark.parametrize("text", HEDGED)
def test_a_negated_guarantee_governs_the_whole_sentence(text: str) -> None:
    assert not assess_promise(text).promise, text


@pytest.mark.parametrize("text", HEDGED_THEN_PROMISED)
def test_a_commitment_after_but_still_counts(text: str) -> None:
    assert assess_promise(text).promise, text


@given(
    hedge=st.sampled_from(
        ["Não posso garantir que", "Não consigo prometer que", "Não dá pra garantir que"]
    ),
    subject=st.sampled_from(
        ["a Carla, do financeiro,", "o técnico, que está na rua,", "a equipe, que está cheia,"]
    ),
    act=st.sampled_from(
        ["vai te ligar hoje", "vai passar aí amanhã", "consegue resolver até sexta"]
    ),
)
def test_what_is_not_guaranteed_is_never_a_local_promise(
    hedge: str, subject: str, act: str
) -> None:
    assert not assess_promise(f"{hedge} {subject} {act}.").promise


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        # The policy: "vou encaminhar para a equipe, tudo bem?" counts; the sentence opens
        # with the commitment, and the closing tag asks nothing.
        ("Amanhã cedo te mando as opções de cortina, pode ser?", False),
        ("Vou passar seu pedido pra Carla e ela te liga hoje, tudo certo?", False),
        # A real question keeps its mark, "pode ser" inside it too.
        ("Pode ser amanhã às 10h?", True),
        ("Qual horário pode ser melhor pra você?", True),
    ],
)
def test_a_two_word_closing_tag_does_not_make_a_statement_a_question(text: str, asks: bool) -> None:
    [(_, question)] = message_sentences(fold(text))
    assert question is asks


def test_em_ate_minutes_at_the_customers_place_is_a_time_ahead_but_not_a_service_level() -> None:
    found = detect_rule_promise("Nosso motoboy volta aí com outra pizza em até 40 minutos.")
    assert found is not None and found.rule_id == RULE
    level = detect_rule_promise("Nossa equipe responde em até 30 minutos em horário comercial.")
    assert level is None or level.rule_id != RULE


# --- detector 24: an outside carrier's delivery is order status ---------------------------

# The policy: "a transportadora vai entregar" is no subject of a promise; shipping status.
CARRIER_STATUS = [
    "Seu pedido vai ser enviado amanhã pelos Correios.",
    "A transportadora vai entregar o seu pedido até quinta-feira.",
    "Sua encomenda vai pela Jadlog e chega na sexta.",
    "O kit segue pelos Correios ainda hoje, com rastreio.",
    # Detector 28: other outside parties the policy names, their own process.
    "A seguradora vai analisar o sinistro em até 30 dias, conforme as regras da apólice.",
    "O Detran vai enviar o documento novo pelo correio em até 10 dias úteis.",
    "A concessionária vai religar a energia em até 24 horas depois do pagamento.",
    "A companhia aérea vai enviar o novo cartão de embarque para o seu e-mail.",
    "O fabricante vai avaliar o defeito do compressor, já que ainda está na garantia.",
]
# Somebody of the business acts: the learned verdict stands (or a rule fires).
CARRIER_AND_US = [
    "A Carla vai ligar pra transportadora e resolver isso amanhã.",
    "A gente vai acionar a transportadora amanhã.",
    "A transportadora vai buscar o tênis e o time envia o novo par.",
    "Vou verificar com os Correios e te retorno.",
    "Vou verificar com a seguradora e te retorno amanhã.",
    "A Carla vai ligar pra seguradora e resolver isso ainda hoje.",
    "Nossa equipe vai acompanhar o processo com o Detran e te avisa de cada etapa.",
    "A gente manda o compressor para o fabricante e te avisa quando ele voltar.",
]


@pytest.mark.parametrize("text", CARRIER_STATUS)
def test_a_carriers_delivery_is_never_a_local_promise(text: str) -> None:
    assert carrier_only(fold(text))
    assert not assess_promise(text).promise


@pytest.mark.parametrize("text", CARRIER_AND_US)
def test_a_carrier_beside_somebody_of_the_business_keeps_the_verdict(text: str) -> None:
    assert not carrier_only(fold(text))
    assert assess_promise(text).promise


@given(
    carrier=st.sampled_from(["pelos Correios", "pela transportadora", "via Sedex", "pela Loggi"]),
    person=st.sampled_from(["a Carla", "o técnico", "nossa equipe", "a gente", "o Beto"]),
)
def test_a_person_of_the_business_always_keeps_a_carrier_sentence(
    carrier: str, person: str
) -> None:
    # Whatever the carrier, naming somebody of the business makes the sentence theirs.
    assert carrier_only(fold(f"O pedido vai {carrier} amanhã."))
    assert not carrier_only(fold(f"O pedido vai {carrier} amanhã e {person} confere tudo."))
