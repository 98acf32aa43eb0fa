"""The pt-BR promise detector (human-cases §6): corpus quality, the policy, and properties."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cases.guardrail import PROMISE_DETECTOR_VERSION, RULE_IDS, detect_human_promise
from cases.guardrail.normalize import fold
from cases.guardrail.promise import detect_rule_promise
from cases.guardrail.promise_rules import RULE_PATTERNS
from cases.guardrail.promise_scan import _SPACE_NON_WORD, _suppressed

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "promises"

# Floors for the labelled corpora. The tuning corpus is what the rules were written against
# (measured P = R = 1.000 on 216 + 205 rows); the hold-out was written afterwards and never
# tuned on by the rules (measured values in tests/fixtures/promises/SOURCE.md). Since round 2
# both are also training data of the learned stage, whose own held-out set is
# heldout_llm.json (tests/cases/test_promise_detector_learned.py).
CORPUS_PRECISION_FLOOR = 0.98
CORPUS_RECALL_FLOOR = 0.98
HOLDOUT_PRECISION_FLOOR = 0.95
HOLDOUT_RECALL_FLOOR = 0.80


@dataclass(frozen=True)
class Row:
    text: str
    promise: bool
    note: str


def load(name: str) -> list[Row]:
    with (FIXTURES / name).open(encoding="utf-8") as handle:
        return [Row(**json.loads(line)) for line in handle if line.strip()]


CORPUS = load("corpus.jsonl")
HOLDOUT = load("corpus_holdout.jsonl")
POSITIVES = [row.text for row in CORPUS if row.promise]
NEGATIVES = [row.text for row in CORPUS if not row.promise]


def precision_recall(rows: list[Row]) -> tuple[float, float, list[str]]:
    true_pos = false_pos = false_neg = 0
    mistakes = []
    for row in rows:
        found = detect_human_promise(row.text) is not None
        if found and row.promise:
            true_pos += 1
        elif found:
            false_pos += 1
            mistakes.append(f"false positive: {row.text}")
        elif row.promise:
            false_neg += 1
            mistakes.append(f"false negative: {row.text}")
    return true_pos / (true_pos + false_pos), true_pos / (true_pos + false_neg), mistakes


# --- the labelled corpora ---------------------------------------------------------------------


def test_corpus_is_large_and_balanced_enough_to_mean_something() -> None:
    assert len(POSITIVES) >= 150
    assert len(NEGATIVES) >= 150
    assert len({row.text for row in CORPUS}) == len(CORPUS)


def test_precision_and_recall_stay_above_floors_on_the_tuning_corpus() -> None:
    precision, recall, mistakes = precision_recall(CORPUS)
    assert precision >= CORPUS_PRECISION_FLOOR, mistakes
    assert recall >= CORPUS_RECALL_FLOOR, mistakes


def test_precision_and_recall_stay_above_floors_on_the_holdout_corpus() -> None:
    assert len(HOLDOUT) >= 60
    assert not {row.text for row in HOLDOUT} & {row.text for row in CORPUS}
    precision, recall, mistakes = precision_recall(HOLDOUT)
    assert precision >= HOLDOUT_PRECISION_FLOOR, mistakes
    assert recall >= HOLDOUT_RECALL_FLOOR, mistakes


# --- the policy, by example ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "vou verificar com a equipe",
        "Vou encaminhar para o setor responsável.",
        "Um atendente vai entrar em contato.",
        "Nossa equipe vai analisar e te retorno.",
        "Vou pedir para o financeiro.",
        "Assim que tiver uma resposta te aviso.",
        "Retorno em breve!",
        "Vou abrir um chamado.",
        "Já repassei para o time.",
        "Alguém do suporte vai te ligar.",
        "Vamos providenciar.",
        "Irei checar com o responsável.",
    ],
)
def test_promise_of_back_office_action_is_detected(text: str) -> None:
    assert detect_human_promise(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        # The AI does it itself, now.
        "Vou verificar aqui na sua fatura.",
        "Um instante, já te retorno.",
        # Negated or hedged: commits nobody.
        "Não posso prometer que alguém vai ligar.",
        "Não vou encaminhar para o financeiro, já resolvi.",
        # A question or offer: the customer decides; the AI's next message is gated then.
        "Quer que eu encaminhe para a equipe?",
        "Se preferir, posso verificar com a equipe.",
        # Courtesy and instructions.
        "Estou à disposição.",
        "Você pode falar com a central no 0800 123 4567.",
        "Ligue para a central que eles vão te ajudar.",
    ],
)
def test_statement_that_only_looks_like_a_promise_is_not_detected(text: str) -> None:
    assert detect_human_promise(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "vc pode ficar tranquilo, vou ver c/ o pessoal e te falo",
        "vou passar p/ o setor de cobranca",
        "to encaminhando pro suporte, blz?",
        "VOU VERIFICAR COM A EQUIPE",
        "vou verificar com a equipe responsavel e ja te retorno",
    ],
)
def test_whatsapp_spelling_and_missing_accents_are_understood(text: str) -> None:
    assert detect_human_promise(text) is not None


def test_match_reports_rule_and_span_of_the_original_text() -> None:
    body = (
        "Olá, Márcia! 😊 Não consigo alterar isso por aqui, mas VOU ENCAMINHAR para o Financeiro."
    )

    match = detect_human_promise(body)

    assert match is not None
    assert match.rule_id == "forward_to_human"
    assert body[match.start : match.end] == "VOU ENCAMINHAR para o Financeiro"


def test_every_reported_rule_id_is_a_declared_one() -> None:
    reported = {match.rule_id for text in POSITIVES if (match := detect_human_promise(text))}
    assert reported <= set(RULE_IDS)
    # The corpus exercises the rule families, so a rule that silently stops matching shows up.
    assert len(reported) >= 12


def test_promise_after_a_full_whatsapp_message_of_chatter_is_found() -> None:
    # 4,096 characters is WhatsApp's limit for one text message.
    chatter = ("Seu pedido está confirmado e o pagamento foi aprovado. " * 80)[:4_000]
    assert detect_human_promise(chatter + " Vou verificar com a equipe e te retorno.") is not None


def test_empty_and_whitespace_bodies_are_not_promises() -> None:
    assert detect_human_promise("") is None
    assert detect_human_promise(" \n\t ") is None


def test_detector_version_is_exported_for_traces() -> None:
    assert isinstance(PROMISE_DETECTOR_VERSION, str) and PROMISE_DETECTOR_VERSION


# --- properties ---------------------------------------------------------------------------

NEUTRAL = [
    "Obrigado pela paciência!",
    "Tenha um ótimo dia 😊",
    "Seu pedido é o #48213.",
    "O valor ficou R$ 149,90.",
    "Boa tarde!",
    "Qualquer dúvida estou por aqui.",
    "🙏🙏",
]


def random_case(draw: st.DrawFn, text: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.swapcase() if flip else c for c, flip in zip(text, flips, strict=True))


def strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


@st.composite
def case_and_accent_variants(draw: st.DrawFn, pool: list[str]) -> tuple[str, str]:
    original = draw(st.sampled_from(pool))
    variant = strip_accents(original) if draw(st.booleans()) else original
    return original, random_case(draw, variant)


@given(st.text())
@example("\ud800 vou verificar com a equipe \udfff")  # lone surrogates
@example("İİİ ß ﬁ vou verificar com a equipe")  # lower() changes the length
def test_detector_never_raises_and_is_deterministic(body: str) -> None:
    first = detect_human_promise(body)
    assert detect_human_promise(body) == first
    if first is not None:
        assert 0 <= first.start < first.end <= len(body)
        assert first.rule_id in RULE_IDS


@given(case_and_accent_variants(POSITIVES + NEGATIVES))
def test_verdict_ignores_case_and_accents(pair: tuple[str, str]) -> None:
    original, variant = pair
    before, after = detect_human_promise(original), detect_human_promise(variant)
    assert (before is None) == (after is None)
    if before is not None and after is not None:
        assert before.rule_id == after.rule_id


@given(
    st.sampled_from(POSITIVES),
    st.lists(st.sampled_from(NEUTRAL), min_size=1, max_size=4),
    st.sampled_from([" ", "\n", " \n\n"]),
)
def test_appending_neutral_text_keeps_a_promise_a_promise(
    promise: str, neutral: list[str], separator: str
) -> None:
    assert detect_human_promise(promise + separator + " ".join(neutral)) is not None


@given(st.sampled_from(POSITIVES), st.lists(st.sampled_from(NEUTRAL), min_size=1, max_size=3))
def test_neutral_sentences_before_a_promise_shift_its_span_only(
    promise: str, neutral: list[str]
) -> None:
    prefix = " ".join(neutral) + "\n"
    alone = detect_human_promise(promise)
    shifted = detect_human_promise(prefix + promise)
    assert alone is not None and shifted is not None
    assert (shifted.rule_id, shifted.start, shifted.end) == (
        alone.rule_id,
        alone.start + len(prefix),
        alone.end + len(prefix),
    )


@given(st.sampled_from(NEGATIVES), st.lists(st.sampled_from(NEUTRAL), max_size=3))
def test_neutral_text_does_not_turn_a_non_promise_into_one(
    statement: str, neutral: list[str]
) -> None:
    assert detect_human_promise(" ".join([*neutral, statement, *neutral])) is None


# --- the rules stage's shortcuts are exact (the learned stage is tested elsewhere) --------------


def brute_force(body: str) -> tuple[str, int, int] | None:
    """Every rule at every offset, with none of the detector's anchor/needs shortcuts."""
    text = fold(body)
    padded = b" %b " % text.encode("ascii", "replace").translate(_SPACE_NON_WORD)
    tokens = set(padded.split())
    for position in range(len(text)):
        for rule, pattern in RULE_PATTERNS:
            match = pattern.match(text, position)
            if match is None:
                continue
            rule_id = match.lastgroup or rule.rule_id
            if not _suppressed(text, tokens, rule_id, position, match.end()):
                return rule_id, position, match.end()
    return None


WORDS = (
    "vou vamos estou to irei a gente nossa o a um alguem do da equipe time suporte setor "
    "financeiro atendente eles vai vao ira esta foi deve te lhe com para pro p/ ja nao se "
    "verificar encaminhar encaminhei pedir acionar chamar abrir chamado retorno retornamos "
    "entrara em contato ligar ligara analisando acionado assim que quando tiver resposta "
    "liberarem qualquer novidade aviso aguardando sera analisada providenciar voce quiser "
    "preferir caso queira posso prometer garantir"
)
VOCABULARY = [*WORDS.split(), ".", ",", "?", "!", "\n", "😊"]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(VOCABULARY), max_size=14).map(" ".join))
@example("Ninguém da equipe vai te ligar. Mas o suporte vai te ligar.")
def test_anchored_scan_finds_what_a_brute_force_scan_finds(body: str) -> None:
    match = detect_rule_promise(body)
    assert (None if match is None else (match.rule_id, match.start, match.end)) == brute_force(body)


def test_anchored_scan_agrees_with_brute_force_on_the_whole_corpus() -> None:
    for row in CORPUS + HOLDOUT:
        match = detect_rule_promise(row.text)
        found = None if match is None else (match.rule_id, match.start, match.end)
        assert found == brute_force(row.text), row.text
