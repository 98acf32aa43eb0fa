"""Workers warm the promise detector up when they start (``cases.signals``)."""

from __future__ import annotations

from typing import Any

import pytest
from celery.signals import worker_process_init, worker_ready

from cases import signals


@pytest.mark.parametrize("signal", [worker_process_init, worker_ready], ids=lambda s: s.name)
def test_worker_start_signals_warm_the_detector_up(signal: Any, monkeypatch: Any) -> None:
    calls: list[int] = []
    monkeypatch.setattr(signals, "warm_up", lambda: calls.append(1))
    signal.send(sender=None)
    assert calls == [1]


def test_a_failing_warm_up_never_stops_the_worker(monkeypatch: Any) -> None:
    def broken() -> None:
        raise RuntimeError("corpus missing")

    monkeypatch.setattr(signals, "warm_up", broken)
    worker_process_init.send(sender=None)  # logged, not raised


def test_warm_up_trains_the_learned_stage_and_compiles_its_weights() -> None:
    from cases.guardrail import promise_learned
    from cases.guardrail.promise import warm_up

    model = promise_learned.learned_model()
    model.__dict__.pop("compiled", None)  # as a new process would have it
    warm_up()
    assert "compiled" in model.__dict__
    assert model.compiled.bigram  # the table is the shipped weights', not an empty one
