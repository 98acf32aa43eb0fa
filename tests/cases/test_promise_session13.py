"""Session 13 of the promise detector (rules 11, features f10, the cue of detector 12), from
the two promises of the blind sets r17 and r18 that reached no case with the model check on
(staff who go by a nickname, "o Rafa ficou de redesenhar...", were read as no one; a
technician on the way, "um técnico tá indo aí", matched no rule) and from hand-written probes
(a promise after "Não se preocupe:" went out clear).

Every message here was written for this test and is in no corpus or measurement set.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import assess_promise, detect_rule_promise
from cases.guardrail.promise_cue import commitment_cue
from cases.guardrail.promise_features import shape

from .test_promise_round15 import CUE_PROMISES  # round 15's, the same check
from .test_promise_session14 import ELLIPTIC_PROMISES  # session 14's, the same check


@pytest.mark.parametrize("nickname", ["rafa", "gui", "fe", "duda", "beto", "nanda"])
def test_staff_nicknames_are_names(nickname: str) -> None:
    assert shape(nickname) == "NAME"


@pytest.mark.parametrize("word", ["mel", "digo", "clara", "re"])
def test_words_that_are_also_names_are_not_read_as_names(word: str) -> None:
    assert shape(word) != "NAME"


# Promises the detector cleared with confidence before this session; each must now be found
# locally or sent to the model check.
NEVER_CLEARED = [
    # Staff who go by a nickname.
    "O Gui ficou de conferir as medidas e te manda o orçamento amanhã.",
    "A Duda vai separar as peças e te avisa quando estiverem prontas.",
    "O Beto ficou de refazer o acabamento da mesa esta semana.",
    # A reassurance or an instruction that opens with a negation, then a colon, then a promise
    # in the present used as the future: the learned stage reads the promise inside the
    # negation's scope (its clauses do not end at a colon); the commitment cue reads it.
    "Não se preocupe: a Carla resolve isso amanhã cedo.",
    "Não mexa em nada: o eletricista passa aí até as 18h.",
    "Não abra a porta do freezer: nosso técnico chega em meia hora.",
]


@pytest.mark.parametrize("text", NEVER_CLEARED + ELLIPTIC_PROMISES + CUE_PROMISES)
def test_a_promise_is_found_or_sent_to_the_check(text: str) -> None:
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
    # A trade of the business as the subject ("o eletricista") is staff_on_the_way (rules 14).
    assert match is not None and match.rule_id in ("human_is_acting", "staff_on_the_way"), text


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nao se preocupe: a carla resolve isso amanha cedo.", True),
        # A negation still open at the clause's end governs what "que" introduces.
        ("nao posso prometer que a equipe vai conseguir antecipar a entrega.", False),
        ("infelizmente nao consigo garantir que alguem vai te ligar hoje.", False),
        # ... but not what follows "e".
        ("falei com a gerente, nao tem problema e o tecnico passa ai amanha.", True),
        # Past and habitual stay facts after a colon too.
        ("nao se preocupe: a taxa ja foi estornada ontem pela equipe.", False),
        ("nao se preocupe: nossa equipe atende todos os dias ate as 22h.", False),
    ],
)
def test_the_commitment_cue_ends_a_clause_at_a_colon_and_a_negation_governs_que(
    text: str, expected: bool
) -> None:
    assert commitment_cue(text, 0, len(text)) is expected
