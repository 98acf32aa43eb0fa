"""The semantic local stage: sentence embeddings of a router's examples and learned
phrases, scored against a message, with an explicit "none of these" class and a
confidence calibrated per router.

A router's head is built from (``train_head``):

* per intent: its admin examples, its description, the sub-cases the description lists
  (``preprocess.description_fragments``), its name, and every labelled or accepted
  phrase of that intent;
* for ``none``: the built-in anchors (greetings, thanks, spam, ...) and every phrase
  labelled ``none``.

An intent's score is ``(1 - nn_weight) * cos(message, centroid) + nn_weight * cos(message,
nearest item)`` plus ``lexical_weight`` times the lexical classifier's score (the two see
different things: the encoder paraphrases, the n-grams catch product names and typos);
``none`` scores its nearest anchor plus ``none_bias``. The top label wins; a media
placeholder ("[áudio]") or a message without letters is ``none`` outright.

The confidence is ``sigmoid(w · [1, top, margin, is_none])``: ``top`` the winning score,
``margin`` its lead over the runner-up. ``w`` starts from a prior fitted on the own
scenarios' tuning part and is refitted per router on cross-fitted predictions of the
router's own items (its labelled phrases, its examples, the anchors), shrunk toward the
prior; the fewer phrases a router has, the closer it stays to the prior.

Pure: numpy and the lexical classifier; the encoder is passed in.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from conversation.llm.local_classifier import LocalClassifier, LocalPrediction

from .encoder import Encoder
from .none_anchors import NONE_ANCHORS
from .phrase import Phrase
from .preprocess import description_fragments, expand_spelling, is_placeholder
from .types import NONE_INTENT, IntentOption

PLACEHOLDER_CONFIDENCE = 0.99


@dataclass(frozen=True)
class HeadConfig:
    """Scoring and calibration knobs; the defaults are the measured best (bench/router.py)."""

    nn_weight: float = 0.4
    lexical_weight: float = 0.5
    none_bias: float = -0.05
    # Prior of the calibration weights over [1, top, margin, is_none]: a logistic
    # regression on the own scenarios' tuning part (heads built from the 3 examples),
    # ECE 0.03 there. (A negative weight on ``top`` is not a bug: with the margin in the
    # model, a high top score shared by two labels means a close call.)
    prior: tuple[float, float, float, float] = (0.46, -2.10, 18.81, 0.64)
    # How strongly the prior holds: about this many cross-fitted points outweigh it.
    prior_strength: float = 100.0
    # Cross-fitting folds (each costs one more lexical training).
    folds: int = 3
    # A cross-fitted point's weight by where it came from: an admin's example reads
    # cleaner than a customer, and the anchors are generic, so both count less.
    example_weight: float = 0.5
    phrase_weight: float = 1.0
    anchor_weight: float = 0.25


DEFAULT_CONFIG = HeadConfig()


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


# --- the items a head is built from --------------------------------------------------

FIXED, EXAMPLE, PHRASE, ANCHOR = "fixed", "example", "phrase", "anchor"


@dataclass(frozen=True)
class _Item:
    text: str
    label: int  # index into labels; len(intents) is "none"
    kind: str  # FIXED items (description, fragments, name) are never held out


def _items(intents: Sequence[IntentOption], phrases: Sequence[Phrase]) -> list[_Item]:
    index = {o.name: i for i, o in enumerate(intents)}
    none = len(intents)
    items: list[_Item] = []
    for i, o in enumerate(intents):
        fixed = [o.name.replace("_", " ").replace("-", " "), o.description.strip()]
        fixed += description_fragments(o.description)
        items += [_Item(t, i, FIXED) for t in dict.fromkeys(fixed) if t]
        items += [_Item(e.strip(), i, EXAMPLE) for e in o.examples if e.strip()]
    items += [_Item(t, none, ANCHOR) for t in NONE_ANCHORS]
    for p in phrases:
        label = none if p.intent == NONE_INTENT else index.get(p.intent)
        if label is not None and p.text.strip():  # a phrase of a removed intent is stale
            items.append(_Item(p.text.strip(), label, PHRASE))
    return items


class _Scorer:
    """Label scores of messages against one set of items (a whole head, or a fold)."""

    def __init__(
        self,
        intents: Sequence[IntentOption],
        items: Sequence[_Item],
        vectors: np.ndarray,
        config: HeadConfig,
    ) -> None:
        self.n_intents = len(intents)
        self.config = config
        order = sorted(range(len(items)), key=lambda i: items[i].label)
        labels = np.array([items[i].label for i in order], dtype=np.int64)
        matrix = vectors[order]
        intent_rows = labels < self.n_intents
        self.item_matrix = matrix[intent_rows]
        self.item_labels = labels[intent_rows]
        none_rows = matrix[~intent_rows]
        self.none_matrix = none_rows if len(none_rows) else np.zeros((0, matrix.shape[1]))
        # Every intent has at least its name and description, so every label has rows.
        self.starts = np.searchsorted(self.item_labels, np.arange(self.n_intents))
        centroids = np.stack(
            [self.item_matrix[self.item_labels == k].mean(axis=0) for k in range(self.n_intents)]
        )
        self.centroids = centroids / np.linalg.norm(centroids, axis=1, keepdims=True)
        self.lexical = LocalClassifier.train(
            {o.name: [it.text for it in items if it.label == k] for k, o in enumerate(intents)}
        )
        self.names = [o.name for o in intents]

    def scores(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """(n, n_intents + 1): one column per intent, then ``none``."""
        cfg = self.config
        centroid = vectors @ self.centroids.T
        sims = vectors @ self.item_matrix.T
        nearest = np.maximum.reduceat(sims, self.starts, axis=1)
        lexical = np.array(
            [[raw.get(n, 0.0) for n in self.names] for raw in map(self.lexical.raw_scores, texts)]
        ).reshape(len(texts), self.n_intents)
        intent = (1 - cfg.nn_weight) * centroid + cfg.nn_weight * nearest
        intent += cfg.lexical_weight * lexical
        if len(self.none_matrix):
            none = (vectors @ self.none_matrix.T).max(axis=1) + cfg.none_bias
        else:
            none = np.full(len(texts), -np.inf)
        return np.concatenate([intent, none[:, None]], axis=1)


def _features(scores: np.ndarray, none_index: int) -> np.ndarray:
    """[1, top, margin, is_none] per row."""
    ranked = -np.sort(-scores, axis=1)
    top = ranked[:, 0]
    second = ranked[:, 1] if scores.shape[1] > 1 else np.zeros(len(scores))
    is_none = (scores.argmax(axis=1) == none_index).astype(float)
    margin = np.where(np.isfinite(second), top - second, 1.0)
    return np.stack([np.ones(len(scores)), top, margin, is_none], axis=1)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


# Typical spread of each calibration feature ([1, top, margin, is_none]) on the own
# scenarios' tuning part. The prior's pull on a weight is scaled by it, so that moving
# any weight by one unit of "logit per typical change of its feature" costs the same.
FEATURE_SCALES = (1.0, 0.15, 0.13, 0.38)


def fit_calibration(
    features: np.ndarray,
    correct: np.ndarray,
    weights: np.ndarray,
    prior: Sequence[float],
    strength: float,
) -> np.ndarray:
    """MAP logistic regression: weighted log-loss plus a Gaussian prior around ``prior``,
    ``strength/2 * sum((scale_j * (w_j - prior_j))^2)``; about ``strength`` points of data
    outweigh it. Newton's method on four weights; with no points it returns the prior.
    """
    w0 = np.asarray(prior, dtype=float)
    w = w0.copy()
    if len(features) == 0:
        return w
    pull = strength * np.asarray(FEATURE_SCALES, dtype=float) ** 2
    for _ in range(50):
        p = _sigmoid(features @ w)
        grad = features.T @ (weights * (p - correct)) + pull * (w - w0)
        hess = (features * (weights * p * (1 - p))[:, None]).T @ features + np.diag(pull)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-6:
            break
    return w


@dataclass(frozen=True)
class CalibrationPoint:
    features: tuple[float, ...]
    correct: bool
    kind: str


class SemanticHead:
    """A router's trained semantic stage. ``predict`` matches ``LocalClassifier.predict``."""

    def __init__(
        self,
        *,
        intents: Sequence[IntentOption],
        scorer: _Scorer | None,
        encoder: Encoder,
        calibration: np.ndarray,
        fingerprint: str,
        points: Sequence[CalibrationPoint] = (),
    ) -> None:
        self.labels = tuple(o.name for o in intents)
        self.fingerprint = fingerprint
        self.encoder_name = encoder.name
        self.calibration = calibration
        self.points = tuple(points)
        self._scorer = scorer
        self._encoder = encoder

    def scores(self, texts: Sequence[str]) -> np.ndarray:
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
            scores = self.scores([texts[i] for i in todo])
            none_index = len(self.labels)
            confidence = _sigmoid(_features(scores, none_index) @ self.calibration)
            names = (*self.labels, NONE_INTENT)
            for row, i in enumerate(todo):
                label = names[int(scores[row].argmax())]
                out[i] = LocalPrediction(
                    label=label,
                    confidence=float(confidence[row]),
                    scores=MappingProxyType(
                        {n: float(s) for n, s in zip(names, scores[row], strict=True)}
                    ),
                )
        return [p for p in out if p is not None]


def train_head(
    intents: Sequence[IntentOption],
    phrases: Sequence[Phrase] = (),
    *,
    encoder: Encoder,
    config: HeadConfig = DEFAULT_CONFIG,
) -> SemanticHead:
    """A head for ``intents``, taught by ``phrases`` (labelled or admin-accepted)."""
    intents = [o for o in intents if o.name != NONE_INTENT]
    fingerprint = training_fingerprint(intents, phrases, encoder.name)
    prior = np.asarray(config.prior, dtype=float)
    if not intents:
        return SemanticHead(
            intents=(), scorer=None, encoder=encoder, calibration=prior, fingerprint=fingerprint
        )
    items = _items(intents, phrases)
    vectors = encoder.encode([expand_spelling(it.text) for it in items])
    scorer = _Scorer(intents, items, vectors, config)
    points = _cross_fit(intents, items, vectors, config)
    weight_of = {
        EXAMPLE: config.example_weight,
        PHRASE: config.phrase_weight,
        ANCHOR: config.anchor_weight,
    }
    calibration = fit_calibration(
        np.array([p.features for p in points]).reshape(len(points), 4),
        np.array([p.correct for p in points], dtype=float),
        np.array([weight_of[p.kind] for p in points]),
        config.prior,
        config.prior_strength,
    )
    return SemanticHead(
        intents=intents,
        scorer=scorer,
        encoder=encoder,
        calibration=calibration,
        fingerprint=fingerprint,
        points=points,
    )


def _cross_fit(
    intents: Sequence[IntentOption],
    items: Sequence[_Item],
    vectors: np.ndarray,
    config: HeadConfig,
) -> list[CalibrationPoint]:
    """Each held-out item scored by a head built without its fold (fixed items stay)."""
    held = [i for i, it in enumerate(items) if it.kind != FIXED]
    # A stable fold per text, so retraining after one more phrase moves few points.
    fold_of = {
        i: int(hashlib.sha256(items[i].text.encode()).hexdigest(), 16) % config.folds for i in held
    }
    points: list[CalibrationPoint] = []
    none_index = len(intents)
    for fold in range(config.folds):
        out = [i for i in held if fold_of[i] == fold]
        if not out:
            continue
        held_out = set(out)
        keep = [i for i in range(len(items)) if i not in held_out]
        scorer = _Scorer(intents, [items[i] for i in keep], vectors[keep], config)
        scores = scorer.scores(vectors[out], [items[i].text for i in out])
        features = _features(scores, none_index)
        predicted = scores.argmax(axis=1)
        for row, i in enumerate(out):
            points.append(
                CalibrationPoint(
                    features=tuple(float(x) for x in features[row]),
                    correct=bool(predicted[row] == items[i].label),
                    kind=items[i].kind,
                )
            )
    return points


def calibration_error(confidences: Sequence[float], correct: Sequence[bool]) -> float:
    """Expected calibration error over 10 equal-width bins."""
    if not confidences:
        return math.nan
    c = np.asarray(confidences, dtype=float)
    ok = np.asarray(correct, dtype=float)
    bins = np.minimum((c * 10).astype(int), 9)
    total = 0.0
    for b in np.unique(bins):
        mask = bins == b
        total += mask.mean() * abs(c[mask].mean() - ok[mask].mean())
    return float(total)
