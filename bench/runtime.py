"""Benchmark the conversation runtime: try_handle latency, state serialization, and the
multi-turn adversarial dialogues of tests/runtime_dialogues through the real pipeline.

Run: .venv/bin/python bench/runtime.py            (add --no-dialogues for the pure figures)
Prints one JSON object per line: {"name", "value", "unit", "n"}. Never asserts timings.

Dialogue figures (each dialogue with the offline classifier and with the scripted model,
on a scratch SQLite file): ``runtime.dialogues`` (runs), ``runtime.dialogues.wrong_actions``
(backend actions without a consent naming them, target 0), ``runtime.dialogues.dead_ends``
(an expected action or answer that never came, or a closure with a request pending,
target 0), ``runtime.dialogues.failed`` (runs with any failed expectation), and the
fallback rate over the runtime's live turns, as ``conversation.runtime_adapters.telemetry``
reads it (``runtime.dialogues.fallback_rate``: the orchestrator answered).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conversation.runtime import Channel, DemoBackend, build_runtime  # noqa: E402
from conversation.runtime.intent_extractor import IntentClassifierContext  # noqa: E402
from conversation.runtime.serialization import deserialize_state, serialize_state  # noqa: E402
from conversation.runtime.store import InMemoryStateStore  # noqa: E402

INVOICE = json.loads((ROOT / "tests/fixtures/runtime/demo_invoice.json").read_text("utf-8"))
LINE = "11987654321"
N = 3000
WARMUP = 300
ACTION = {
    "kind": "action_request",
    "requested_action": True,
    "action_verbs": ["cancelar"],
    "mentioned_items": ["VOD", "HBO Max"],
}


class InstantClassifier:
    """Answers at once, so the LLM path measures only the runtime's own work."""

    def __init__(self, outputs: Mapping[str, Mapping[str, Any]]) -> None:
        self._outputs = outputs

    def classify(
        self,
        user_text: str,
        *,
        context: IntentClassifierContext,
        callbacks: Sequence[Any] | None = None,
    ) -> Mapping[str, Any]:
        return self._outputs[user_text]


class FixedClock:
    def now(self) -> Any:
        from datetime import UTC, datetime

        return datetime(2025, 3, 1, tzinfo=UTC)


def emit(name: str, value: float, unit: str, n: int) -> None:
    print(json.dumps({"name": name, "value": round(value, 1), "unit": unit, "n": n}))


def percentile(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[int(q) - 1]


def measure(run: Callable[[int], object], prepare: Callable[[int], None]) -> list[float]:
    """Microseconds per call of ``run``; ``prepare`` (untimed) resets state before each."""
    samples = []
    for i in range(WARMUP + N):
        prepare(i)
        start = time.perf_counter_ns()
        run(i)
        elapsed = (time.perf_counter_ns() - start) / 1000
        if i >= WARMUP:
            samples.append(elapsed)
    return samples


def main() -> None:
    outputs: dict[str, Mapping[str, Any]] = {
        "quero cancelar o VOD e o HBO Max": ACTION,
        "me explica essa fatura": {"kind": "invoice_overview"},
    }
    backend = DemoBackend(INVOICE)
    runtime = build_runtime(
        classifier=InstantClassifier(outputs),
        backend=backend,
        channel=Channel.TEXT,
        state_store=InMemoryStateStore(channel=Channel.TEXT),
        clock=FixedClock(),
    )

    def context() -> dict[str, Any]:
        return {"session_id": "bench", "msisdn": LINE, "invoice_detail": INVOICE}

    # A mid-conversation state: the invoice was explained (snapshot populated) and a
    # two-step cancellation waits for confirmation.
    runtime.try_handle(user_text="me explica essa fatura", context=context())
    runtime.try_handle(user_text="quero cancelar o VOD e o HBO Max", context=context())
    mid = runtime.export_state()

    def reset(_: int) -> None:
        runtime.restore_state(mid)

    fast_messages = ["não", "tchau", "sim, obrigado"]
    fast = measure(
        lambda i: runtime.try_handle(
            user_text=fast_messages[i % len(fast_messages)], context=context()
        ),
        reset,
    )
    emit("runtime.try_handle.fast_path.p50", statistics.median(fast), "us", N)
    emit("runtime.try_handle.fast_path.p99", percentile(fast, 99), "us", N)

    action_text = "quero cancelar o VOD e o HBO Max"
    llm = measure(lambda _: runtime.try_handle(user_text=action_text, context=context()), reset)
    emit("runtime.try_handle.llm_path.p50", statistics.median(llm), "us", N)
    emit("runtime.try_handle.llm_path.p99", percentile(llm, 99), "us", N)

    state = deserialize_state(mid)
    round_trip = measure(lambda _: deserialize_state(serialize_state(state)), lambda _: None)
    emit("runtime.serialization.round_trip.p50", statistics.median(round_trip), "us", N)
    emit("runtime.state.json_size", len(json.dumps(mid).encode("utf-8")), "bytes", 1)


def dialogue_figures() -> None:
    """Run every dialogue of the suite (both classifiers) and count how they went wrong."""
    import os
    import tempfile

    sys.path.insert(0, str(ROOT / "bench"))
    from _django import fresh_database, setup_django

    path = Path(tempfile.gettempdir()) / f"bench_runtime_dialogues_{os.getpid()}.sqlite3"
    setup_django(
        f"sqlite:///{path}",
        ANTHROPIC_API_KEY="",
        TURN_BURST_WINDOW_S="0",
        LOG_LEVEL="CRITICAL",
        CONVERSATION_RUNTIME_ENABLED="true",
    )
    try:
        fresh_database()
        from django.db import transaction
        from django.test.utils import setup_test_environment

        from conversation import dispatch
        from conversation.models import Turn
        from conversation.runtime_adapters.telemetry import OutcomeCounts, outcomes_of_traces
        from tests.runtime_dialogues.harness import MODES, load_suite, run_dialogue

        setup_test_environment()
        dispatch.background_thread_enabled = False
        suite = load_suite()
        runs = wrong = dead = failed = 0
        outcomes: list[OutcomeCounts] = []
        for dialogue in suite.dialogues:
            for mode in MODES:
                if mode not in dialogue.modes:
                    continue
                with transaction.atomic():
                    run = run_dialogue(dialogue, mode, suite)
                    # The telemetry's own reading of the run's turns (the fallback rate).
                    traces = Turn.objects.values_list("trace", flat=True)
                    outcomes.append(outcomes_of_traces(traces))
                    transaction.set_rollback(True)
                runs += 1
                wrong += sum(f.kind == "wrong_action" for f in run.failures)
                dead += sum(f.kind == "dead_end" for f in run.failures)
                failed += bool(run.failures)
        emit("runtime.dialogues", runs, "count", runs)
        emit("runtime.dialogues.wrong_actions", wrong, "count", runs)
        emit("runtime.dialogues.dead_ends", dead, "count", runs)
        emit("runtime.dialogues.failed", failed, "count", runs)
        handled = sum(o.handled for o in outcomes)
        fallbacks = sum(o.fallbacks for o in outcomes)
        ran = handled + fallbacks
        emit("runtime.dialogues.turns", ran, "count", runs)
        emit("runtime.dialogues.fallback_rate", 100 * fallbacks / ran if ran else 0, "%", ran)
    finally:
        path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
    if "--no-dialogues" not in sys.argv[1:]:
        dialogue_figures()
