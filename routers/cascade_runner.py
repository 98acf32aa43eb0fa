"""Running a stored router's classification in the product: the pure cascade of
``routers.classification`` (its local classifier, then its LLM when unsure) with the LLM
client this workspace and organization allow.

The local stage is the semantic head (``classification.local``: sentence embeddings of
the members' examples and the router's labelled phrases, calibrated per router), or the
lexical classifier when the encoder cannot load. It is trained once per distinct training
set (a fingerprint cache), so a router is retrained only when its members or phrases
change. The LLM
stage goes through the model seam (``model_calls.model_client``) with purpose ``intent_router``
and the router's ``classifier_model``; every call lands in the ``LlmCall`` ledger through
the recorder given here. With no API key the workspace is offline and the local verdict
decides alone.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from conversation import model_calls
from conversation.llm.base import (
    CallRecorder,
    LlmInvalidRequest,
    ModelClient,
    ModelRequest,
    ModelResponse,
)
from conversation.llm.catalog import enabled_models
from routers.classification import CascadeResult, classify
from routers.classification.encoder import get_encoder, get_rerank_encoder
from routers.classification.local import local_classifier_for
from routers.loaders import LoadedRouter

log = logging.getLogger(__name__)


class LlmModelNotEnabled(LlmInvalidRequest):
    """The organization restricts its models and the router's classifier is not one."""

    code = "llm_model_not_enabled"


class _DisabledModel:
    """Stands in for the LLM when the organization has not enabled the router's model:
    the cascade still accepts a confident local verdict, and anything that needs the LLM
    fails the way a refused model call would (classifier_failed → fallback)."""

    name = "disabled"

    def __init__(self, model: str) -> None:
        self._model = model

    def complete(self, request: ModelRequest) -> ModelResponse:
        raise LlmModelNotEnabled(f"model {self._model} is not enabled for this organization")


def classifier_client(
    recorder: CallRecorder, *, model: str, org_settings: object
) -> ModelClient | None:
    """The LLM for the cascade's second stage, or None when the workspace is offline."""
    if model_calls.provider_name() == "offline":
        return None
    allowed = enabled_models(org_settings)
    if allowed is not None and model not in allowed:
        return _DisabledModel(model)
    # A routing decision has a safe fallback: fail over to it rather than wait on the
    # SDK's full retry budget while the customer waits.
    return model_calls.model_client(
        recorder,
        max_retries=min(settings.ANTHROPIC_MAX_RETRIES, settings.ROUTER_LLM_MAX_RETRIES),
    )


def classify_message(
    router: LoadedRouter,
    message: str,
    *,
    recorder: CallRecorder,
    org_settings: object,
    context: Mapping[str, Any],
) -> CascadeResult:
    """The router's verdict on ``message``. Never raises (the cascade promises it)."""
    intents = router.intent_options()
    return classify(
        message,
        intents=intents,
        local=local_classifier_for(intents, router.phrases),
        llm=classifier_client(recorder, model=router.classifier_model, org_settings=org_settings),
        model=router.classifier_model,
        local_accept_threshold=router.local_accept_threshold,
        context={**context, "router_id": str(router.id)},
    )


def warm_up() -> None:
    """Load the sentence encoders now (worker start), not on a customer's first turn, and
    embed the built-in "none" anchors every router's head shares (~1.5 s with the re-rank
    encoder). Cheap when done already; with no encoder the lexical classifier needs none."""
    from routers.classification.none_anchors import NONE_ANCHORS
    from routers.classification.preprocess import expand_spelling

    first = get_encoder()
    if first is None:
        return
    anchors = [expand_spelling(t) for t in NONE_ANCHORS]
    for encoder in (first, get_rerank_encoder()):
        if encoder is not None:
            encoder.encode(anchors)  # cached per process (CachingEncoder)
