"""Round 18 of the promise detector (rules 26), from the first reading of the blind set r33: a
promise to "confirmar com o marceneiro" reached the customer with no case even with the model
check on (a carpenter is no word of the team lists), as did "Nosso guincho busca o seu carro
amanhã às 8h" (a tow truck is the business's vehicle), and "O Seu Armando, nosso afinador,
passa aí na terça" was only sent to the check.

* Whom the AI checks with may be anyone named by a trade (``lexicon_people``): Portuguese
  makes most trades with -eiro/-eira, -ista, -dor/-dora, -tor/-tora; the words with those
  endings that are no one ("dinheiro", "carteira", "computador", "revista") stay nothing.
* The tow truck and the ambulance are fleet words like the van and the truck.
* An apposition ("X, nosso afinador,") makes its subject one of the business's own.

Then rules 27 (the physical world, from the tune half of field_r18: bare weekdays with their
part of the day, "no dia seguinte", feminine trades, a delivery vehicle on a day ahead), rules
29 (the business itself coming at a time ahead, not in an offer or a question) and features
f17 (a word in -eiro is a person to the learned stage).

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
from cases.guardrail.promise_features import marked_for_features, shape
from cases.guardrail.promise_scan import visit_at_a_clock_time
from cases.guardrail.promise_stall import immediate_stall

# The policy: "the AI will involve a person or team: vou verificar com a equipe".
CHECKS_WITH_A_TRADE = [
    "Vou confirmar com a costureira se dá pra fazer a barra até sábado e te aviso.",
    "Deixa eu ver com o serralheiro se ele tem o perfil em estoque, já te falo o prazo.",
    "Vou checar com a nutricionista se a dieta pode ter lactose e te retorno.",
    "Vou alinhar com o projetista as medidas da cozinha e te mando a planta nova.",
    "Confirmo com os pintores se eles conseguem começar na segunda.",
    "Vou conversar com a instrutora sobre a reposição da aula e depois te falo.",
]
# The policy: what the AI does itself, now, is no promise; a thing is no one to talk to.
CHECKS_WITH_A_THING = [
    "Vou conferir com a carteirinha que você mandou e já te digo se está ativa.",
    "Vou verificar com o extrato aqui no sistema e já te respondo.",
    "Deixa eu comparar com a revista do mês passado, um instante.",
    "Vou conferir com o medidor da foto que você enviou, um minuto.",
]


@given(
    trade=st.sampled_from(
        ["marceneiro", "vidraceira", "estoquista", "montador", "instrutora", "afinador"]
    ),
    thing=st.sampled_from(["dinheiro", "carteira", "computador", "revista", "geladeira"]),
    lead=st.sampled_from(["Vou confirmar com", "Deixa eu ver com", "Vou checar com"]),
)
def test_the_same_check_is_a_promise_with_a_trade_and_nothing_with_a_thing(
    trade: str, thing: str, lead: str
) -> None:
    with_person = detect_rule_promise(f"{lead} o {trade} e te aviso amanhã.")
    assert with_person is not None and with_person.rule_id == "check_with_human"
    with_thing = detect_rule_promise(f"{lead} a {thing} e te aviso amanhã.")
    assert with_thing is None or with_thing.rule_id != "check_with_human"


# The policy, round 15: "the business's own vehicle named as such puts one of its drivers to
# work for the customer"; an apposition "nosso afinador" says whose the person is.
PROMISES = [
    # Rules 34: an apposition with a future, "tudo certo para <day>", the next trip of our truck.
    "O Beto, nosso eletricista, vai trocar o quadro de luz na segunda.",
    "Tudo certo para quinta! Nossa equipe chega às 8h com o material.",
    "As telhas vão na próxima viagem do nosso caminhão, amanhã cedo.",
    "Nosso guincho busca a sua moto amanhã cedo na oficina.",
    "A nossa ambulância passa aí às 14h pra levar o seu pai à consulta.",
    "A Telma, nossa diarista, chega aí na quinta às 8h.",
    "Combinado! O Zeca, nosso jardineiro, passa aí amanhã pra podar as árvores.",
]
NOT_PROMISES = [
    # An apposition in the past; a confirmation followed by a fact about the place.
    "O Beto, nosso eletricista, trocou o quadro de luz na segunda.",
    "Tudo certo para quinta! Nossa loja abre às 8h.",
    # Someone else's tow truck; a habit; an apposition with no time ahead.
    "O guincho da seguradora chega aí em uns 40 minutos.",
    "O Zeca, nosso jardineiro, passa aí toda segunda de manhã.",
    "A Telma, nossa diarista, chegou aí às 8h e já terminou a limpeza.",
]


# --- rules 27: the physical world (the tune half of field_r18) ---------------------------

# The policy: a person or vehicle of the business that will act for the customer.
FIELD_PROMISES = [
    # A bare weekday with its part of the day or clock is a day ahead.
    "O técnico passa no seu prédio quinta às 14h pra trocar o interfone.",
    "A equipe de limpeza chega sábado de manhã com o material.",
    # "no dia seguinte".
    "O pintor termina a sala hoje e o montador vem no dia seguinte.",
    # On the way, then the arrival.
    "O motoboy já tá indo, chega aí em uns 20 minutos 🛵",
    # Trades in the feminine.
    "A zeladora passa aí amanhã pra entregar as chaves.",
    # A delivery vehicle on a day ahead.
    "A geladeira vai na van na sexta, entre 13h e 17h.",
]
FIELD_NEAR_MISSES = [
    # A habit, a past event, an instruction, someone else's truck, the customer's car.
    "O técnico sempre passa no prédio quinta às 14h para a revisão mensal.",
    "A zeladora passou aí ontem e deixou as chaves na portaria.",
    "Você pode trazer o carro sexta às 8h, a oficina abre nesse horário.",
    "O pedido vai no caminhão da transportadora na sexta.",
    "Você vai no carro da empresa na sexta? Então é só apresentar o crachá.",
]


@given(
    day=st.sampled_from(["segunda", "terça", "quarta-feira", "sábado", "domingo"]),
    part=st.sampled_from(["de manhã", "à tarde", "cedo", "às 9h", "às 14:30"]),
)
def test_a_bare_weekday_with_its_part_of_the_day_is_a_day_ahead_unless_it_is_a_habit(
    day: str, part: str
) -> None:
    visit = detect_rule_promise(f"O encanador passa aí {day} {part}.")
    assert visit is not None and visit.rule_id == "staff_comes_at_a_time"
    every = "todo" if day in ("sábado", "domingo") else "toda"
    assert detect_rule_promise(f"O encanador passa aí {every} {day} {part}.") is None


# --- detector 28: other outside parties as the only actor -------------------------------

# The outside parties' own processes are probed with the carriers' in test_promise_round17.


def test_a_bank_seat_is_no_outside_party() -> None:
    # "banco" is as often a seat as a bank: it never makes a sentence outside-only.
    assert not carrier_only(fold("Amanhã cedo o técnico refaz a limpeza do banco traseiro."))


# --- rules 29: the business itself comes at a time ahead ---------------------------------

# The policy: "vamos providenciar" counts (the plural is the company); an offer or a question
# that leaves the choice to the customer does not.
WE_COME = [
    "Amanhã cedo buscamos o tapete aí pra lavagem.",
    "Vamos passar aí na quinta às 9h pra medir a janela.",
    "A gente entrega o bolo no sábado de manhã no salão.",
    "Levamos os equipamentos aí amanhã à tarde, tudo bem?",
]
WE_OFFER_OR_ASK = [
    "Se preferir, buscamos o tapete aí amanhã.",
    "Passamos aí amanhã às 9h?",
    "Todo sábado a gente entrega na sua rua de manhã.",
    "Não passamos aí amanhã, só na outra semana.",
    "Quer que a gente passe aí amanhã?",
]


@given(
    tag=st.sampled_from([", tudo bem?", ", pode ser?", ", combinado?", ", ok?"]),
    day=st.sampled_from(["amanhã", "na sexta", "sábado de manhã", "quarta às 10h"]),
)
def test_a_closing_tag_keeps_the_commitment_and_a_bare_question_asks(tag: str, day: str) -> None:
    committed = detect_rule_promise(f"Passamos aí {day}{tag}")
    assert committed is not None and committed.rule_id == "we_come_at_a_time"
    assert detect_rule_promise(f"Passamos aí {day}?") is None


# --- features f17: a trade in -eiro is a person to the learned stage ---------------------


@pytest.mark.parametrize(
    ("word", "label"),
    [
        *(("marceneiro", "HUM"), ("piscineiros", "HUM"), ("relojoeiro", "HUM")),
        *(("dinheiro", "W"), ("primeiro", "W"), ("chuveiro", "W"), ("passageiros", "W")),
    ],
)
def test_f17_a_word_in_eiro_is_a_person_unless_it_is_a_thing(word: str, label: str) -> None:
    assert shape(word) == label


# --- every rule probe of this round, found or left alone ------------------------------------

# (text, the rule that must find it; None: any rule).
RULE_PROMISES: list[tuple[str, str | None]] = [
    *((text, "check_with_human") for text in CHECKS_WITH_A_TRADE),
    *((text, None) for text in (*PROMISES, *FIELD_PROMISES)),
    *((text, "we_come_at_a_time") for text in WE_COME),
]
# (text, the rule that must not fire on it; None: no rule at all).
RULE_NEAR_MISSES: list[tuple[str, str | None]] = [
    *((text, "check_with_human") for text in CHECKS_WITH_A_THING),
    *((text, None) for text in (*NOT_PROMISES, *FIELD_NEAR_MISSES)),
    *((text, "we_come_at_a_time") for text in WE_OFFER_OR_ASK),
]


@pytest.mark.parametrize(("text", "rule"), RULE_PROMISES)
def test_rules_26_to_29_find_the_promises_the_policy_names(text: str, rule: str | None) -> None:
    match = detect_rule_promise(text)
    assert match is not None and rule in (None, match.rule_id), text
    assert assess_promise(text).promise


@pytest.mark.parametrize(("text", "rule"), RULE_NEAR_MISSES)
def test_rules_26_to_29_leave_the_near_misses_alone(text: str, rule: str | None) -> None:
    match = detect_rule_promise(text)
    assert match is None or (rule is not None and match.rule_id != rule), text


# --- rules 30: "Ligue para a central. Eles vão te ajudar." ---------------------------------

# The policy: "ligue para a central que eles vão te ajudar" is an instruction; the human acts
# only if the customer goes there, also when "eles" opens the next sentence.
SENT_TO_THEM = [
    "Ligue para a central no 0800 123 4567. Eles vão te ajudar com a segunda via.",
    "Para trocar o titular, ligue para o nosso cadastro no 0800 300 2000, que eles vão te ajudar.",
    "O caminho mais rápido é ligar para o SAC no 0800 555 0101. Eles vão resolver na hora.",
]
# ... but a hand-over the AI made is still pending on them.
HANDED_TO_THEM = [
    "Passei seu caso pro financeiro. Eles vão te ligar amanhã.",
    "Já encaminhei para o suporte técnico. Eles vão te responder ainda hoje.",
]


@pytest.mark.parametrize("text", SENT_TO_THEM)
def test_rules_30_a_pronoun_after_an_instruction_is_who_the_customer_goes_to(text: str) -> None:
    assert detect_rule_promise(text) is None, text
    # Detector 32: nor does the learned stage's verdict stand on its own.
    assert not assess_promise(text).promise, text


@pytest.mark.parametrize("text", HANDED_TO_THEM)
def test_rules_30_a_pronoun_after_a_hand_over_still_acts(text: str) -> None:
    assert detect_rule_promise(text) is not None, text


# --- detector 31: the AI's own immediate return -------------------------------------------

# The policy: "um instante, já te retorno" is a stall inside the turn, not a deferred answer.
STALLS = [
    "Um instante que estou consultando o seu pedido aqui no sistema, já te retorno 😊",
    "Vou gerar aqui o link de pagamento e te mando em seguida, só um minutinho.",
]
# ... but somebody else in the sentence keeps the verdict.
NOT_STALLS = [
    "Um instante: o Jorge do financeiro vai revisar a cobrança e te liga amanhã.",
    "A equipe técnica vai analisar o caso e te retorna até sexta.",
]


@pytest.mark.parametrize("text", STALLS)
def test_detector_31_an_immediate_return_is_never_a_local_promise(text: str) -> None:
    assert immediate_stall(fold(text))
    assert not assess_promise(text).promise


@pytest.mark.parametrize("text", NOT_STALLS)
def test_detector_31_somebody_else_keeps_the_verdict(text: str) -> None:
    assert not immediate_stall(fold(text))
    assert assess_promise(text).promise


# --- detector 35: someone of the business at a clock time goes to the check ---------------

# A clock time alone is as often the business's schedule as this customer's visit, so no
# rule decides it; a message the learned stage clears goes to the model check instead.
VISITS_AT_A_CLOCK = [
    "O nosso Pet Móvel busca o Rex às 10h e traz de volta depois da tosa.",
    "A Kombi passa no seu prédio às 15h com as caixas.",
    "O Tonho leva o gás às 11h, deixa o portão aberto.",
]
NOT_VISITS = [
    "Todo dia a van passa na sua rua por volta das 6h40.",
    "A loja abre às 9h e fecha às 18h.",
    "O caminhão da transportadora chega às 14h.",
    "O técnico chegou às 9h e terminou o serviço às 11h.",
]


@pytest.mark.parametrize("text", VISITS_AT_A_CLOCK)
def test_detector_35_someone_of_the_business_at_a_clock_time_is_never_cleared(text: str) -> None:
    assert visit_at_a_clock_time(marked_for_features(text, fold(text)))
    verdict = assess_promise(text)
    assert verdict.promise or verdict.uncertain


@pytest.mark.parametrize("text", NOT_VISITS)
def test_detector_35_habits_hours_carriers_and_the_past_are_no_visit(text: str) -> None:
    assert not visit_at_a_clock_time(marked_for_features(text, fold(text)))
