"""Local first, LLM when the local classifier is unsure.

The local classifier is free and sub-millisecond; the LLM costs a call and ~1 s. A
confident local verdict therefore stands, and the LLM (when the workspace has one) only
sees the messages the local classifier could not place.

How the resolver (spec Task 4) reads the result:

* ``status == "failed"``: the classifier failed (the LLM errored or gave no verdict) -
  fall back to the router's fallback agent (outcome ``classifier_failed``). The local
  guess is kept in ``local_intent`` for telemetry, not used for routing: the spec routes
  a failed classification to the fallback.
* ``status == "ok"``: compare ``intent``/``confidence`` with ``min_confidence``
  (``intent`` None means no listed intent fits).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from conversation.llm.base import ModelClient
from conversation.llm.local_classifier import LocalClassifier, get_or_train, normalize

from .llm import classify_with_llm
from .local import LocalStage
from .types import NONE_INTENT, CascadeResult, IntentOption


def local_training_set(intents: Sequence[IntentOption]) -> dict[str, list[str]]:
    """Label -> texts: the intent's name (as words), description and examples."""
    return {
        o.name: [o.name.replace("_", " ").replace("-", " "), o.description, *o.examples]
        for o in intents
    }


def local_classifier_for(intents: Sequence[IntentOption]) -> LocalClassifier:
    """The lexical classifier for these intents, trained once per distinct set of intents.
    Not the product's local stage: that is ``classification.local.local_classifier_for``
    (the semantic head, with this classifier as its fallback and inside its scores)."""
    return get_or_train(local_training_set(intents))


def classify(
    message: str,
    *,
    intents: Sequence[IntentOption],
    local: LocalStage,  # the lexical classifier or a semantic head (classification.local)
    llm: ModelClient | None,
    model: str,
    local_accept_threshold: float,
    context: Mapping[str, Any],
) -> CascadeResult:
    """Classify ``message`` among ``intents``; never raises.

    ``local_accept_threshold`` above 1 sends every message to the LLM (when configured).
    """
    started = time.perf_counter()

    def elapsed() -> float:
        return (time.perf_counter() - started) * 1000

    names = {o.name for o in intents}
    if not names or not normalize(message):
        return CascadeResult(
            intent=None, confidence=0.0, stage="none", status="ok", latency_ms=elapsed()
        )

    prediction = local.predict(message)
    # A label the router no longer has (stale model) or an explicit "none" label: no fit.
    local_intent = prediction.label if prediction.label in names - {NONE_INTENT} else None
    local_confidence = prediction.confidence

    if llm is None or local_confidence >= local_accept_threshold:
        return CascadeResult(
            intent=local_intent,
            confidence=local_confidence,
            stage="local",
            status="ok",
            latency_ms=elapsed(),
            local_intent=local_intent,
            local_confidence=local_confidence,
        )

    verdict = classify_with_llm(llm, model=model, intents=intents, message=message, context=context)
    return CascadeResult(
        intent=verdict.intent,
        confidence=verdict.confidence,
        stage="llm",
        status=verdict.status,
        latency_ms=elapsed(),
        local_intent=local_intent,
        local_confidence=local_confidence,
        error_code=verdict.error_code,
    )
