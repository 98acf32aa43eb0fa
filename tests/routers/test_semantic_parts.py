"""The pure parts of the semantic stage: text preparation, the change-of-subject rule,
calibration, fingerprints and the evaluation helpers (no encoder needed)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversation.llm.local_classifier import LocalPrediction
from routers.classification.evaluation import (
    average,
    score_cases,
    score_switches,
    simulate_learning,
)
from routers.classification.phrase import Phrase, phrases_from_pairs
from routers.classification.preprocess import (
    covered_part,
    description_fragments,
    expand_spelling,
    is_placeholder,
)
from routers.classification.semantic import (
    calibration_error,
    fit_calibration,
    training_fingerprint,
)
from routers.classification.semantic_scoring import head_items
from routers.classification.stickiness import context_text, should_switch
from routers.classification.types import NONE_INTENT, IntentOption


def test_expand_spelling_writes_out_whatsapp_words() -> None:
    assert expand_spelling("vc tb ta sem net hj?") == "você também está sem internet hoje?"
    assert expand_spelling("Pq N manda o boleto pfv") == "porque não manda o boleto por favor"


def test_expand_spelling_keeps_words_inside_other_words() -> None:
    assert expand_spelling("tabela de preços, nada de pqno") == "tabela de preços, nada de pqno"


def test_expand_spelling_folds_stretched_letters_but_not_double_ones() -> None:
    assert expand_spelling("siiiim, carro") == "sim, carro"


@pytest.mark.parametrize("text", ["[áudio]", "[áudio de 0:42]", "<Mídia oculta>", "🙏🙏", "?!", ""])
def test_placeholders_and_textless_messages_are_detected(text: str) -> None:
    assert is_placeholder(text)


@pytest.mark.parametrize("text", ["oi", "[áudio] e o boleto?", "2", "pedido [123]"])
def test_messages_with_words_are_not_placeholders(text: str) -> None:
    assert not is_placeholder(text)


@given(st.text(alphabet=st.characters(categories=["P", "S", "Z"]), max_size=30))
def test_any_text_without_letters_or_digits_is_a_placeholder(text: str) -> None:
    assert is_placeholder(text)


def test_description_fragments_list_the_sub_cases_without_the_opener() -> None:
    fragments = description_fragments(
        "Cliente avisa que a internet caiu, está lenta, oscilando ou que o Wi-Fi está ruim."
    )
    assert fragments == ["a internet caiu", "está lenta", "oscilando", "que o Wi-Fi está ruim"]


# What a description says its intent does not cover names another intent's subject; as an
# item of this one it would pull that intent's messages in (round 19: "Pedido de ração ...;
# não cobre medicamentos" made "não cobre medicamentos" a pet-food item).
@pytest.mark.parametrize(
    ("description", "covered"),
    [
        (
            "Pedido de ração, petiscos e areia; não cobre medicamentos nem pedidos já feitos.",
            "Pedido de ração, petiscos e areia",
        ),
        (
            "O titular quer incluir um dependente no contrato, e não contratar um plano novo.",
            "O titular quer incluir um dependente no contrato",
        ),
        (
            "O cliente quer pagar a viagem já contratada, sem cancelar.",
            "O cliente quer pagar a viagem já contratada",
        ),
        (
            "Paciente quer marcar consulta ou limpeza (sem ser urgência).",
            "Paciente quer marcar consulta ou limpeza.",
        ),
        # A "não" or a "sem" that is part of what is covered stays.
        (
            "Aluno não consegue entrar: catraca, biometria ou app com problema.",
            "Aluno não consegue entrar: catraca, biometria ou app com problema.",
        ),
        (
            "Relatar que o imóvel está sem água ou com pressão fraca.",
            "Relatar que o imóvel está sem água ou com pressão fraca.",
        ),
        (
            "Lanches veganos, sem glúten ou sem lactose.",
            "Lanches veganos, sem glúten ou sem lactose.",
        ),
    ],
)
def test_covered_part_drops_what_the_description_excludes(description: str, covered: str) -> None:
    assert covered_part(description) == covered


_WORDS = st.lists(
    st.sampled_from(["boleto", "entrega", "consulta", "ração", "plano", "internet", "troca"]),
    min_size=1,
    max_size=5,
).map(" ".join)


@given(
    covered=_WORDS,
    excluded=_WORDS,
    marker=st.sampled_from(["; não cobre", ", e não", "; não inclui", ", exceto", ". Não cobre"]),
)
def test_an_exclusion_tail_never_reaches_the_items(
    covered: str, excluded: str, marker: str
) -> None:
    description = f"Cliente quer {covered}{marker} {excluded}."
    assert covered_part(description) == f"Cliente quer {covered}"
    assert description_fragments(description) == description_fragments(f"Cliente quer {covered}")


def test_phrases_from_pairs_keeps_the_latest_label_of_a_text() -> None:
    phrases = phrases_from_pairs([("oi", "none"), (" cadê o boleto ", "boleto"), ("oi", "vendas")])
    assert phrases == (Phrase("cadê o boleto", "boleto"), Phrase("oi", "vendas"))


# --- change of subject ------------------------------------------------------------------


def verdict(label: str | None, confidence: float) -> LocalPrediction:
    return LocalPrediction(label=label, confidence=confidence, scores={})


def test_switch_needs_another_intent_above_min_confidence() -> None:
    assert should_switch("vendas", verdict("suporte", 0.7), None, min_confidence=0.6)
    assert not should_switch("vendas", verdict("suporte", 0.5), None, min_confidence=0.6)
    assert not should_switch("vendas", verdict("vendas", 0.99), None, min_confidence=0.6)
    assert not should_switch("vendas", verdict(NONE_INTENT, 0.99), None, min_confidence=0.6)


def test_follow_up_read_in_context_keeps_the_subject() -> None:
    alone, in_context = verdict("pagamento", 0.9), verdict("pedido", 0.8)
    assert not should_switch("pedido", alone, in_context, min_confidence=0.6)
    assert should_switch("pedido", alone, verdict("pagamento", 0.7), min_confidence=0.6)


def test_a_sure_verdict_switches_whatever_the_context() -> None:
    assert should_switch(
        "banho", verdict("emergencia", 0.99), verdict("banho", 0.9), min_confidence=0.6
    )


def test_without_a_subject_any_confident_intent_is_taken() -> None:
    assert should_switch(None, verdict("vendas", 0.61), None, min_confidence=0.6)
    assert not should_switch(None, verdict(NONE_INTENT, 0.99), None, min_confidence=0.6)


def test_context_text_joins_the_previous_message() -> None:
    assert context_text("quero pizza", " e um guaraná ") == "quero pizza e um guaraná"
    assert context_text(None, "e um guaraná") == "e um guaraná"


# --- calibration and fingerprints ------------------------------------------------------


def test_calibration_without_points_is_the_prior() -> None:
    w = fit_calibration(np.zeros((0, 4)), np.zeros(0), np.zeros(0), (1.0, 2.0, 3.0, 4.0), 30.0)
    assert w.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_calibration_moves_toward_the_data_and_less_with_a_stronger_prior() -> None:
    rng = np.random.default_rng(0)
    margin = rng.uniform(0, 0.3, 400)
    # [1, top, margin, is_none, word_margin]: the first stage's features.
    zeros = np.zeros(400)
    features = np.stack([np.ones(400), np.full(400, 0.5), margin, zeros, zeros], axis=1)
    correct = (rng.uniform(size=400) < 1 / (1 + np.exp(-(-2 + 40 * margin)))).astype(float)
    prior = (0.0, 0.0, 0.0, 0.0, 0.0)
    weak = fit_calibration(features, correct, np.ones(400), prior, 1.0)
    strong = fit_calibration(features, correct, np.ones(400), prior, 1000.0)
    assert weak[2] > 20  # the margin's weight is learned (true value 40)
    assert abs(strong[2]) < abs(weak[2])


def test_calibration_error_of_perfect_confidences_is_zero() -> None:
    assert calibration_error([1.0, 1.0, 0.0], [True, True, False]) == 0.0


INTENTS = (
    IntentOption("a", "Descrição A", ("um", "dois")),
    IntentOption("b", "Descrição B", ("três",)),
)


@given(st.permutations(INTENTS), st.permutations([Phrase("x", "a"), Phrase("y", "b")]))
def test_fingerprint_ignores_order(intents: Sequence[IntentOption], phrases: list[Phrase]) -> None:
    assert training_fingerprint(intents, phrases, "use") == training_fingerprint(
        INTENTS, [Phrase("x", "a"), Phrase("y", "b")], "use"
    )


def test_fingerprint_changes_with_an_example_a_phrase_or_the_encoder() -> None:
    base = training_fingerprint(INTENTS, (), "use")
    edited = (INTENTS[0], IntentOption("b", "Descrição B", ("três", "quatro")))
    assert training_fingerprint(edited, (), "use") != base
    assert training_fingerprint(INTENTS, (Phrase("x", "a"),), "use") != base
    assert training_fingerprint(INTENTS, (), "e5") != base


# --- evaluation helpers with a scripted stage --------------------------------------------


class Scripted:
    """Answers from a table; unknown texts get ``none`` with low confidence."""

    def __init__(self, table: dict[str, tuple[str, float]]) -> None:
        self.table = table

    def predict(self, text: str) -> LocalPrediction:
        label, confidence = self.table.get(text, (NONE_INTENT, 0.1))
        return verdict(label, confidence)


def test_score_cases_counts_top1_rejection_and_local_decisions() -> None:
    stage = Scripted(
        {
            "a1": ("a", 0.95),
            "a2": ("b", 0.5),
            "a3": ("a", 0.5),
            "a4": ("a", 0.7),
            "n1": (NONE_INTENT, 0.99),
            "n2": ("a", 0.4),
        }
    )
    score = score_cases(
        stage,
        [("a1", "a"), ("a2", "a"), ("a3", "a"), ("a4", "a"), ("n1", None), ("n2", None)],
        accept_threshold=0.9,
        min_confidence=0.6,
    )
    assert (score.top1, score.none_rejected, score.decided_share) == (0.75, 1.0, 2 / 6)
    assert score.decided_precision == 1.0
    # "a3" has the right label below min_confidence: the resolver sends it to the fallback.
    assert score.routed_offline == 0.5


def test_average_takes_the_decided_precision_over_the_scenarios_that_decided() -> None:
    stage = Scripted({"a1": ("a", 0.95), "a2": ("a", 0.5), "b1": ("b", 0.3)})
    decided = score_cases(
        stage, [("a1", "a"), ("a2", "a")], accept_threshold=0.9, min_confidence=0.6
    )
    undecided = score_cases(stage, [("b1", "b")], accept_threshold=0.9, min_confidence=0.6)
    mean = average([decided, undecided])
    assert mean.decided_precision == 1.0  # the undecided scenario has no precision to average
    assert (mean.top1, mean.routed_offline, mean.in_scope) == (1.0, 0.25, 3)


def test_score_switches_counts_moves_and_stays() -> None:
    stage = Scripted({"troca": ("b", 0.9), "segue": ("b", 0.9), "ctx segue": ("a", 0.9)})
    pairs = [("x", "a", "troca", "b"), ("ctx", "a", "segue", "a")]
    alone = score_switches(stage, pairs, min_confidence=0.6, use_context=False)
    assert (alone.moved, alone.kept) == (1.0, 0.0)
    in_context = score_switches(stage, pairs, min_confidence=0.6, use_context=True)
    assert in_context.kept == 1.0


def test_learning_simulation_learns_only_what_the_stage_did_not_decide() -> None:
    cases = [(f"m{i}", "a") for i in range(30)]
    trained_with: list[int] = []

    def train(phrases: Sequence[Phrase]) -> Scripted:
        trained_with.append(len(phrases))
        # A stage that knows the texts it was taught and is sure of them.
        return Scripted({p.text: ("a", 0.99) for p in phrases} | {"m0": ("a", 0.99)})

    points = simulate_learning(
        train, cases, accept_threshold=0.9, min_confidence=0.6, checkpoints=(10, 25)
    )
    assert [p.seen for p in points] == [10, 25]
    decided = 1 if "m0" in [t for t, _ in cases[:10]] else 0
    assert points[0].learned == 10 - decided or points[0].learned <= 10
    assert points[-1].learned + round(points[-1].local_share * 25) == 25
    assert trained_with[0] == 0 and trained_with == sorted(trained_with)
    assert points[-1].rest is not None and points[-1].rest.in_scope == 5


def test_learning_simulation_scores_the_stage_before_learning_on_the_same_rest() -> None:
    cases = [(f"m{i}", "a") for i in range(20)]

    def train(phrases: Sequence[Phrase]) -> Scripted:
        # Once taught anything, the stage knows every message; before, none of them.
        return Scripted({t: ("a", 0.99) for t, _ in cases} if phrases else {})

    (point,) = simulate_learning(
        train, cases, accept_threshold=0.9, min_confidence=0.6, checkpoints=(5,)
    )
    assert point.rest is not None and point.rest_without_learning is not None
    assert point.rest.in_scope == point.rest_without_learning.in_scope == 15
    assert (point.rest.top1, point.rest_without_learning.top1) == (1.0, 0.0)


def test_no_item_of_an_intent_holds_what_its_description_excludes() -> None:
    food = IntentOption(
        "comprar_racao",
        "Pedido de ração e petiscos para entrega; não cobre medicamentos nem vermífugos.",
        ("quero um saco de ração",),
    )
    medicine = IntentOption("remedios", "Compra de medicamentos e vermífugos.", ("tem vermífugo?",))
    items = head_items([food, medicine], ())
    food_texts = " | ".join(it.text for it in items if it.label == 0)
    assert "medicamentos" not in food_texts and "vermífugos" not in food_texts
    assert "medicamentos" in " | ".join(it.text for it in items if it.label == 1)
