"""Scoring gives the sums of the feature strings (``promise_ngrams``).

The oracle is the definition the model is trained on: a sentence's raw score is the sum of
the weights of its ``message_features`` strings (missing features weigh 0), and it carries a
trigger when one of those strings is in ``COMMITMENT_TRIGGERS``. Scoring reads the walk's
features through the compiled table instead, along other branches; a feature scored but not
emitted (or the reverse), or a look-up under the wrong parts, fails here.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cases.guardrail import promise_ngrams
from cases.guardrail.normalize import fold
from cases.guardrail.promise_cue import COMMITMENT_TRIGGERS
from cases.guardrail.promise_learned import MAX_SCANNED_CHARS, learned_model, load_corpus
from cases.guardrail.promise_ngrams import compile_weights, message_features, sentence_scores

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def reference(folded: str, weights: dict[str, float]) -> list[tuple[float, bool]]:
    return [
        (
            sum(weights.get(feature, 0.0) for feature in features),
            not COMMITMENT_TRIGGERS.isdisjoint(features),
        )
        for features in message_features(folded)
    ]


def same(got: list[tuple[float, bool]], expected: list[tuple[float, bool]]) -> bool:
    # The walks add in the same order (the same float on 3.11); Python 3.12's sum() compensates
    # rounding, hence the tolerance, far below the smallest weight kept (0.05).
    return [trigger for _, trigger in got] == [trigger for _, trigger in expected] and [
        raw for raw, _ in got
    ] == pytest.approx([raw for raw, _ in expected], abs=1e-9)


def assert_same(folded: str, weights: dict[str, float]) -> None:
    compiled = compile_weights(weights, COMMITMENT_TRIGGERS)
    assert same(sentence_scores(folded, compiled), reference(folded, weights))


def labelled_texts() -> list[str]:
    texts = [row.text for row in load_corpus()]
    for path in sorted((FIXTURES / "cases").glob("heldout_*.json")) + sorted(
        (FIXTURES / "promises").glob("*.json")
    ):
        for item in json.loads(path.read_text(encoding="utf-8"))["items"]:
            texts.append(item["text"] if isinstance(item, dict) else item[0])
    return texts


def test_every_labelled_message_scores_the_same_with_the_shipped_weights() -> None:
    model = learned_model()
    texts = labelled_texts()
    assert len(texts) > 1500
    differ = []
    for text in texts:
        folded = fold(text[:MAX_SCANNED_CHARS])
        if not same(sentence_scores(folded, model.compiled), reference(folded, model.weights)):
            differ.append(text)
    assert differ == []


# Words that steer the walk: classes, scope openers (negation, condition, instruction), habits
# and their "mas", the customer-first verbs after "me", quantifiers, abbreviations, tags.
WORDS = (
    *("vai", "vao", "te", "ligar", "o", "tecnico", "fernanda", "ele", "a", "gente", "nao"),
    *("se", "caso", "ligue", "costuma", "normalmente", "mas", "todo", "me", "avisa", "que"),
    *("eu", "abro", "chamado", "assim", "quando", "devem", "ficaram", "expect", "aguarde"),
    *("equipe", "amanha", "foi", "feito", "posso", "quer", "ta", "sr", "dr", "1.200,50"),
    *("verificando", "retornar", "will", "call", "you", "someone", "once", "when", "after"),
)
MARKS = (",", " - ", "\u2014", ". ", "? ", "! ", "\n", "\u2026", " 😊 ")


@st.composite
def texts(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(WORDS + MARKS), max_size=140))
    return " ".join(pieces)


def decoys(features: list[str]) -> list[str]:
    """Every feature of every family built from the parts the text's features use (words,
    classes, sentence bounds): most of them the walk does not meet, and their weights must
    not count."""
    bounds = {"<s>", "</s>"}
    words = sorted(bounds | {p for f in features if f.startswith("b:") for p in f[2:].split(" ")})
    labels = sorted(bounds | {p for f in features if f.startswith("k:") for p in f[2:].split(" ")})
    return [
        *(f"b:{a} {b}" for a, b in itertools.product(words, repeat=2)),
        *(f"k:{a} {b}" for a, b in itertools.product(labels, repeat=2)),
        *(f"k:{a} {b} {c}" for a, b, c in itertools.product(labels, repeat=3)),
        *(f"{family}:{a}<{b}" for family in ("p", "qp") for a in labels for b in labels),
        *(f"{family}:{word}" for family in ("u", "qu") for word in words),
        "q",
    ]


@settings(max_examples=200, deadline=None)
@given(text=texts(), chosen=st.data(), seed=st.integers(0, 2**32))
def test_any_weights_on_any_token_stream_sum_the_same(
    text: str, chosen: st.DataObject, seed: int
) -> None:
    features = sorted({f for sentence in message_features(text) for f in sentence})
    rng = random.Random(seed)
    weights = {feature: rng.choice((-1, 1)) * rng.uniform(0.05, 4) for feature in decoys(features)}
    # And the features the text does have, with weights hypothesis picks (and shrinks).
    pick = st.lists(st.sampled_from(features), unique=True) if features else st.just([])
    for feature in chosen.draw(pick):
        weights[feature] = chosen.draw(st.floats(-4, 4, allow_nan=False))
    assert_same(text, weights)


def test_a_run_on_sentence_is_scored_window_by_window() -> None:
    text = " ".join(["o tecnico vai te ligar amanha e"] * 30)  # 210 tokens: four windows
    (features,) = message_features(text)
    weights = {feature: 0.1 * (i % 7 + 1) for i, feature in enumerate(sorted(set(features)))}
    assert_same(text, weights)


def test_a_question_scores_its_pairs_and_unigrams_as_the_question_twins() -> None:
    (features,) = message_features("a equipe vai te ligar?")
    assert "q" in features
    weights = {feature: 0.25 for feature in features}
    assert_same("a equipe vai te ligar?", weights)
    # The statement's weights do not leak into the question.
    statement_only = {f: 1.0 for f in features if f.startswith(("u:", "p:"))}
    ((raw, _),) = sentence_scores(
        "a equipe vai te ligar?", compile_weights(statement_only, COMMITMENT_TRIGGERS)
    )
    assert raw == sum(w for f, w in statement_only.items() if f.startswith("p:"))


def test_the_token_table_stays_bounded_and_correct_after_it_is_emptied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(promise_ngrams, "_ENTRIES_MAX", 5)
    model = learned_model()
    compiled = compile_weights(model.weights, COMMITMENT_TRIGGERS)
    for text in ("A Fernanda, do financeiro, vai te retornar amanhã.", "Ninguém vai te ligar."):
        folded = fold(text)
        assert same(sentence_scores(folded, compiled), reference(folded, model.weights))
        assert len(compiled.entries) <= 5


@pytest.mark.parametrize("feature", ["x:vai", "b:vai", "k:a b c d", "b:a b c"])
def test_an_unknown_feature_shape_is_refused(feature: str) -> None:
    with pytest.raises(ValueError, match="unknown feature family or shape"):
        compile_weights({feature: 1.0}, frozenset())


def test_a_trigger_that_is_not_a_bigram_is_refused() -> None:
    with pytest.raises(ValueError, match="trigger"):
        compile_weights({}, frozenset({"p:HUM<FUT"}))
