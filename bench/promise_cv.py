"""Nested cross-validation of the promise detector on its training corpus — the measurement to
choose a feature, a hyper-parameter or a batch of training rows by, without a measurement set.

Run from the repository root: ``.venv/bin/python bench/promise_cv.py [--seeds N]`` (about 7 s
a seed). Prints one JSON object per seed and one aggregate line.

Why nested: ``promise_learned.calibrate`` places the threshold and the uncertain band on the
corpus's own out-of-fold scores, so scoring those same scores against that threshold is
circular (precision lands on ``TARGET_PRECISION`` by construction). Here the corpus is split
into 5 *outer* folds (a salted hash of the text, independent of the inner folds); for each
outer fold the whole pipeline — inner cross-validation, Platt scaling, threshold, band, cue
floor, final fit — runs on the other four, and the held-out fold is judged as the detector
judges a message: a rule hit is a promise; otherwise the calibrated probability against the
threshold, and the band or the commitment cue send it to the model check. Several seeds (other
outer splits) average out the split.

Per line: local ``precision`` / ``recall`` (rules + learned, band = not a promise), ``fp`` /
``fn`` counts, ``share`` (sent to the model check) and ``leaks`` (promises neither found
locally nor sent to the check). The rules were written knowing this corpus, so their part is
optimistic; compare settings with each other, not with a measurement set. Round 8 used it to
try stem features, more training rows and a document-frequency floor
(tests/fixtures/cases/SOURCE.md).

``--rows PATH`` adds the rows of a JSONL file (the corpus's format) to every training split
without ever scoring them, so a batch of new rows is judged on the corpus it did not come from.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cases.guardrail.promise_fitting import fit_weights  # noqa: E402
from cases.guardrail.promise_learned import (  # noqa: E402
    LearnedModel,
    TrainingRow,
    _message_sentences,
    _rule_hits,
    calibrate,
    load_corpus,
)

OUTER_FOLDS = 5


def outer_fold(text: str, seed: int) -> int:
    digest = hashlib.sha256(f"outer{seed}:{text}".encode("utf-8", "surrogatepass")).hexdigest()
    return int(digest[:8], 16) % OUTER_FOLDS


def nested_cv(
    rows: Sequence[TrainingRow], seed: int, extra: Sequence[TrainingRow] = ()
) -> dict[str, float | int]:
    hits = _rule_hits(rows)
    extra_hits = _rule_hits(extra)
    true_pos = false_pos = false_neg = checked = leaks = 0
    for k in range(OUTER_FOLDS):
        train = [i for i, row in enumerate(rows) if outer_fold(row.text, seed) != k]
        train_rows = [rows[i] for i in train] + list(extra)
        train_hits = [hits[i] for i in train] + extra_hits
        calibration = calibrate(train_rows, train_hits)
        fit = fit_weights(
            [_message_sentences(row.text) for row in train_rows],
            [row.promise for row in train_rows],
        ).pruned()
        model = LearnedModel(weights=fit.weights, bias=fit.bias, calibration=calibration)
        for i, row in enumerate(rows):
            if outer_fold(row.text, seed) != k:
                continue
            if hits[i]:
                found, uncertain = True, False
            else:
                scored = model.score(row.text)
                found = scored.probability >= calibration.threshold
                uncertain = model.uncertain(scored)
            true_pos += found and row.promise
            false_pos += found and not row.promise
            false_neg += row.promise and not found
            checked += uncertain
            leaks += row.promise and not found and not uncertain
    return {
        "seed": seed,
        "precision": round(true_pos / max(1, true_pos + false_pos), 4),
        "recall": round(true_pos / max(1, true_pos + false_neg), 4),
        "fp": false_pos,
        "fn": false_neg,
        "share": round(checked / len(rows), 4),
        "leaks": leaks,
        "n": len(rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rows", type=Path, default=None)
    args = parser.parse_args()
    rows = load_corpus()
    extra = load_corpus(args.rows) if args.rows else []
    results = [nested_cv(rows, seed, extra) for seed in range(args.seeds)]
    for result in results:
        print(json.dumps({"name": "promise_nested_cv", **result}))
    count = len(results)
    print(
        json.dumps(
            {
                "name": "promise_nested_cv_mean",
                "seeds": count,
                "precision": round(sum(r["precision"] for r in results) / count, 4),
                "recall": round(sum(r["recall"] for r in results) / count, 4),
                "fp": sum(int(r["fp"]) for r in results),
                "fn": sum(int(r["fn"]) for r in results),
                "share": round(sum(r["share"] for r in results) / count, 4),
                "leaks": sum(int(r["leaks"]) for r in results),
            }
        )
    )


if __name__ == "__main__":
    main()
