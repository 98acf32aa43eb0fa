"""Round 15 of the promise detector (detector 16), from the first reading of the blind set r23:
a promise by a nicknamed worker ("o Betão foi buscar no depósito, volta em 1h e já te
chamo") reached the customer with no case with the model check on, and "Seu Tião passa aí
quinta" was only sent to the check. The learned stage knew neither name; worse, an unknown
name's ending gave it a verb's class. And the commitment cue read "foi buscar" (gone to fetch
it) as a past fact and "1h" as no time ahead.

Every message here was written for this test and is in no corpus or measurement set. The
oracle is the policy at the top of ``cases/guardrail/promise.py`` (a person of the business
will act for the customer: a promise), not the detector.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cases.guardrail.normalize import fold
from cases.guardrail.promise import assess_promise
from cases.guardrail.promise_cue import commitment_cue
from cases.guardrail.promise_features import (
    KNOWN_WORDS,
    fold_for_features,
    message_sentences,
    sentence_spans,
    shape,
)
from cases.guardrail.promise_names import NAME_MARK, mark_names

from .test_promise_session14 import (
    ELLIPTIC_PROMISES,
    PAST_ACTOR_NOT_CARRIED,
    PLURAL_PRESENT_PROMISES,
)


def cue(text: str) -> bool:
    folded = fold_for_features(text)
    return any(commitment_cue(folded, *span) for span in sentence_spans(folded))


def marked_words(text: str) -> list[str]:
    return fold_for_features(text).split()


# --- names read from capitals -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("O Magrão passa aí amanhã.", "magrao"),
        ("A Cidinha te liga à tarde.", "cidinha"),
        ("Seu Tonhão vem buscar a geladeira.", "tonhao"),
        ("Dona Neide confirma o horário.", "neide"),
        ("O Sr. Valdir assina o laudo.", "valdir"),
        ("Mr. Okafor will call you.", "okafor"),
    ],
)
def test_a_capitalised_word_after_an_article_or_honorific_is_a_name(text: str, name: str) -> None:
    words = marked_words(text)
    assert name not in words
    assert NAME_MARK in words
    assert shape(NAME_MARK) == "NAME"


@pytest.mark.parametrize(
    "text",
    [
        # Lower case: a common noun ("o cartão", "o botão").
        "O cartão chega amanhã e o botão já foi trocado.",
        # Title case after a bare article, followed by another capital: a product's name.
        "O Plano Premium será renovado.",
        # Public bodies and payment rails that messages capitalise.
        "O Detran libera a vistoria e o Pix cai na hora.",
        # A known name or team keeps its own class.
        "A Ana e a Equipe de vendas.",
        # An abbreviation is not replaced: its period must not end the sentence.
        "O Dr. Paulo atende às 9h.",
    ],
)
def test_what_is_not_marked_as_a_name(text: str) -> None:
    assert NAME_MARK not in marked_words(text)


@pytest.mark.parametrize(
    ("name", "misread"),
    [("Valdir", "INF"), ("Tadeu", "PAST3"), ("Almeida", "PART"), ("Edgar", "INF")],
)
def test_an_unknown_name_is_not_read_as_a_verb(name: str, misread: str) -> None:
    folded = fold(name)
    assert shape(folded) == misread  # what the ending alone says
    assert f"o {NAME_MARK} vai" in fold_for_features(f"O {name} vai te ligar.")


@pytest.mark.parametrize("word", ["pneu", "chapeu", "museu", "trofeu"])
def test_nouns_in_eu_are_not_a_past_tense(word: str) -> None:
    assert shape(word) != "PAST3"


_PIECES = st.sampled_from(
    [
        *("O", "o", "A", "a", "Seu", "Dona", "Sr.", "Sra.", "Dr.", "Mr.", "Ms", "Tia", "\n"),
        *("Betão", "Tião", "Zé", "Plano", "Premium", "Detran", "Dr", "vai", "ligar", ".", ","),
        *("?", "!", "...", ":", "É", "ç", "Sr", "ÇÃO", "éÉ", "1h", "Ana"),
    ]
)
_SENTENCE_TEXT = st.one_of(
    st.lists(_PIECES, max_size=14).map(" ".join),
    st.lists(_PIECES, max_size=14).map("".join),
    st.text(alphabet=st.sampled_from(list("OoAaSsDdMmr.,!? ÇÉçéãõBetãoTiNvlz\n")), max_size=60),
)


@settings(deadline=None)  # the first call trains the learned stage
@given(_SENTENCE_TEXT)
def test_marking_names_keeps_the_sentences(text: str) -> None:
    # The detector reports the span of a sentence found in the marked text against the plain
    # fold: both must cut the text into the same number of sentences.
    folded = fold(text)
    marked = mark_names(text, folded, KNOWN_WORDS)
    assert len(message_sentences(marked)) == len(message_sentences(folded))
    assert len(sentence_spans(marked)) == len(sentence_spans(folded))
    assert not assess_promise(text).promise or assess_promise(text).match is not None


# --- the commitment cue ----------------------------------------------------------------------

# Promises (the policy: someone other than the AI will act for the customer) the cue reads
# since round 15. Each is also found or sent to the model check: test_promise_session13's
# found-or-checked test reads this list.
CUE_PROMISES = [
    # An errand under way ("foi buscar"), then a time ahead ("em 40min", "às 16h", "em 1h").
    "Acabou o filtro aqui, mas o Jorginho foi buscar no fornecedor, volta em 40min e te aviso.",
    "A peça não veio, o técnico foi pegar na distribuidora e chega aí às 16h.",
    "Os meninos foram buscar a escada e voltam em 1h pra terminar a instalação.",
    # The business's own vehicle puts one of its drivers to work (an outside carrier's truck
    # is shipping status).
    "A sua estante sai na sexta no nosso caminhão, entre 8h e 12h.",
    "Os 20 galões de água vão na próxima van, daqui a uns 40 minutos.",
    "As marmitas vão no carro de entrega das 11h, direto no seu trabalho 🍱",
    # Portuguese "no" is "em" + "o": what follows it is not negated.
    "Amanhã no fim da tarde o técnico passa aí pra trocar o filtro.",
    "Já confirmei: no sábado a equipe de montagem monta o guarda-roupa.",
    # An emoji between two statements ends a clause (no period on WhatsApp); "5 min antes".
    "A professora Bia não vai conseguir vir hoje 😕 a coordenação remarca a aula e te avisa.",
    "Seu pedido está separado. O motoboy chama no interfone 5 min antes de chegar.",
]


@pytest.mark.parametrize("text", CUE_PROMISES + ELLIPTIC_PROMISES + PLURAL_PRESENT_PROMISES)
def test_the_cue_commits_the_actor(text: str) -> None:
    assert cue(text), text


@pytest.mark.parametrize(
    "text",
    [
        # A past fact with a clock time: done, nothing ahead.
        "O técnico esteve aí às 16h e trocou o filtro.",
        # "foi" + participle: a passive past, not an errand.
        "O pedido foi enviado às 10h pela transportadora.",
        # The customer is the one to go.
        "Você pode buscar na loja a partir das 14h.",
        "Pode vir buscar daqui a 10 min, já está pronto.",
        # An outside carrier: shipping status.
        "A sua estante saiu no caminhão da transportadora e chega em 5 dias úteis.",
        "O carro da transportadora passou às 10h e entregou tudo.",
        # A habit of the fleet, not this customer's delivery.
        "Nosso caminhão passa no seu bairro todos os dias às 15h.",
        # English "no" still negates, and so does a negation within its own clause.
        "No one from our team will call you about this.",
        "O técnico não vai conseguir vir hoje 😕",
        *PAST_ACTOR_NOT_CARRIED,
    ],
)
def test_the_cue_commits_no_one(text: str) -> None:
    assert not cue(text), text
