"""Which local stage a router gets, and the per-process cache of trained heads.

``local_classifier_for(intents, phrases)`` is the one entry point: the semantic head when
the encoder loads (with the re-rank encoder when that one loads too), else the lexical
classifier (the log line says so once per process).
Heads are cached by ``training_fingerprint`` (intents, examples, phrases, encoder): a
router is trained again only when one of those changes, in any process, because the
key is computed from the data itself.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Protocol

from conversation.llm.local_classifier import LocalPrediction, get_or_train
from conversation.llm.lru import LruCache

from .encoder import get_encoder, get_rerank_encoder
from .phrase import Phrase
from .preprocess import covered_part
from .types import NONE_INTENT, IntentOption

log = logging.getLogger(__name__)

HEAD_CACHE_SIZE = 64


class LocalStage(Protocol):
    """What the cascade needs of a local classifier."""

    def predict(self, text: str) -> LocalPrediction: ...


def lexical_training_set(
    intents: Sequence[IntentOption], phrases: Sequence[Phrase] = ()
) -> dict[str, list[str]]:
    """Label -> texts for the lexical classifier: name, description, examples and the
    phrases of each intent; phrases labelled ``none`` become a ``none`` label, which the
    cascade reads as "no listed intent fits"."""
    labelled: dict[str, list[str]] = {
        o.name: [
            o.name.replace("_", " ").replace("-", " "),
            covered_part(o.description),
            *o.examples,
        ]
        for o in intents
    }
    for p in phrases:
        if p.text.strip() and (p.intent in labelled or p.intent == NONE_INTENT):
            labelled.setdefault(p.intent, []).append(p.text.strip())
    return labelled


_heads: LruCache[str, LocalStage] = LruCache(HEAD_CACHE_SIZE)


def local_classifier_for(
    intents: Sequence[IntentOption], phrases: Sequence[Phrase] = ()
) -> LocalStage:
    """The router's local stage for these intents and learned phrases; never raises
    for a missing or broken encoder (the lexical classifier answers instead)."""
    encoder = get_encoder()
    if encoder is None:
        return get_or_train(lexical_training_set(intents, phrases))
    rerank = get_rerank_encoder()  # None when off or missing: the first encoder alone
    try:
        from .semantic import encoders_name, train_head, training_fingerprint

        key = training_fingerprint(intents, phrases, encoders_name(encoder, rerank))
        # Trained outside the cache's lock: slow.
        return _heads.get_or_build(
            key, lambda: train_head(intents, phrases, encoder=encoder, rerank_encoder=rerank)
        )
    except Exception:
        log.exception("semantic head training failed; using the lexical classifier")
        return get_or_train(lexical_training_set(intents, phrases))


def cached_heads() -> Mapping[str, LocalStage]:
    return _heads.snapshot()


def clear_heads() -> None:
    _heads.clear()
