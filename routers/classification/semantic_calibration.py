"""The semantic head's confidence: its features, the calibration fit, and the
cross-fitted points a router's calibration is fitted on (for the first stage and for the
second encoder's re-rank). The scoring is in ``semantic_scoring.py``; the head that uses
both in ``semantic.py``.

The first stage's confidence is ``sigmoid(w · [1, top, margin, is_none, word_margin])``:
``top`` the winning score, ``margin`` its lead over the runner-up, ``word_margin`` the content
words the message shares with the winning intent's admin texts minus the best other intent's
(``word_overlap``). ``w`` starts from a prior fitted on
the own scenarios' tuning part and is refitted per router on cross-fitted predictions of
the router's own items (its labelled phrases, its examples, the anchors), shrunk toward
the prior; the fewer phrases a router has, the closer it stays to the prior.

A re-ranked verdict's confidence is ``sigmoid(v · [1, top, margin, agrees])`` (``agrees``:
the re-ranked winner is the first encoder's), calibrated the same way from its own
cross-fitted points.

Pure: numpy; the vectors are passed in.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .archetypes import ArchetypeItems
from .semantic_scoring import ANCHOR, EXAMPLE, FIXED, PHRASE, HeadConfig, Item, Scorer
from .types import IntentOption
from .word_overlap import overlap_margin

# Typical spread of each calibration feature ([1, top, margin, is_none, word_margin]) on the own
# scenarios' tuning part. The prior's pull on a weight is scaled by it, so that moving
# any weight by one unit of "logit per typical change of its feature" costs the same.
FEATURE_SCALES = (1.0, 0.15, 0.13, 0.38, 0.84)
# The same for the re-rank features ([1, top, margin, agrees]) on the messages re-ranked.
RERANK_FEATURE_SCALES = (1.0, 0.53, 0.85, 0.40)


def rerank_features(fused: np.ndarray, first_choice: np.ndarray) -> np.ndarray:
    """[1, top, margin, agrees] per row of fused intent scores (``agrees``: the fused
    winner is the first stage's)."""
    ranked = -np.sort(-fused, axis=1)
    margin = ranked[:, 0] - ranked[:, 1] if fused.shape[1] > 1 else np.ones(len(fused))
    agrees = (fused.argmax(axis=1) == first_choice).astype(float)
    return np.stack([np.ones(len(fused)), ranked[:, 0], margin, agrees], axis=1)


def label_features(scores: np.ndarray, none_index: int, shared_words: np.ndarray) -> np.ndarray:
    """[1, top, margin, is_none, word_margin] per row (``shared_words``: the content words
    each message shares with each intent, ``WordOverlap.counts``)."""
    ranked = -np.sort(-scores, axis=1)
    top = ranked[:, 0]
    second = ranked[:, 1] if scores.shape[1] > 1 else np.zeros(len(scores))
    choice = scores.argmax(axis=1)
    is_none = (choice == none_index).astype(float)
    margin = np.where(np.isfinite(second), top - second, 1.0)
    word_margin = overlap_margin(shared_words, choice)
    return np.stack([np.ones(len(scores)), top, margin, is_none, word_margin], axis=1)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def fit_calibration(
    features: np.ndarray,
    correct: np.ndarray,
    weights: np.ndarray,
    prior: Sequence[float],
    strength: float,
    scales: Sequence[float] = FEATURE_SCALES,
) -> np.ndarray:
    """MAP logistic regression: weighted log-loss plus a Gaussian prior around ``prior``,
    ``strength/2 * sum((scale_j * (w_j - prior_j))^2)``; about ``strength`` points of data
    outweigh it. Newton's method on four weights; with no points it returns the prior.
    """
    w0 = np.asarray(prior, dtype=float)
    w = w0.copy()
    if len(features) == 0:
        return w
    pull = strength * np.asarray(scales, dtype=float) ** 2
    for _ in range(50):
        p = sigmoid(features @ w)
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
    reranked: bool = False  # a point of the re-rank calibration


def fit_points(
    points: Sequence[CalibrationPoint],
    config: HeadConfig,
    prior: Sequence[float],
    scales: Sequence[float],
) -> np.ndarray:
    """``fit_calibration`` on cross-fitted points, each weighted by where it came from."""
    weight_of = {
        EXAMPLE: config.example_weight,
        PHRASE: config.phrase_weight,
        ANCHOR: config.anchor_weight,
    }
    return fit_calibration(
        np.array([p.features for p in points]).reshape(len(points), len(prior)),
        np.array([p.correct for p in points], dtype=float),
        np.array([weight_of[p.kind] for p in points]),
        prior,
        config.prior_strength,
        scales,
    )


def cross_fit(
    intents: Sequence[IntentOption],
    items: Sequence[Item],
    vectors: np.ndarray,
    config: HeadConfig,
    second: np.ndarray | None = None,
    borrowed: ArchetypeItems | None = None,
) -> list[CalibrationPoint]:
    """Each held-out item scored by a head built without its fold (fixed items stay);
    with a second encoder, each one the first stage gives an intent is also re-ranked
    (whatever its confidence: the fold's own calibration is not known yet). ``borrowed``
    archetype phrases are the whole head's, in every fold."""
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
        scorer = Scorer(
            intents,
            [items[i] for i in keep],
            vectors[keep],
            config,
            None if second is None else second[keep],
            borrowed,
        )
        out_texts = [items[i].text for i in out]
        scores, semantic, lexical = scorer.parts(vectors[out], out_texts)
        features = label_features(scores, none_index, scorer.words.counts(out_texts))
        predicted = scores.argmax(axis=1)
        for row, i in enumerate(out):
            points.append(
                CalibrationPoint(
                    features=tuple(float(x) for x in features[row]),
                    correct=bool(predicted[row] == items[i].label),
                    kind=items[i].kind,
                )
            )
        if second is None:
            continue
        rows = [row for row in range(len(out)) if predicted[row] != none_index]
        if not rows:
            continue
        fused = scorer.rerank(semantic[rows], lexical[rows], second[[out[r] for r in rows]])
        fused_features = rerank_features(fused, predicted[rows])
        for k, row in enumerate(rows):
            points.append(
                CalibrationPoint(
                    features=tuple(float(x) for x in fused_features[k]),
                    correct=bool(fused[k].argmax() == items[out[row]].label),
                    kind=items[out[row]].kind,
                    reranked=True,
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
