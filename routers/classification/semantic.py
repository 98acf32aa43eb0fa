"""The semantic local stage: sentence embeddings of a router's examples and learned
phrases, scored against a message, with an explicit "none of these" class and a
confidence calibrated per router.

This module holds the head itself: ``train_head`` builds a ``SemanticHead`` and
``SemanticHead.predict`` runs it, plus the head's fingerprint. Its parts live beside it:

* ``semantic_scoring.py``: the knobs (``HeadConfig``), the items a head is built from
  (examples, description, its sub-cases, name and phrases per intent; the anchors and
  ``none`` phrases for ``none``) and the label scores (encoder cosines plus the lexical
  classifier; the second encoder's fused re-rank scores);
* ``archetypes.py``: the archetype phrase bank an intent may borrow phrases from;
* ``semantic_calibration.py``: the confidence features, the calibration fit and the
  cross-fitted points it is fitted on per router.

The top label wins; a media placeholder ("[áudio]") or a message without letters is
``none`` outright.

Re-ranking (when a second encoder is given, ``encoder.get_rerank_encoder``): a verdict
for an intent whose confidence is below ``rerank_gate`` is re-ranked among the intents by
the fused scores, with its own calibrated confidence, never above the first stage's
confidence (which alone measures whether the message fits any intent at all). "none"
verdicts and confident ones are never re-ranked, so the second encoder runs on the unsure
third or so of the messages (its ~30 ms stays off the median).

The names of the two part modules that callers use are re-exported here.

Pure: numpy and the lexical classifier; the encoders are passed in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from types import MappingProxyType

import numpy as np

from conversation.llm.local_classifier import LocalPrediction

from .archetypes import archetype_items, bank_vectors, load_bank
from .encoder import Encoder
from .phrase import Phrase
from .preprocess import expand_spelling, is_placeholder
from .semantic_calibration import (
    FEATURE_SCALES,
    RERANK_FEATURE_SCALES,
    CalibrationPoint,
    calibration_error,
    cross_fit,
    fit_calibration,
    fit_points,
    label_features,
    rerank_features,
    sigmoid,
)
from .semantic_scoring import (
    ANCHOR,
    DEFAULT_CONFIG,
    EXAMPLE,
    FIXED,
    PHRASE,
    HeadConfig,
    Scorer,
    Similarity,
    head_items,
)
from .types import NONE_INTENT, IntentOption

__all__ = [
    "ANCHOR",
    "DEFAULT_CONFIG",
    "EXAMPLE",
    "FEATURE_SCALES",
    "FIXED",
    "PHRASE",
    "PLACEHOLDER_CONFIDENCE",
    "RERANK_FEATURE_SCALES",
    "CalibrationPoint",
    "HeadConfig",
    "SemanticHead",
    "calibration_error",
    "encoders_name",
    "fit_calibration",
    "train_head",
    "training_fingerprint",
]

PLACEHOLDER_CONFIDENCE = 0.99


def encoders_name(encoder: Encoder, rerank: Encoder | None) -> str:
    """What a head's vectors come from, for its fingerprint ("use", "use+e5")."""
    return encoder.name if rerank is None else f"{encoder.name}+{rerank.name}"


def training_fingerprint(
    intents: Sequence[IntentOption], phrases: Sequence[Phrase], encoder_name: str
) -> str:
    """sha256 of everything a head is built from, independent of order."""
    canonical = {
        "encoder": encoder_name,
        "intents": sorted(
            (o.name, o.description.strip(), sorted(e.strip() for e in o.examples)) for o in intents
        ),
        "phrases": sorted({(p.text.strip(), p.intent) for p in phrases}),
    }
    return hashlib.sha256(json.dumps(canonical, ensure_ascii=False).encode()).hexdigest()


class SemanticHead:
    """A router's trained semantic stage. ``predict`` matches ``LocalClassifier.predict``."""

    def __init__(
        self,
        *,
        intents: Sequence[IntentOption],
        scorer: Scorer | None,
        encoder: Encoder,
        calibration: np.ndarray,
        fingerprint: str,
        points: Sequence[CalibrationPoint] = (),
        rerank_encoder: Encoder | None = None,
        rerank_calibration: np.ndarray | None = None,
        archetypes: dict[str, str] | None = None,
    ) -> None:
        self.labels = tuple(o.name for o in intents)
        self.fingerprint = fingerprint
        self.encoder_name = encoders_name(encoder, rerank_encoder)
        self.calibration = calibration
        self.rerank_calibration = rerank_calibration
        self.points = tuple(points)
        self._scorer = scorer
        self._encoder = encoder
        self._rerank_encoder = rerank_encoder
        self.reranked = 0  # messages re-ranked by this head (telemetry, the bench)
        # intent -> the archetype whose phrases it borrows (archetypes.py)
        self.archetypes = MappingProxyType(dict(archetypes or {}))

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """The first stage's label scores (before any re-ranking)."""
        if self._scorer is None:
            return np.zeros((len(texts), 1))
        vectors = self._encoder.encode([expand_spelling(t) for t in texts])
        return self._scorer.scores(vectors, texts)

    def predict(self, text: str) -> LocalPrediction:
        return self.predict_many([text])[0]

    def predict_many(self, texts: Sequence[str]) -> list[LocalPrediction]:
        if not texts:
            return []
        out: list[LocalPrediction | None] = [None] * len(texts)
        todo = [i for i, t in enumerate(texts) if not is_placeholder(t)]
        for i, t in enumerate(texts):
            if is_placeholder(t) or self._scorer is None:
                out[i] = LocalPrediction(
                    label=NONE_INTENT if is_placeholder(t) else None,
                    confidence=PLACEHOLDER_CONFIDENCE if is_placeholder(t) else 0.0,
                    scores={},
                )
        if todo and self._scorer is not None:
            predictions = self._predict_texts([texts[i] for i in todo])
            for i, prediction in zip(todo, predictions, strict=True):
                out[i] = prediction
        return [p for p in out if p is not None]

    def _predict_texts(self, texts: Sequence[str]) -> list[LocalPrediction]:
        if self._scorer is None:
            raise ValueError("a head without intents predicts nothing")
        expanded = [expand_spelling(t) for t in texts]
        scores, semantic, lexical = self._scorer.parts(self._encoder.encode(expanded), texts)
        none_index = len(self.labels)
        shared_words = self._scorer.words.counts(texts)
        confidence = sigmoid(label_features(scores, none_index, shared_words) @ self.calibration)
        choice = scores.argmax(axis=1)
        names = (*self.labels, NONE_INTENT)
        out = [
            LocalPrediction(
                label=names[int(choice[row])],
                confidence=float(confidence[row]),
                scores=MappingProxyType(
                    {n: float(s) for n, s in zip(names, scores[row], strict=True)}
                ),
            )
            for row in range(len(texts))
        ]
        rows = [
            row
            for row in range(len(texts))
            if choice[row] != none_index and confidence[row] < self._scorer.config.rerank_gate
        ]
        if not rows or self._rerank_encoder is None or self.rerank_calibration is None:
            return out
        if self._scorer.second is None or len(self.labels) < 2:
            return out
        fused = self._scorer.rerank(
            semantic[rows], lexical[rows], self._rerank_encoder.encode([expanded[r] for r in rows])
        )
        rerank_confidence = sigmoid(rerank_features(fused, choice[rows]) @ self.rerank_calibration)
        # Never above the first stage's: the fused scores are relative (z-scores), so
        # they cannot tell a message that fits no intent from one that fits one; the
        # first stage's absolute similarities can (with the calibrated re-rank alone,
        # CLINC150's out-of-scope messages went from 53% rejected to none).
        rerank_confidence = np.minimum(rerank_confidence, confidence[rows])
        self.reranked += len(rows)
        for k, row in enumerate(rows):
            out[row] = LocalPrediction(
                label=self.labels[int(fused[k].argmax())],
                confidence=float(rerank_confidence[k]),
                scores=MappingProxyType(
                    {n: float(s) for n, s in zip(self.labels, fused[k], strict=True)}
                ),
            )
        return out


def train_head(
    intents: Sequence[IntentOption],
    phrases: Sequence[Phrase] = (),
    *,
    encoder: Encoder,
    rerank_encoder: Encoder | None = None,
    config: HeadConfig = DEFAULT_CONFIG,
) -> SemanticHead:
    """A head for ``intents``, taught by ``phrases`` (labelled or admin-accepted);
    ``rerank_encoder`` re-ranks its unsure intent verdicts (None: no re-ranking)."""
    intents = [o for o in intents if o.name != NONE_INTENT]
    if len(intents) < 2:
        rerank_encoder = None  # one intent: nothing to re-rank
    fingerprint = training_fingerprint(intents, phrases, encoders_name(encoder, rerank_encoder))
    prior = np.asarray(config.prior, dtype=float)
    if not intents:
        return SemanticHead(
            intents=(), scorer=None, encoder=encoder, calibration=prior, fingerprint=fingerprint
        )
    items = head_items(intents, phrases)
    texts = [expand_spelling(it.text) for it in items]
    vectors = encoder.encode(texts)
    second = None if rerank_encoder is None else rerank_encoder.encode(texts)
    borrowed = None
    if config.archetypes:
        labels = np.array([it.label for it in items], dtype=np.int64)
        borrowed = archetype_items(
            Similarity(labels, vectors, len(intents)).centroids,
            bank_vectors(encoder),
            min_cosine=config.archetype_min_cosine,
            min_margin=config.archetype_min_margin,
            min_words=config.archetype_min_words,
        )
    scorer = Scorer(intents, items, vectors, config, second, borrowed)
    points = cross_fit(intents, items, vectors, config, second, borrowed)
    first_points = [p for p in points if not p.reranked]
    calibration = fit_points(first_points, config, config.prior, FEATURE_SCALES)
    rerank_calibration = (
        None
        if second is None
        else fit_points(
            [p for p in points if p.reranked],
            config,
            config.rerank_prior,
            RERANK_FEATURE_SCALES,
        )
    )
    return SemanticHead(
        intents=intents,
        scorer=scorer,
        encoder=encoder,
        calibration=calibration,
        fingerprint=fingerprint,
        points=points,
        rerank_encoder=rerank_encoder,
        rerank_calibration=rerank_calibration,
        archetypes={
            intents[i].name: load_bank()[k].id
            for i, k in (borrowed.mapped if borrowed else {}).items()
        },
    )
