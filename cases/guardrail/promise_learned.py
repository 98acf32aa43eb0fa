"""The learned local stage of the promise detector: a sparse logistic regression.

Trained at first use from the labelled corpus shipped in ``data/promise_train.jsonl`` (no
downloaded weights, nothing written at run time), deterministically: the same corpus gives the
same weights, scores and thresholds on every machine and in every process.

* Features: ``promise_features`` (word bigrams and word-class n-grams of each sentence).
* A message's raw score is the *highest* sentence score, so adding harmless sentences never
  lowers it. Training is multiple-instance: a negative message makes every one of its
  sentences a negative example; a positive message first counts as one bag of all its
  features, then as its highest-scoring sentence.
* Fitting: L2-regularised, class-balanced log loss, minimised by L-BFGS in numpy (numpy is
  imported only to train; scoring is plain dict look-ups).
* Calibration: the raw score is mapped to a probability by Platt scaling fitted on
  out-of-fold scores (k-fold cross-validation on the training corpus), so ``probability``
  estimates the share of such messages that are promises, on text the model has not seen.
* Decision: ``threshold`` on the probability, and an *uncertain band* around it
  (``band_low <= p < band_high``) that a model check may settle (``promise_check``). Both are
  placed on the out-of-fold scores, never on a dev or held-out set.

Cross-validation costs several fits, so its result (Platt parameters, threshold, band) is
shipped in ``data/promise_calibration.json`` together with the digest of the corpus it was
computed on; at first use only the final model is fitted. If the corpus changed and the file
was not regenerated (``python -m cases.guardrail.calibrate``), the calibration is
recomputed in-process (slower start, same result) — and ``tests/cases`` fails until the file
is regenerated.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .normalize import fold
from .promise_features import FEATURE_VERSION, message_features
from .promise_scan import detect_rule_promise

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "CALIBRATION_PATH",
    "CORPUS_PATH",
    "Calibration",
    "LearnedModel",
    "LearnedScore",
    "TrainingRow",
    "calibrate",
    "corpus_digest",
    "learned_model",
    "load_corpus",
    "out_of_fold_raw",
    "train_model",
]

log = logging.getLogger(__name__)

DATA = Path(__file__).resolve().parent / "data"
CORPUS_PATH = DATA / "promise_train.jsonl"
CALIBRATION_PATH = DATA / "promise_calibration.json"

# Hyper-parameters, chosen by cross-validation on the training corpus only.
L2 = 0.0003
FOLDS = 5
MIL_ROUNDS = 2
MAX_ITERATIONS = 300
# Weights smaller than this are dropped after fitting: it costs nothing in cross-validated
# recall and makes the weight table a third of the size, which is what scoring speed hangs on
# (one dict look-up per feature).
PRUNE_BELOW = 0.05
GRADIENT_TOLERANCE = 1e-6
# Operating point, placed on out-of-fold scores: the lowest threshold at which rules-or-learned
# keeps this precision; the band is where out-of-fold mistakes concentrate.
TARGET_PRECISION = 0.975
BAND_LOW = 0.2
BAND_HIGH = 0.9
MAX_SCANNED_CHARS = 20_000

_ZEROS = itertools.repeat(0.0)


@dataclass(frozen=True, slots=True)
class TrainingRow:
    text: str
    promise: bool


@dataclass(frozen=True, slots=True)
class LearnedScore:
    """The learned stage's view of one message.

    ``probability`` is calibrated. ``sentence`` is the index of the sentence that scored
    highest, in ``promise_features.sentence_spans`` of the folded body (-1: no words).
    """

    probability: float
    raw: float
    sentence: int


@dataclass(frozen=True, slots=True)
class Calibration:
    platt_a: float
    platt_b: float
    threshold: float  # probability at or above which the local verdict is "promise"
    band_low: float  # [band_low, band_high): uncertain, a model check may settle it
    band_high: float
    digest: str  # of the corpus (and feature version) it was computed on


@dataclass(frozen=True)
class LearnedModel:
    weights: dict[str, float]
    bias: float
    calibration: Calibration

    @property
    def digest(self) -> str:
        return self.calibration.digest

    def score(self, body: str) -> LearnedScore:
        return self.score_folded(fold(body[:MAX_SCANNED_CHARS]))

    def score_folded(self, text: str) -> LearnedScore:
        """Score an already folded text (``normalize.fold``), at most MAX_SCANNED_CHARS."""
        get = self.weights.get
        best, index = -math.inf, -1
        for i, features in enumerate(message_features(text)):
            # map() with a second iterable calls get(feature, 0.0) without a Python frame.
            raw = sum(map(get, features, _ZEROS))
            if raw > best:
                best, index = raw, i
        raw = self.bias + (best if index >= 0 else 0.0)
        return LearnedScore(self.probability(raw), raw, index)

    def probability(self, raw: float) -> float:
        return _sigmoid(self.calibration.platt_a * raw + self.calibration.platt_b)


def _sigmoid(value: float) -> float:
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exp = math.exp(value)
    return exp / (1.0 + exp)


def load_corpus(path: Path = CORPUS_PATH) -> list[TrainingRow]:
    with path.open(encoding="utf-8") as handle:
        return [
            TrainingRow(text=row["text"], promise=bool(row["promise"]))
            for row in map(json.loads, filter(str.strip, handle))
        ]


def corpus_digest(rows: Iterable[TrainingRow]) -> str:
    digest = hashlib.sha256(FEATURE_VERSION.encode())
    for row in rows:
        digest.update(b"\x01" if row.promise else b"\x00")
        digest.update(row.text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:12]


# --- fitting (numpy) ---------------------------------------------------------------------------


def _message_sentences(text: str) -> list[list[str]]:
    return message_features(fold(text[:MAX_SCANNED_CHARS])) or [[]]


@dataclass(frozen=True)
class _Fit:
    weights: dict[str, float]
    bias: float

    def sentence_raw(self, features: Sequence[str]) -> float:
        return sum(map(self.weights.get, features, _ZEROS))

    def message_raw(self, sentences: Sequence[Sequence[str]]) -> float:
        return self.bias + max(self.sentence_raw(features) for features in sentences)

    def pruned(self) -> _Fit:
        weights = {f: w for f, w in self.weights.items() if abs(w) >= PRUNE_BELOW}
        return _Fit(weights, self.bias)


def _fit(messages: Sequence[list[list[str]]], labels: Sequence[bool], l2: float = L2) -> _Fit:
    """Multiple-instance logistic regression over sentence feature lists."""
    import numpy as np

    vocabulary = sorted({f for sentences in messages for features in sentences for f in features})
    index = {feature: i for i, feature in enumerate(vocabulary)}
    # Each sentence as a sorted array of distinct feature ids (binary features).
    ids = [
        [np.array(sorted({index[f] for f in features}), dtype=np.int64) for features in sentences]
        for sentences in messages
    ]
    positives = max(1, sum(labels))
    negatives = max(1, len(labels) - positives)
    fit: _Fit | None = None
    start: NDArray[np.float64] | None = None
    for _ in range(MIL_ROUNDS):
        instances: list[NDArray[np.int64]] = []
        targets: list[float] = []
        weights: list[float] = []
        for sentences, sentence_ids, label in zip(messages, ids, labels, strict=True):
            if label:
                if fit is None or len(sentences) == 1:
                    chosen = np.unique(np.concatenate(sentence_ids))
                else:
                    scores = [fit.sentence_raw(features) for features in sentences]
                    chosen = sentence_ids[scores.index(max(scores))]
                instances.append(chosen)
                targets.append(1.0)
                weights.append(0.5 / positives)
            else:
                for sentence in sentence_ids:
                    instances.append(sentence)
                    targets.append(0.0)
                    weights.append(0.5 / negatives / len(sentence_ids))
        rows = np.repeat(np.arange(len(instances)), [len(ids_) for ids_ in instances])
        cols = np.concatenate(instances) if instances else np.zeros(0, dtype=np.int64)
        w = _lbfgs(rows, cols, np.asarray(targets), np.asarray(weights), len(vocabulary), l2, start)
        start = w
        nonzero = np.flatnonzero(w[:-1])
        fit = _Fit(
            weights={vocabulary[i]: float(w[i]) for i in nonzero.tolist()}, bias=float(w[-1])
        )
    assert fit is not None
    return fit


def _lbfgs(
    rows: NDArray[np.int64],
    cols: NDArray[np.int64],
    y: NDArray[np.float64],
    s: NDArray[np.float64],
    dims: int,
    l2: float,
    start: NDArray[np.float64] | None,
) -> NDArray[np.float64]:
    """Minimise the weighted log loss + l2/2 |w|^2 (bias free); returns [w..., bias]."""
    import numpy as np

    n = len(y)

    def dot(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
        # Not ``a @ b``: BLAS threads spin against each other on a busy machine (10x slower).
        return float(np.multiply(a, b).sum())

    def objective(w: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        z = np.bincount(rows, weights=w[cols], minlength=n) + w[-1]
        loss = float(np.sum(s * (np.logaddexp(0.0, z) - y * z))) + 0.5 * l2 * dot(w[:-1], w[:-1])
        residual = s * (0.5 * (1.0 + np.tanh(0.5 * z)) - y)  # s * (sigmoid(z) - y), stably
        grad = np.empty(dims + 1)
        grad[:-1] = np.bincount(cols, weights=residual[rows], minlength=dims) + l2 * w[:-1]
        grad[-1] = residual.sum()
        return loss, grad

    w = np.zeros(dims + 1) if start is None else start.copy()
    loss, grad = objective(w)
    history: list[tuple[NDArray[np.float64], NDArray[np.float64], float]] = []
    for _ in range(MAX_ITERATIONS):
        # Two-loop recursion: the search direction from the last few steps.
        direction = -grad
        alphas: list[float] = []
        for step, change, rho in reversed(history):
            alpha = rho * dot(step, direction)
            alphas.append(alpha)
            direction = direction - alpha * change
        if history:
            step, change, _ = history[-1]
            direction = direction * (dot(step, change) / dot(change, change))
        for (step, change, rho), alpha in zip(history, reversed(alphas), strict=True):
            direction = direction + (alpha - rho * dot(change, direction)) * step
        slope = dot(grad, direction)
        if slope >= 0:  # not a descent direction: restart from the gradient
            history.clear()
            direction, slope = -grad, -dot(grad, grad)
        rate = 1.0
        while True:  # backtracking (Armijo) line search
            candidate = w + rate * direction
            new_loss, new_grad = objective(candidate)
            if new_loss <= loss + 1e-4 * rate * slope or rate < 1e-10:
                break
            rate *= 0.5
        step, change = candidate - w, new_grad - grad
        curvature = dot(step, change)
        improvement = loss - new_loss
        w, grad, loss = candidate, new_grad, new_loss
        if curvature > 1e-12:
            history.append((step, change, 1.0 / curvature))
            if len(history) > 10:
                history.pop(0)
        if float(np.abs(grad).max()) < GRADIENT_TOLERANCE or 0 <= improvement < 1e-9 * loss:
            break
    return w


# --- calibration ------------------------------------------------------------------------------


def _fold_of(text: str) -> int:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return int(digest[:8], 16) % FOLDS


def out_of_fold_raw(rows: Sequence[TrainingRow], l2: float = L2) -> list[float]:
    """Raw learned score of every row from a model that did not see it (k-fold)."""
    messages = [_message_sentences(row.text) for row in rows]
    folds = [_fold_of(row.text) for row in rows]
    scores = [0.0] * len(rows)
    for k in range(FOLDS):
        train = [i for i, f in enumerate(folds) if f != k]
        fit = _fit([messages[i] for i in train], [rows[i].promise for i in train], l2).pruned()
        for i, f in enumerate(folds):
            if f == k:
                scores[i] = fit.message_raw(messages[i])
    return scores


def _platt(raw: Sequence[float], labels: Sequence[bool]) -> tuple[float, float]:
    """Fit p = sigmoid(a * raw + b) by Newton's method, with Platt's smoothed targets."""
    positives = sum(labels)
    negatives = len(labels) - positives
    high, low = (positives + 1) / (positives + 2), 1 / (negatives + 2)
    targets = [high if label else low for label in labels]
    a, b = 1.0, 0.0
    for _ in range(100):
        g_a = g_b = h_aa = h_ab = h_bb = 0.0
        for x, t in zip(raw, targets, strict=True):
            p = _sigmoid(a * x + b)
            d, v = p - t, max(p * (1 - p), 1e-12)
            g_a += d * x
            g_b += d
            h_aa += v * x * x
            h_ab += v * x
            h_bb += v
        det = (h_aa + 1e-9) * (h_bb + 1e-9) - h_ab * h_ab
        step_a = ((h_bb + 1e-9) * g_a - h_ab * g_b) / det
        step_b = ((h_aa + 1e-9) * g_b - h_ab * g_a) / det
        a, b = a - step_a, b - step_b
        if abs(step_a) < 1e-10 and abs(step_b) < 1e-10:
            break
    return a, b


def choose_threshold(
    probabilities: Sequence[float],
    labels: Sequence[bool],
    rule_hits: Sequence[bool],
    target_precision: float = TARGET_PRECISION,
) -> float:
    """The lowest probability at which rules-or-learned keeps ``target_precision``."""
    # Walk thresholds from the top, adding one message at a time (rule hits always count).
    true_pos = sum(1 for label, rule in zip(labels, rule_hits, strict=True) if rule and label)
    false_pos = sum(1 for label, rule in zip(labels, rule_hits, strict=True) if rule and not label)
    ranked = sorted(
        (
            (p, label)
            for p, label, rule in zip(probabilities, labels, rule_hits, strict=True)
            if not rule
        ),
        reverse=True,
    )
    best = 1.0
    for p, label in ranked:
        true_pos += label
        false_pos += not label
        if true_pos / (true_pos + false_pos) >= target_precision:
            best = p
    return round(min(max(best, 0.5), 0.99), 4)


def calibrate(rows: Sequence[TrainingRow], rule_hits: Sequence[bool]) -> Calibration:
    """Platt parameters, threshold and band from out-of-fold scores (several fits: slow)."""
    labels = [row.promise for row in rows]
    oof = out_of_fold_raw(rows)
    platt_a, platt_b = _platt(oof, labels)
    probabilities = [_sigmoid(platt_a * x + platt_b) for x in oof]
    threshold = choose_threshold(probabilities, labels, rule_hits)
    return Calibration(
        platt_a=round(platt_a, 6),
        platt_b=round(platt_b, 6),
        threshold=threshold,
        band_low=min(BAND_LOW, threshold),
        band_high=max(BAND_HIGH, threshold),
        digest=corpus_digest(rows),
    )


def _shipped_calibration(digest: str) -> Calibration | None:
    try:
        data = json.loads(CALIBRATION_PATH.read_text(encoding="utf-8"))
        calibration = Calibration(**data)
    except (OSError, ValueError, TypeError):
        return None
    return calibration if calibration.digest == digest else None


def train_model(
    rows: Sequence[TrainingRow],
    rule_hits: Sequence[bool],
    calibration: Calibration | None = None,
) -> LearnedModel:
    """Fit the final model; calibrate first (k-fold) unless a current calibration is given."""
    if calibration is None or calibration.digest != corpus_digest(rows):
        calibration = calibrate(rows, rule_hits)
    fit = _fit([_message_sentences(row.text) for row in rows], [row.promise for row in rows])
    fit = fit.pruned()
    return LearnedModel(weights=fit.weights, bias=fit.bias, calibration=calibration)


_LOCK = threading.Lock()
_MODEL: LearnedModel | None = None


def _rule_hits(rows: Sequence[TrainingRow]) -> list[bool]:
    return [detect_rule_promise(row.text) is not None for row in rows]


def learned_model() -> LearnedModel:
    """The model of the shipped corpus, fitted once per process, on first use (thread-safe)."""
    global _MODEL
    model = _MODEL
    if model is not None:
        return model
    with _LOCK:
        if _MODEL is None:
            rows = load_corpus()
            calibration = _shipped_calibration(corpus_digest(rows))
            if calibration is None:
                log.warning("promise calibration is stale: recomputing it (slow start)")
            _MODEL = train_model(rows, _rule_hits(rows), calibration)
        return _MODEL
