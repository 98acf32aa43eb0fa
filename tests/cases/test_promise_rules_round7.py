"""The round-7 rules of the promise detector (``promise_rules``): passive hand-overs in
English, escalation to a support level, pending with a team, "pode aguardar o contato de",
a subjectless plural at the start of a sentence, "expect a call from", "fica encarregado de",
"na fila do suporte", "they're going to".

Every message here was written for this test and is in no corpus or measurement set.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import RULE_IDS, detect_rule_promise


@pytest.mark.parametrize(
    ("text", "rule_id"),
    [
        ("Your claim has been sent to our review team for a decision.", "en_forward_to_human"),
        ("Your ticket has been assigned to a senior technician.", "en_forward_to_human"),
        ("These requests have been referred to the legal department.", "en_forward_to_human"),
        ("O seu chamado subiu para o nível 2, que tem acesso ao servidor.", "escalated_to_level"),
        ("A reclamação subiu pra terceira instância do atendimento.", "escalated_to_level"),
        ("Pronto: o pedido subiu para a gerência regional.", "escalated_to_level"),
        ("A sua proposta está com a diretoria agora.", "pending_with_human"),
        ("O reembolso segue com o financeiro, aguardando a assinatura.", "pending_with_human"),
        ("O laudo está com o técnico para conferência.", "pending_with_human"),
        ("Pode aguardar o contato do Roberto, ele cuida dos seguros.", "customer_may_await_human"),
        ("Você pode esperar a visita da nossa equipe na quinta.", "customer_may_await_human"),
        ("Tudo certo! Vão te ligar para confirmar o endereço.", "they_will_act"),
        ("Devem entrar em contato ainda hoje.", "they_will_act"),
        ("Expect a call from our claims team tomorrow.", "en_customer_will_hear"),
        ("You should receive an email from our recruiter today.", "en_customer_will_hear"),
        ("Your refund request is with the finance team now.", "en_pending_with_human"),
        ("A montadora ficou encarregada de refazer a instalação.", "human_in_charge"),
        ("Incluí o seu pedido na fila do financeiro com prioridade.", "queued_with_human"),
        ("They're going to call you once the part arrives.", "en_human_will_act"),
        ("I'll come back to you with the new quote.", "en_human_will_act"),
    ],
)
def test_round_7_promise_is_found_by_the_rules(text: str, rule_id: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == rule_id
    assert rule_id in RULE_IDS


@pytest.mark.parametrize(
    "text",
    [
        "Your refund has been sent to your bank account.",  # no person
        "The invoice has been sent to your email address.",  # no person
        "Your request has been sent to our team, who usually answer within a day.",  # habit
        "O preço do plano subiu para R$ 89,90 neste mês.",  # a price, not a level
        "A sua conta de luz subiu para a faixa 2 de consumo.",  # a tariff band
        "O seu caso não subiu para o nível 2: ele foi resolvido aqui mesmo.",  # negation
        "O técnico está com o seu aparelho desde ontem.",  # the person is the subject
        "A Larissa está com a equipe de vendas desde 2019.",  # a fact, no "agora"/wait
        "Pode esperar o e-mail de confirmação, ele chega em minutos.",  # automatic
        "Pode aguardar o retorno do banco, que costuma levar dois dias.",  # not the business
        "Os Correios vão te entregar amanhã.",  # a subject outside the business
        "Vão te ligar ou você prefere resolver por aqui?",  # a question
        "Não vão te cobrar nada pela troca.",  # negation, and no action for the customer
        "Devem ser uns 20 minutos de espera.",  # an estimate
        "If you expect a call from our team, keep your phone nearby.",  # conditional
        "You can expect a refund within five business days.",  # no person
        "Expect an email from the system with the receipt.",  # automatic
        "Você fica encarregado de enviar os documentos pelo app.",  # the customer
        "O sistema coloca o pedido na fila de processamento.",  # no person
        "They're going to love the new menu!",  # a feeling, not an action
        "They're going to call you only if the payment fails.",  # conditional
    ],
)
def test_round_7_near_miss_is_not_taken_for_a_promise_by_the_rules(text: str) -> None:
    assert detect_rule_promise(text) is None
