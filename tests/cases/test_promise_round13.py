"""Round 13 of the promise detector (features f9): how a process usually goes is a description,
not a commitment ("normalmente o pessoal liga"); advice is an instruction to the customer
("recomendo ligar para o consultor"); "consegue" is an ability; "câmera" is no future.

Every message here was written for this test and is in no corpus or measurement set.
"""

from __future__ import annotations

import pytest

from cases.guardrail.normalize import fold
from cases.guardrail.promise import assess_promise, detect_rule_promise
from cases.guardrail.promise_features import shape
from cases.guardrail.promise_learned import learned_model
from cases.guardrail.promise_ngrams import message_features


def _keys(text: str) -> set[str]:
    return {
        f
        for sentence in message_features(fold(text))
        for f in sentence
        if f.startswith(("k:", "p:"))
    }


def test_a_habitual_word_marks_the_rest_of_the_sentence_across_commas() -> None:
    habit = _keys("Normalmente, quando o móvel chega, o pessoal da montagem liga para agendar.")
    # The one time ahead (future subjunctive); its present-indicative twin is a habit too
    # since f20 (``test_promise_round22``).
    plain = _keys("Quando o móvel chegar, o pessoal da montagem liga para agendar.")
    assert any("h_HUM" in feature for feature in habit)
    assert not any("h_" in feature for feature in plain)


def test_a_contrast_ends_the_habitual_scope() -> None:
    keys = _keys("Normalmente leva dois dias, mas a equipe vai te ligar hoje.")
    # "a equipe vai te ligar" after "mas" keeps the plain frame of a promise.
    assert "k:HUM FUT" in keys
    assert not any("h_FUT" in feature for feature in keys)


def test_a_quantifier_opens_no_habitual_scope() -> None:
    keys = _keys("Assim que chegarem todos os documentos, a equipe vai analisar o seu pedido.")
    assert not any("h_" in feature for feature in keys)


@pytest.mark.parametrize("advice", ["recomendo", "sugiro", "aconselho", "recommend"])
def test_advice_scopes_what_follows_like_an_instruction(advice: str) -> None:
    (sentence,) = message_features(f"{advice} ligar para o nosso consultor")
    assert any(feature.startswith("k:i_") or "<i_" in feature for feature in sentence)


@pytest.mark.parametrize(
    ("word", "expected"),
    [("camera", "W"), ("cratera", "W"), ("consegue", "consegue"), ("retornara", "FUT")],
)
def test_word_shapes_of_round_13(word: str, expected: str) -> None:
    assert shape(word) == expected


@pytest.mark.parametrize(
    ("habitual", "committed"),
    [
        (
            "Normalmente o pessoal da montagem liga para agendar a visita.",
            "O pessoal da montagem vai ligar para agendar a visita.",
        ),
        (
            "Costuma funcionar assim: quando o laudo sai, o laboratório te manda por e-mail.",
            "Quando o laudo sair, o laboratório vai te mandar por e-mail.",
        ),
    ],
)
def test_a_habit_scores_below_the_same_action_promised(habitual: str, committed: str) -> None:
    model = learned_model()
    assert model.score(habitual).probability < model.score(committed).probability


@pytest.mark.parametrize(
    "text",
    [
        "The maintenance team has been notified and will look into it today.",
        "Facilities has been informed about the leak in your unit.",
        "I've notified our billing team about the double charge.",
        "I have informed the manager, so you're all set.",
        "I've let the front desk know you'll arrive late.",
        "I've flagged this internally; it's on the list for this week.",
        "I flagged your refund to the finance team.",
        "You should hear from us by Friday.",
        "Hang tight, our tech guys are already working on your connection.",
        "Your case is now in the hands of our claims department.",
        "A technician is scheduled to visit you tomorrow between 9 and 12.",
        "A tesouraria vai conferir os dados bancários e fazer a transferência.",
        "Seu chamado foi assumido pela equipe de redes.",
        "Seu pedido foi priorizado pelo time de logística.",
        "O seu caso foi designado para uma analista do jurídico.",
        "Já encaminhei para o pós-venda.",
    ],
)
def test_people_told_or_at_work_and_new_departments_are_rule_promises(text: str) -> None:
    # Human-cases §1: telling a team of the business is a commitment that the team acts.
    assert detect_rule_promise(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "If the team had been notified, they would have called.",
        "Should I let the team know?",
        "Has the manager been informed?",
        "The manager hasn't been notified.",
        "You have been notified by email.",
        "I can let the team know if you want.",
        "Please let the team know when you arrive.",
        "You should contact our billing team.",
        "Are our technicians working on it?",
        "Our team is not working on weekends.",
        "Our team is usually working on these requests in order.",
        "Your case is in the hands of the bank now.",
        "Seu chamado não foi assumido pela equipe ainda.",
        "O pedido foi priorizado pelo sistema automaticamente.",
        "Seu processo foi aprovado pelo gerente e já está concluído.",
    ],
)
def test_told_rules_take_back_questions_conditions_negations_and_instructions(text: str) -> None:
    assert detect_rule_promise(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Relaxa, o menino da entrega passa aí até as 18h.",
        "Fica tranquila, o moço da instalação passa aí na quinta.",
    ],
)
def test_a_person_coming_to_the_customer_reaches_the_model_check(text: str) -> None:
    # Present-as-future with a person of the business as the subject: found locally or sent
    # to the check, never cleared (human-cases §6: a promise must not leave without a case).
    assessment = assess_promise(text)
    assert assessment.promise or assessment.uncertain
