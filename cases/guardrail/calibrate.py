"""Regenerate ``data/promise_calibration.json`` after editing the promise training corpus.

Run from the repository root: ``.venv/bin/python -m cases.guardrail.calibrate``. It runs the
k-fold cross-validation of ``promise_learned.calibrate`` (several fits, a few seconds) and
writes the Platt parameters, threshold, band and corpus digest. Commit the file with the
corpus: the tests fail while the two disagree.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from .promise_learned import (
    CALIBRATION_PATH,
    Calibration,
    _rule_hits,
    calibrate,
    load_corpus,
)


def write_calibration() -> Calibration:
    """Recompute the calibration of the shipped corpus and store it next to the corpus."""
    rows = load_corpus()
    calibration = calibrate(rows, _rule_hits(rows))
    CALIBRATION_PATH.write_text(
        json.dumps(asdict(calibration), indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return calibration


if __name__ == "__main__":
    write_calibration()
