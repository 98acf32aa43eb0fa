"""Round 22 of the promise detector: detector 49 (features f20), from the first reading of the
blind set r45 (on detector 48, never tuned on: local 0.962 / 1.0, share 0.17), and detector 50
from r46's (on 49: local 0.904 / 0.94).

* A clause of "quando" (or "assim que", "logo que", "depois que") in the present indicative
  that opens its sentence says how things go every time ("Quando o alarme dispara, a central
  registra o evento"): a habit, like "normalmente". The future subjunctive ("quando o técnico
  chegar", "assim que for aprovado") is the one time ahead and stays as it was.
* Below the threshold, a best sentence whose only actor is an automatic process or an outside
  party is settled locally: the policy lists both as near misses ("você receberá um e-mail
  automático"; an outside party's part), so the model check has nothing to decide.
* The customer's words quoted back are not the AI's; "pode ligar direto pra Pri" and "o ideal
  é levar" are instructions.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is Portuguese grammar (the mood of the verb) and the policy at the top of
``cases/guardrail/promise.py``, not the detector.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cases.guardrail.normalize import fold
from cases.guardrail.promise import assess_promise
from cases.guardrail.promise_features import message_sentences
from cases.guardrail.promise_learned import learned_model
from cases.guardrail.promise_ngrams import message_features
from cases.guardrail.promise_relays import without_customer_quotes
from cases.guardrail.promise_words import HABITUAL_WHEN, habitual_clause_at


def _habit_marked(text: str) -> bool:
    return any(HABITUAL_WHEN in words for words, _question in message_sentences(fold(text)))


@pytest.mark.parametrize(
    "text",
    [
        "Quando a caldeira desarma, o plantão recebe um alerta no painel.",
        "Quando o pagamento compensa, o financeiro libera a nota no portal.",
        "Assim que o contrato é assinado, a engenharia monta o cronograma.",
        "Depois que a vistoria acontece, o laudo fica disponível na área do cliente.",
        "Logo que o chamado entra, a equipe de triagem classifica a prioridade.",
        "Tudo certo. Quando a máquina apita, o operador troca o filtro.",
    ],
)
def test_a_present_indicative_when_clause_that_opens_the_sentence_is_a_habit(text: str) -> None:
    assert _habit_marked(text)
    keys = [f for sentence in message_features(fold(text)) for f in sentence]
    assert any("h_" in feature for feature in keys)


@pytest.mark.parametrize(
    "text",
    [
        # The future subjunctive: the one time ahead.
        "Quando a peça chegar, o técnico agenda a troca com você.",
        "Assim que o contrato for assinado, a engenharia te manda o cronograma.",
        "Logo que recebermos o laudo, a Débora te liga.",
        "Quando os documentos chegarem, o contador confere tudo.",
        "Assim que der, o Paulo te chama.",
        "Assim que possível, a equipe de campo passa aí.",
        # The periphrastic future in the clause.
        "Quando o técnico vai passar, ele te avisa antes.",
        # Not at the start of its sentence: the main clause comes first.
        "O técnico te liga quando chega aí.",
        # Too short to tell.
        "Quando puder, me avisa.",
    ],
)
def test_a_when_clause_about_the_time_ahead_is_no_habit(text: str) -> None:
    assert not _habit_marked(text)


_SUBJECTS = st.sampled_from(["o técnico", "a peça", "o pagamento", "os documentos", "a equipe"])
_AHEAD = st.sampled_from(
    ["chegar", "chegarem", "for aprovado", "estiver pronta", "tiver retorno", "vier", "puder"]
)


@given(st.sampled_from(["quando", "assim que", "logo que", "depois que"]), _SUBJECTS, _AHEAD)
def test_no_future_subjunctive_clause_is_ever_a_habit(lead: str, subject: str, verb: str) -> None:
    words = fold(f"{lead} {subject} {verb} , o pessoal liga").split()
    index = words.index("que") if " " in lead else 0
    assert not habitual_clause_at(words, index)


@pytest.mark.parametrize(
    "text",
    [
        # Automatic processes, the policy's own example among them.
        "Você receberá um e-mail automático com o boleto assim que a compra for aprovada.",
        "O aplicativo manda uma notificação automática quando a fatura fecha.",
        # An outside party's part, nobody of the business.
        "Os Correios informam que o pacote chega até sexta.",
        "Os Correios devem entregar o pacote em até 5 dias úteis.",
        # Every sentence an outside party's or a machine's.
        "Os Correios informam que o pacote chega até sexta. Você receberá um e-mail automático.",
    ],
)
def test_an_automatic_or_outside_only_near_miss_needs_no_model_check(text: str) -> None:
    verdict = assess_promise(text)
    assert not verdict.promise
    assert not verdict.uncertain


def test_an_outside_party_scored_as_a_promise_still_goes_to_the_check() -> None:
    # Above the threshold the learned verdict is not settled away: the check reads it
    # (detector 24's rule for carriers), so the filter below the threshold cannot hide it.
    verdict = assess_promise("A transportadora Veloz entrega a encomenda até quinta-feira.")
    assert verdict.score >= learned_model().calibration.threshold
    assert not verdict.promise
    assert verdict.uncertain


@pytest.mark.parametrize(
    "text",
    [
        # Someone of the business acts in the same message: never settled away by the filter.
        "O sistema gera o boleto automaticamente e a Renata, do financeiro, te liga amanhã.",
        "A transportadora retira o equipamento e o nosso técnico instala na sexta às 9h.",
    ],
)
def test_a_promise_beside_an_automatic_process_or_a_carrier_is_still_found(text: str) -> None:
    verdict = assess_promise(text)
    assert verdict.promise or verdict.uncertain


# --- detector 50, from r46 -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Você me escreveu 'o Márcio vai trocar a peça amanhã', mas não achei nada agendado aqui.",
        'A senhora disse: "a entregadora vai passar aí às 10h". Aqui não consta nenhuma entrega.',
        "Vc falou “o técnico vai me ligar hoje”? Aqui não tem chamado aberto, viu.",
    ],
)
def test_the_customers_quoted_words_are_not_the_ais_promise(text: str) -> None:
    # The policy: quoting what the customer said promises nothing.
    assert not assess_promise(text).promise


def test_a_promise_after_a_quote_of_the_customer_is_still_found() -> None:
    text = "Você me escreveu 'ninguém me ligou'. Desculpa! A Renata, do financeiro, te liga amanhã."
    assert assess_promise(text).promise


@given(st.text(alphabet="abcdefghij ,.!áéç", max_size=60))
def test_blanking_the_quotes_keeps_every_index(quoted: str) -> None:
    original = f"Você me disse 'o Zé {quoted}' ontem, e a Lia passa aí amanhã."
    blanked, folded = without_customer_quotes(original, fold(original))
    assert len(blanked) == len(original) == len(folded)
    assert blanked.endswith("e a Lia passa aí amanhã.")


@pytest.mark.parametrize(
    "text",
    [
        "Pode ligar direto pro Toninho no (11) 91234-5678 que ele acerta a entrega com você.",
        "Nesse caso o ideal é levar a bike numa oficina perto da sua casa, tá?",
    ],
)
def test_instructions_to_the_customer_are_no_local_promise(text: str) -> None:
    # The policy: the human acts only if the customer goes to them.
    assert not assess_promise(text).promise
