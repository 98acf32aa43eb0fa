"""Turns end to end: webhook → stored message → turn → reply, with the offline model.

    python bench/turns.py                      # in-process (SQLite file), N=200
    python bench/turns.py --worker             # + real Celery workers on Redis (PostgreSQL)
    python bench/turns.py --n 500 --database-url postgres://postgres@127.0.0.1:5432/bench

Prints JSON lines {"name", "value", "unit", "n"}: p50/p99 turn latency (ms), the turn's
non-model time (its latency minus its model calls: the offline model's are recorded too),
SQL queries per turn, turns per second. Django runs with ``DEBUG`` off, as in production
(``DEBUG`` records every query and quotes its parameters: a third of the turn's time here);
the SQL counts use Django's capture, which needs no ``DEBUG``. ``--profile`` prints the
turn's hottest functions (cProfile) to stderr.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import subprocess
import sys
import time
import uuid

from _django import emit, emit_machine_line, fresh_database, percentile, setup_django


def post(client, channel, phone: str, text: str):  # type: ignore[no-untyped-def]
    return client.post(
        f"/webhooks/simulator/{channel.pk}",
        data=json.dumps({"from": phone, "text": text, "id": uuid.uuid4().hex}),
        content_type="application/json",
        HTTP_X_SIMULATOR_SECRET=channel.webhook_secret,
        SERVER_NAME="localhost",
    )


def in_process(n: int, profile: bool = False) -> None:
    from django.db.models import Sum
    from django.test import Client

    from conversation.models import Agent, ChannelSession, LlmCall, Message, Turn

    # The foundation's figures: a channel answered by its own agent (no router).
    routed = ChannelSession.objects.get(name="Simulador")
    channel = ChannelSession.objects.create(
        organization=routed.organization,
        name="Bench",
        provider="simulator",
        webhook_secret="bench-secret",
        agent=Agent.objects.get(organization=routed.organization, name="Suporte"),
    )
    client = Client()
    texts = ["oi", "qual o prazo de entrega?", "aceitam pix?", "qual o horário de atendimento?"]
    for i in range(10):  # warm-up: imports, caches, first connections
        post(client, channel, f"55119{i:08d}", texts[i % len(texts)])
    wall: list[float] = []
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    for i in range(n):
        t0 = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        response = post(client, channel, f"55118{i:08d}", texts[i % len(texts)])
        if profiler is not None:
            profiler.disable()
        wall.append((time.perf_counter() - t0) * 1000)
        assert response.status_code == 200, response.content
    elapsed = time.perf_counter() - started
    if profiler is not None:
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(40)
    rows = list(
        Turn.objects.filter(outcome="replied", conversation__channel=channel)
        .order_by("-created_at")[:n]
        .values_list("pk", "latency_ms")
    )
    turns = [latency for _, latency in rows]
    model_ms = dict(
        LlmCall.objects.filter(turn_id__in=[pk for pk, _ in rows])
        .values("turn_id")
        .annotate(ms=Sum("latency_ms"))
        .values_list("turn_id", "ms")
    )
    non_model = [latency - (model_ms.get(pk) or 0) for pk, latency in rows]
    replies = Message.objects.filter(direction="outbound", status="delivered").count()
    assert replies >= n, f"only {replies} replies for {n} messages"
    emit("turn_latency_p50_in_process", percentile(turns, 50), "ms", len(turns))
    emit("turn_latency_p99_in_process", percentile(turns, 99), "ms", len(turns))
    emit("non_model_ms_per_turn_p50_in_process", percentile(non_model, 50), "ms", len(non_model))
    emit("webhook_to_reply_p50_in_process", percentile(wall, 50), "ms", n)
    emit("turns_per_second_in_process", n / elapsed, "turns/s", n)

    # SQL per turn: the turn alone (run_inbound_turn), and the whole request incl. delivery.
    counts, totals, walls = _queries_per_turn(channel, client, texts, "55117")
    # The whole turn call: claim, decide, finish and its commit (the delivery excluded;
    # the offline model's ~0.5 ms included) — the turn's latency_ms above starts after the
    # claim's first queries and stops at the finish's UPDATE.
    emit("turn_call_ms_p50_in_process", percentile(walls, 50), "ms", len(walls))
    emit("sql_queries_per_turn", max(counts), "queries", len(counts), p50=percentile(counts, 50))
    emit(
        "sql_queries_per_webhook_turn_and_delivery",
        max(totals),
        "queries",
        len(totals),
        p50=percentile(totals, 50),
    )
    for i in range(5):  # conversations on the routed channel, then measure its turns
        post(client, routed, f"55115{i:08d}", texts[i % len(texts)])
    routed_counts, _, _ = _queries_per_turn(routed, client, texts, "55114")
    emit(
        "sql_queries_per_routed_turn",
        max(routed_counts),
        "queries",
        len(routed_counts),
        p50=percentile(routed_counts, 50),
    )


def _queries_per_turn(channel, client, texts, prefix):  # type: ignore[no-untyped-def]
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from conversation.models import Conversation
    from conversation.turns import run_inbound_turn
    from tests.factories import make_message

    counts, totals, walls = [], [], []
    for i in range(20):
        conversation = Conversation.objects.filter(channel=channel).order_by("?").first()
        message = make_message(conversation, texts[i % len(texts)])
        # The outer atomic defers the delivery (on_commit) past the capture: turn only.
        with transaction.atomic(), CaptureQueriesContext(connection) as ctx:
            t0 = time.perf_counter()
            run_inbound_turn(str(message.pk))
            walls.append((time.perf_counter() - t0) * 1000)
        counts.append(len([q for q in ctx.captured_queries if not _tx(q["sql"])]))
        with CaptureQueriesContext(connection) as ctx:
            post(client, channel, f"{prefix}{i:08d}", texts[i % len(texts)])
        totals.append(len([q for q in ctx.captured_queries if not _tx(q["sql"])]))
    return counts, totals, walls


def _tx(sql: str) -> bool:
    return sql.startswith(("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "ROLLBACK"))


def with_worker(n: int, database_url: str, broker: str, workers: int) -> None:

    from django.test import Client

    from conversation.models import ChannelSession, Message, Turn
    from tests.celery_workers import celery_workers

    with celery_workers(database_url=database_url, broker=broker, count=workers):
        time.sleep(3)  # workers connect
        channel = ChannelSession.objects.get(name="Simulador")
        client = Client()
        before = Turn.objects.count()
        started = time.perf_counter()
        for i in range(n):
            post(client, channel, f"55116{i:08d}", "qual o prazo de entrega?")
        deadline = time.monotonic() + 300
        while Turn.objects.count() - before < n and time.monotonic() < deadline:
            time.sleep(0.05)
        while Message.objects.filter(status="queued").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
        done = Turn.objects.count() - before
        latencies = list(
            Turn.objects.order_by("-created_at")[:done].values_list("latency_ms", flat=True)
        )
        emit("turn_latency_p50_worker", percentile(latencies, 50), "ms", done, workers=workers)
        emit("turn_latency_p99_worker", percentile(latencies, 99), "ms", done, workers=workers)
        emit("turns_per_second_worker", done / elapsed, "turns/s", done, workers=workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--database-url", default="sqlite:////tmp/retaguarda-bench.sqlite3")
    parser.add_argument("--worker", action="store_true", help="also measure real Celery workers")
    parser.add_argument("--only-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--worker-database-url", default="postgres://postgres@127.0.0.1:5432/retaguarda_bench"
    )
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--profile", action="store_true", help="cProfile the turns (stderr)")
    args = parser.parse_args()
    production_like = {"DJANGO_DEBUG": "0", "LOG_LEVEL": "WARNING"}
    if not args.only_worker:  # the parent prints it once, before its child process runs
        emit_machine_line()

    if args.only_worker:
        setup_django(
            args.worker_database_url,
            TURN_BURST_WINDOW_S="0",
            ANTHROPIC_API_KEY="",
            **production_like,
        )
        _allow_bench_host()
        fresh_database()
        with_worker(args.n, args.worker_database_url, args.broker, args.workers)
        return
    setup_django(
        args.database_url, TURN_BURST_WINDOW_S="0", ANTHROPIC_API_KEY="", **production_like
    )
    _allow_bench_host()
    fresh_database()
    in_process(args.n, profile=args.profile)
    if args.worker:
        # A second process: Django binds its database backend once per process.
        sys.stdout.flush()
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--only-worker",
                "--n",
                str(args.n),
                "--worker-database-url",
                args.worker_database_url,
                "--broker",
                args.broker,
                "--workers",
                str(args.workers),
            ],
            check=True,
        )


def _allow_bench_host() -> None:
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["localhost"]


if __name__ == "__main__":
    main()
