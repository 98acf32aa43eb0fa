"""Faults at scale: signed WAHA webhooks → real Celery workers and beat (``scripts/worker.sh``,
threads pool, PostgreSQL as the application role) on a private Redis → a fake WAHA
provider; the model a loopback fake of the Anthropic API.

    python bench/faults.py                                  # every scenario, 200 conversations
    python bench/faults.py --scenario broker_down --n 20
    python bench/faults.py --db-name retaguarda_faults_bench

Scenarios (each on a fresh private broker, its own workers and beat):

- ``broker_down``: Redis stopped, ``n`` first messages posted (each webhook 200), Redis
  started again, empty. Recovery = from the broker's return to the last line answered.
- ``worker_killed``: one worker holding ``n`` turns mid model call (2 s) is ``kill -9``-ed, a
  second worker starts. Recovery = from the kill to the last line answered (the leases run
  out, the sweeper re-drives, the second worker takes the turns over).
- ``provider_down``: the provider refuses every send for ``--outage`` s (default 60) while
  3 replies per conversation queue up; the outbox runs its production backoff and breaker.
  Recovery = from the provider's return to the last reply delivered.
- ``model_down``: for ``--model-outage`` s half the agents' model answers broken JSON
  (agents that hand off) and the other half's times out (agents that retry later).
  Figures: the fallback notices' delay (from the wave's first post, so it includes the
  posting of the whole wave), and the retrying agents' answers after the model is back
  (recovery = from its return to the last answer).
- ``tenant_hang``: one organization's provider hangs; another's first-reply p50, quiet and
  loaded (target ≤ 2×).
- ``backlog``: 5 bursts per conversation faster than the workers drain them (window 2 s);
  max first reply after a burst's last line (target ≤ window + 2 s).
- ``race``: two identical first messages of a known contact on a new channel at once.

Prints JSON lines {"name", "value", "unit", "n"} per scenario: messages, answered_once,
lost, duplicated, out_of_order, max_first_reply_s, webhook_5xx, recovery_s (and the
scenario's own figures). Targets (issue 10): lost 0, duplicated 0, out_of_order 0
everywhere. Never asserts: the fault drills in tests/faults do.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import emit, percentile, setup_django

OWNER, APP = "retaguarda_owner", "retaguarda_app"
# The outbox as deployed (settings defaults): the provider_down recovery is the real one.
PRODUCTION_OUTBOX = {
    "OUTBOX_BACKOFF_BASE_S": "2",
    "OUTBOX_BACKOFF_MAX_S": "600",
    "OUTBOX_BREAKER_THRESHOLD": "5",
    "OUTBOX_BREAKER_COOLDOWN_S": "30",
    "OUTBOX_PROVIDER_TIMEOUT_S": "10",
    "OUTBOX_DELIVERY_LEASE_S": "60",
}


class Bench:
    """One scenario's stack and its channels."""

    def __init__(self, args: argparse.Namespace, env: dict[str, str], model_latency: float = 0.05):
        from tests.faults.harness import BrokerProcess, FakeProvider
        from tests.faults.stack import FakeModel

        self.args = args
        self.env = env
        self.broker = BrokerProcess()
        self.provider = FakeProvider(hang_s=30.0)
        self.model = FakeModel(latency_s=model_latency, follow_up_s=0.05)

    def __enter__(self) -> Bench:
        from django.test import Client

        from tests.faults.stack import Processes, routed_to

        self.broker.start()
        self.provider.__enter__()
        self.model.__enter__()
        env = {
            "DATABASE_APP_ROLE": APP,
            "ANTHROPIC_BASE_URL": self.model.base_url,
            "TURN_THREADS": str(self.args.turn_threads),
            "LOG_LEVEL": "INFO",
            **self.env,
        }
        self.procs = Processes(
            database_url=self.args.database_url, broker_url=self.broker.url, env=env
        )
        self._routed = routed_to(self.procs)
        self._routed.__enter__()
        self.client = Client(raise_request_exception=False)
        return self

    def __exit__(self, *exc: object) -> None:
        self.procs.stop()
        self._routed.__exit__(None, None, None)
        self.model.__exit__()
        self.provider.__exit__()
        self.broker.stop()

    def start(self, workers: int = 1, *, supervised: bool = True) -> list[Any]:
        procs = [self.procs.start_worker() for _ in range(workers)]
        self.procs.start_beat()
        self.procs.wait_ready(*procs)
        if supervised:
            self.procs.supervise()  # a worker that dies by itself comes back (README)
        return procs

    def channels(self, count: int, tag: str, **agent: Any) -> list[Any]:
        from conversation.models import ChannelSession
        from tests import factories

        made = []
        for i in range(count):
            org = factories.make_org(f"{tag} {i}")
            channel = factories.make_channel(
                org,
                "waha",
                agent=factories.make_agent(org, f"{tag}{i}", **agent),
                external_id=f"faults-{org.pk.hex[:8]}",
                webhook_secret=f"segredo-{org.pk.hex[:8]}",
                api_base_url="http://placeholder.invalid",
            )
            ChannelSession.objects.filter(pk=channel.pk).update(
                api_base_url=self.provider.url_for(str(channel.pk))
            )
            channel.refresh_from_db()
            made.append(channel)
        return made

    def post_wave(self, channels: list[Any], n: int, prefix: str, burst: int = 0) -> list[Any]:
        from tests.faults.harness import TEXTS, post_line

        return [
            post_line(
                self.client,
                channels[i % len(channels)],
                f"{prefix}{i:07d}",
                TEXTS[(burst + i) % len(TEXTS)],
                burst,
            )
            for i in range(n)
        ]

    def report(self, name: str, posted: list[Any], fault_over: float | None, **extra: Any) -> None:
        from tests.faults.harness import tally

        result = tally(name, posted, self.provider)
        for line in result.lines():
            emit(
                line["name"],
                line["value"] if line["value"] is not None else float("nan"),
                line["unit"],
                line["n"],
            )
        if fault_over is not None:
            emit(f"faults_{name}_recovery_s", self.recovery(posted, fault_over), "s", len(posted))
        emit(f"faults_{name}_worker_restarts", self.procs.restarts, "processes", len(posted))
        for key, value in extra.items():
            emit(f"faults_{name}_{key}", value, "s" if key.endswith("_s") else "count", len(posted))
        sys.stdout.flush()

    def recovery(self, posted: list[Any], since: float) -> float:
        """From ``since`` to the last conversation's last reply (NaN: none answered)."""
        last: dict[tuple[str, str], float] = {}
        for send in self.provider.sends:
            key = (send.tag, send.chat_id)
            last[key] = max(last.get(key, 0.0), send.at)
        chats = {(p.channel_id, f"{p.phone}@c.us") for p in posted}
        times = [last[c] for c in chats if c in last]
        return max(times) - since if times and len(times) == len(chats) else float("nan")


def broker_down(args: argparse.Namespace) -> None:
    from tests.faults.harness import wait_until_answered

    with Bench(args, {}) as bench:
        bench.start()
        channels = bench.channels(2, "Broker")
        bench.broker.stop()
        posted = bench.post_wave(channels, args.n, "551170")
        bench.broker.start()
        back = time.monotonic()
        wait_until_answered(posted, bench.provider, 180)
        bench.report("broker_down", posted, back)


def worker_killed(args: argparse.Namespace) -> None:
    from conversation.models import Turn
    from tests.faults.harness import wait_until_answered

    env = {"TURN_LEASE_S": "6", "ANTHROPIC_TIMEOUT_S": "5"}
    with Bench(args, env, model_latency=2.0) as bench:
        (first,) = bench.start()
        channels = bench.channels(2, "Kill", provider="anthropic", cases_enabled=False)
        posted = bench.post_wave(channels, args.n, "551171")
        deadline = time.monotonic() + 60
        while Turn.objects.filter(status="running").count() < min(args.n, args.turn_threads):
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        running = Turn.objects.filter(status="running").count()
        second = bench.procs.start_worker()
        bench.procs.kill(first)
        killed = time.monotonic()
        bench.procs.wait_ready(second)
        wait_until_answered(posted, bench.provider, 240)
        taken_over = Turn.objects.filter(attempts__gt=1).count()
        bench.report(
            "worker_killed", posted, killed, running_at_kill=running, taken_over=taken_over
        )


def provider_down(args: argparse.Namespace) -> None:
    from conversation.models import Message
    from tests.faults.harness import wait_until_answered

    with Bench(args, PRODUCTION_OUTBOX) as bench:
        bench.start()
        channels = bench.channels(2, "Provider")
        for channel in channels:
            bench.provider.set_mode(str(channel.pk), "down")
        started = time.monotonic()
        posted = []
        for burst in range(3):
            posted += bench.post_wave(channels, args.n, "551172", burst)
            deadline = time.monotonic() + 60
            while Message.objects.filter(direction="outbound").count() < args.n * (burst + 1):
                if time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        time.sleep(max(0.0, args.outage - (time.monotonic() - started)))
        for channel in channels:
            bench.provider.set_mode(str(channel.pk), "ok")
        back = time.monotonic()
        wait_until_answered(posted, bench.provider, 600)
        bench.report(
            "provider_down", posted, back, outage_s=args.outage, refused=bench.provider.refused
        )


def model_down(args: argparse.Namespace) -> None:
    from conversation.models import Handoff
    from tests.faults.harness import wait_until_answered
    from tests.faults.stack import REPLY_TEXT

    env = {"ANTHROPIC_TIMEOUT_S": "1", "TURN_LLM_RETRY_DELAY_S": "5"}
    with Bench(args, env) as bench:
        bench.start()
        handing = bench.channels(1, "Quebrado", provider="anthropic", cases_enabled=False)
        retrying = bench.channels(
            1, "Mudo", provider="anthropic", cases_enabled=False, llm_unavailable_action="retry"
        )
        bench.model.set_mode("Quebrado0", "broken")
        bench.model.set_mode("Mudo0", "hang")
        started = time.monotonic()
        posted_h = bench.post_wave(handing, args.n // 2, "551173")
        posted_r = bench.post_wave(retrying, args.n // 2, "551174")
        wait_until_answered(posted_h + posted_r, bench.provider, 120)  # the notices
        notices = [s.at - started for s in bench.provider.sends]
        time.sleep(max(0.0, args.model_outage - (time.monotonic() - started)))
        bench.model.set_mode("Quebrado0", "ok")
        bench.model.set_mode("Mudo0", "ok")
        back = time.monotonic()
        tag = str(retrying[0].pk)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            answers = [s for s in bench.provider.sends_for(tag) if s.text == REPLY_TEXT]
            if len(answers) >= len(posted_r):
                break
            time.sleep(0.2)
        time.sleep(1.0)
        answers = [s for s in bench.provider.sends_for(tag) if s.text == REPLY_TEXT]
        bench.report(
            "model_down",
            posted_h + posted_r,
            None,
            fallback_notice_p50_s=percentile(notices, 50),
            fallback_notice_max_s=max(notices, default=float("nan")),
            handoffs=Handoff.objects.filter(reason_code="llm_unavailable").count(),
            retried_answers=len(answers),
            retry_recovery_s=(max(s.at for s in answers) - back) if answers else float("nan"),
        )


def tenant_hang(args: argparse.Namespace) -> None:
    from tests.faults.harness import post_line, wait_until_answered

    n = max(args.n // 4, 5)
    with Bench(args, {"OUTBOX_PROVIDER_TIMEOUT_S": "10"}) as bench:
        bench.start()
        slow, fast = bench.channels(2, "Hang")

        def b_latencies(prefix: str) -> list[float]:
            posted = [post_line(bench.client, fast, f"{prefix}{i:07d}", "oi", 0) for i in range(n)]
            wait_until_answered(posted, bench.provider, 120)
            firsts = {s.chat_id: s.at for s in reversed(bench.provider.sends_for(str(fast.pk)))}
            return [firsts[f"{p.phone}@c.us"] - p.at for p in posted if f"{p.phone}@c.us" in firsts]

        quiet = b_latencies("551175")
        bench.provider.set_mode(str(slow.pk), "hang")
        for i in range(n):
            post_line(bench.client, slow, f"551176{i:07d}", "oi", 0)
        loaded = b_latencies("551177")
        bench.provider.set_mode(str(slow.pk), "ok")
    emit("faults_tenant_hang_other_p50_quiet_s", percentile(quiet, 50), "s", len(quiet))
    emit("faults_tenant_hang_other_p50_loaded_s", percentile(loaded, 50), "s", len(loaded))
    emit("faults_tenant_hang_other_max_loaded_s", max(loaded, default=float("nan")), "s", n)


def backlog(args: argparse.Namespace) -> None:
    from tests.faults.harness import wait_until_answered

    window = 2.0
    with Bench(args, {"TURN_BURST_WINDOW_S": str(window)}) as bench:
        bench.start()
        channels = bench.channels(2, "Backlog")
        posted = []
        for burst in range(5):
            posted += bench.post_wave(channels, args.n, "551178", burst)
        wait_until_answered(posted, bench.provider, 300)
        bench.report("backlog", posted, None, window_s=window)


def race(args: argparse.Namespace) -> None:
    """Two identical first messages of a known contact on a new channel, released together."""
    from django.db import connection
    from django.test import Client

    from conversation.models import Contact, Message
    from tests import factories
    from tests.faults.harness import post_waha, waha_event

    rounds = max(args.n // 10, 5)
    codes: list[int] = []
    stored = 0
    for round_ in range(rounds):
        org = factories.make_org(f"Race {round_}")
        Contact.objects.create(organization=org, phone="5511977770000")
        channel = factories.make_channel(
            org, "waha", agent=factories.make_agent(org), external_id=f"race-{round_}"
        )
        event = waha_event(
            session=f"race-{round_}",
            phone="5511977770000",
            text="oi",
            message_id=f"false_race_{round_}",
        )
        barrier = threading.Barrier(2)

        def send(
            event: dict[str, Any] = event,
            channel: Any = channel,
            barrier: threading.Barrier = barrier,
        ) -> None:
            try:
                barrier.wait(timeout=10)
                codes.append(post_waha(Client(raise_request_exception=False), channel, event))
            finally:
                connection.close()

        threads = [threading.Thread(target=send) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        stored += Message.objects.filter(channel=channel, direction="inbound").count()
    emit("faults_race_webhook_5xx", sum(1 for c in codes if c >= 500), "responses", len(codes))
    emit("faults_race_messages_stored_per_pair", stored / max(rounds, 1), "messages", rounds)


SCENARIOS: dict[str, Callable[[argparse.Namespace], None]] = {
    "race": race,
    "broker_down": broker_down,
    "worker_killed": worker_killed,
    "provider_down": provider_down,
    "model_down": model_down,
    "tenant_hang": tenant_hang,
    "backlog": backlog,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200, help="conversations per scenario")
    parser.add_argument("--db-name", default="retaguarda_faults_bench")
    parser.add_argument("--pg-port", type=int, default=5432)
    parser.add_argument("--turn-threads", type=int, default=16, help="threads per worker")
    parser.add_argument("--outage", type=float, default=60.0, help="provider_down seconds")
    parser.add_argument("--model-outage", type=float, default=15.0, help="model_down seconds")
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS), help="repeatable")
    args = parser.parse_args()

    # The owner migrates and grants the application role (bench/load.py does the same);
    # the workers run as the application role, walls up; this process (webhooks and the
    # tally) stays the owner.
    from load import prepare_database

    owner_url = prepare_database(SimpleNamespace(db_name=args.db_name, pg_port=args.pg_port))
    args.database_url = owner_url
    os.environ.pop("DATABASE_APP_ROLE", None)
    setup_django(owner_url, DATABASE_APP_ROLE="", ANTHROPIC_API_KEY="", LOG_LEVEL="ERROR")
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["localhost"]
    settings.WEBHOOK_RATE_LIMIT_PER_MINUTE = 1_000_000
    for name in args.scenario or list(SCENARIOS):
        started = time.monotonic()
        SCENARIOS[name](args)
        emit(f"faults_{name}_scenario_wall_s", time.monotonic() - started, "s", args.n)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
