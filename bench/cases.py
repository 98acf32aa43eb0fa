"""Human-case benchmarks: promise-detector throughput (more measurements join BENCHES later).

Run from the repository root: ``.venv/bin/python bench/cases.py``. Prints one JSON object per
line: {"name", "value", "unit", "n"}. Nothing here asserts a timing.

The detector's target is >= 50,000 messages/s on typical 1-3 sentence agent messages. The
input is the labelled corpus of tests/fixtures/promises (half promises, half near misses,
which is harder than real traffic: most real messages contain no anchor word at all),
repeated to at least 100,000 messages. Wall-clock and CPU-time figures are both printed:
on a shared machine the CPU figure is the one that says what the code costs.

To add a benchmark, write a function that yields result lines and append it to BENCHES.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cases.guardrail import PROMISE_DETECTOR_VERSION, detect_human_promise  # noqa: E402

PROMISES = ROOT / "tests" / "fixtures" / "promises"
MIN_MESSAGES = 100_000
ROUNDS = 3  # best of N: the least disturbed run is the closest to the code's own cost

Line = dict[str, Any]


def line(name: str, value: float | None, unit: str, n: int, **extra: Any) -> Line:
    return {"name": name, "value": value, "unit": unit, "n": n, **extra}


def corpus_texts() -> list[str]:
    with (PROMISES / "corpus.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(row)["text"] for row in handle if row.strip()]


def bench_promise_detector_throughput() -> Iterator[Line]:
    texts = corpus_texts()
    messages = texts * -(-MIN_MESSAGES // len(texts))
    detect_human_promise(texts[0])  # import-time work is not part of a message's cost
    best_wall = best_cpu = float("inf")
    for _ in range(ROUNDS):
        wall, cpu = time.perf_counter(), time.process_time()
        for text in messages:
            detect_human_promise(text)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    extra = {"detector": PROMISE_DETECTOR_VERSION, "rounds": ROUNDS}
    n = len(messages)
    yield line("promise_detector_throughput_wall", round(n / best_wall), "messages/s", n, **extra)
    yield line("promise_detector_throughput_cpu", round(n / best_cpu), "messages/s", n, **extra)


def bench_promise_detector_long_message() -> Iterator[Line]:
    # Worst realistic case: a 4,096-character message (WhatsApp's limit) made of near misses,
    # so every anchor is tried and nothing matches early.
    with (PROMISES / "corpus.jsonl").open(encoding="utf-8") as handle:
        negatives = [row["text"] for row in map(json.loads, handle) if not row["promise"]]
    body = " ".join(negatives * 4)[:4096]
    calls = 200
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.process_time()
        for _ in range(calls):
            detect_human_promise(body)
        best = min(best, time.process_time() - start)
    yield line(
        "promise_detector_4096_chars_cpu",
        round(best / calls * 1e6, 1),
        "us/message",
        calls,
        promise=detect_human_promise(body) is not None,
    )


BENCHES: list[Callable[[], Iterator[Line]]] = [
    bench_promise_detector_throughput,
    bench_promise_detector_long_message,
]


def main() -> None:
    for bench in BENCHES:
        for result in bench():
            print(json.dumps(result, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
