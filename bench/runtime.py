"""Benchmark the conversation runtime: try_handle latency and state serialization.

Run: .venv/bin/python bench/runtime.py
Prints one JSON object per line: {"name", "value", "unit", "n"}. Never asserts timings.
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


def measure(run: Callable[[int], None], prepare: Callable[[int], None]) -> list[float]:
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
    outputs = {
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


if __name__ == "__main__":
    main()
