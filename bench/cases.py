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


# --- the cases inbox and the relay (Django; a fresh SQLite file with the demo seeded) -------

CASES_DB = "sqlite:////tmp/retaguarda_bench_cases.sqlite3"
LIST_CASES = 10_000
LIST_REQUESTS = 30
RELAY_CLICKS = 30


def _django_demo() -> Any:
    """Django on a fresh, migrated, seeded database; returns the demo organization."""
    from _django import fresh_database, setup_django

    setup_django(CASES_DB)
    fresh_database()
    from accounts.models import Organization

    return Organization.objects.get(slug="demo")


def _bulk_cases(org: Any, n: int) -> list[Any]:
    """``n`` open cases on the cases demo channel, written in bulk (set-up, not the product)."""
    from django.utils import timezone

    from cases.demo import CHANNEL_NAME
    from cases.models import Case, CaseReminder
    from conversation.models import ChannelSession, Contact, Conversation

    channel = ChannelSession.objects.get(organization=org, name=CHANNEL_NAME)
    now = timezone.now()
    contacts = Contact.objects.bulk_create(
        [Contact(organization=org, phone=f"55117{i:08d}", name=f"Cliente {i}") for i in range(n)],
        batch_size=2000,
    )
    conversations = Conversation.objects.bulk_create(
        [Conversation(organization=org, channel=channel, contact=c) for c in contacts],
        batch_size=2000,
    )
    cases = Case.objects.bulk_create(
        [
            Case(
                organization=org,
                conversation=conv,
                lead_id=conv.contact_id,
                agent_id=channel.agent_id,
                status="awaiting_human" if i % 3 else "awaiting_lead",
                title=f"Pedido de reembolso {i}",
                summary="O cliente pediu o reembolso.",
                blocker="Exige o financeiro.",
                waiting_since=now - timezone.timedelta(minutes=i),
                opened_at=now - timezone.timedelta(minutes=i),
                lead_unresponsive=i % 7 == 0,
            )
            for i, conv in enumerate(conversations)
        ],
        batch_size=2000,
    )
    CaseReminder.objects.bulk_create(
        [
            CaseReminder(
                organization=org,
                case=case,
                wait_started_at=case.waiting_since,
                sequence=1,
                due_at=case.waiting_since,
                status="fired",
            )
            for case in cases[::5]
        ],
        batch_size=2000,
    )
    return cases


def bench_case_list_page() -> Iterator[Line]:
    """Server time and SQL queries of the cases inbox with 10,000 cases (first page)."""
    org = _django_demo()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    _bulk_cases(org, LIST_CASES)
    client = Client(SERVER_NAME="localhost")
    client.force_login(get_user_model().objects.get(username="atendente"))
    for _ in range(3):  # warm-up: templates, imports, connection
        client.get("/casos/")
    times, cpu = [], []
    for _ in range(LIST_REQUESTS):
        start, start_cpu = time.perf_counter(), time.process_time()
        response = client.get("/casos/")
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        assert response.status_code == 200
    with CaptureQueriesContext(connection) as queries:
        client.get("/casos/?page=200")
    times.sort()
    cpu.sort()
    extra = {"cases": LIST_CASES, "page_size": 25}
    yield line(
        "case_list_server_time_p50", round(times[len(times) // 2], 1), "ms", len(times), **extra
    )
    yield line("case_list_server_time_max", round(times[-1], 1), "ms", len(times), **extra)
    yield line("case_list_server_cpu_p50", round(cpu[len(cpu) // 2], 1), "ms", len(cpu), **extra)
    yield line("case_list_sql_queries", len(queries), "queries", 1, **extra)


def bench_case_click_to_relay() -> Iterator[Line]:
    """From the person's click ("Concluí" / "Preciso de info") to the relay message stored,
    with the offline model: the POST runs the case_reply_turn in-process on commit."""
    org = _django_demo()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from conversation.models import Message

    cases = _bulk_cases(org, RELAY_CLICKS + 3)
    client = Client(SERVER_NAME="localhost")
    client.force_login(get_user_model().objects.get(username="atendente"))
    times = []
    for i, case in enumerate(c for c in cases if c.status == "awaiting_human"):
        action = "resolved" if i % 2 else "need_lead_info"
        start = time.perf_counter()
        client.post(f"/casos/{case.pk}/responder/", {"action": action, "text": "o CPF do titular"})
        stored = Message.objects.filter(conversation_id=case.conversation_id, sender_kind="ai")
        assert stored.exists(), "no relay stored"
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    n = len(times)
    yield line("case_click_to_relay_stored_p50", round(times[n // 2], 1), "ms", n, model="offline")
    yield line("case_click_to_relay_stored_max", round(times[-1], 1), "ms", n, model="offline")


BENCHES: list[Callable[[], Iterator[Line]]] = [
    bench_promise_detector_throughput,
    bench_promise_detector_long_message,
    bench_case_list_page,
    bench_case_click_to_relay,
]


def main() -> None:
    for bench in BENCHES:
        for result in bench():
            print(json.dumps(result, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
