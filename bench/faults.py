"""Faults at scale: broker down, worker killed, provider down, one tenant hanging, races,
backlog — signed WAHA webhooks → real Celery workers on a private Redis → a fake provider.

    python bench/faults.py                                  # every scenario, 200 conversations
    python bench/faults.py --scenario broker_down --n 20
    python bench/faults.py --database-url postgres://postgres@127.0.0.1:5432/retaguarda_faults

Prints JSON lines {"name", "value", "unit", "n"} per scenario: messages, answered_once,
lost, duplicated, out_of_order, max_first_reply_s, webhook_5xx. Targets (issue 10): lost 0,
duplicated 0, out_of_order 0 everywhere; backlog: max first reply ≤ window + 2 s after the
last line of a burst. Never asserts: the fault tests (tests/faults/) do.

SKELETON: the driver, the faults and the tally are here; the product's sweeper, leases and
ordered outbox come next, so today several scenarios report losses (the baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _django import emit, fresh_database, percentile, setup_django

BURST_WINDOW_S = "2"


def _kill_worker_mid_burst(stack: Any, wave: int) -> None:
    if wave == 1:  # the first wave's turns are claimed or reserved by now
        os.kill(stack.workers[0].pid, signal.SIGKILL)
        stack.notes["killed_at"] = time.monotonic()


def _broker_down_while_posting(stack: Any, wave: int) -> None:
    if wave == 0:
        stack.broker.stop()
        stack.notes["broker_down_at"] = time.monotonic()


def _broker_back(stack: Any) -> None:
    stack.broker.start()
    stack.notes["broker_up_at"] = time.monotonic()


def _provider_down(seconds: float) -> Callable[[Any, int], None]:
    def fault(stack: Any, wave: int) -> None:
        if wave == 0:
            for channel in stack.channels:
                stack.provider.set_mode(str(channel.pk), "down")

            def heal() -> None:
                time.sleep(seconds)
                for channel in stack.channels:
                    stack.provider.set_mode(str(channel.pk), "ok")

            threading.Thread(target=heal, daemon=True).start()

    return fault


def scenarios(n: int) -> dict[str, Any]:
    from tests.faults.harness import Scenario

    window = {"TURN_BURST_WINDOW_S": BURST_WINDOW_S}
    return {
        "broker_down": Scenario(
            "broker_down",
            conversations=n,
            before_wave=_broker_down_while_posting,
            after_posting=_broker_back,
            deadline_s=180,
        ),
        "worker_killed": Scenario(
            "worker_killed",
            conversations=n,
            bursts=3,
            lines_per_burst=2,
            worker_env=window,
            before_wave=_kill_worker_mid_burst,
            deadline_s=240,
        ),
        "provider_down": Scenario(
            "provider_down",
            conversations=n,
            bursts=3,
            burst_gap_s=3.0,  # 3 pending replies per conversation during the outage
            before_wave=_provider_down(45.0),
            deadline_s=300,
        ),
        "backlog": Scenario(
            "backlog",
            conversations=n,
            bursts=5,
            lines_per_burst=1,
            burst_gap_s=0.0,
            worker_env=window,
            deadline_s=300,
        ),
    }


def make_channels(count: int, provider: Any, tag: str) -> list[Any]:
    from conversation.models import ChannelSession
    from tests import factories

    channels = []
    for i in range(count):
        org = factories.make_org(f"Faults {tag} {i}")
        agent = factories.make_agent(org, "Suporte")
        channel = factories.make_channel(
            org,
            "waha",
            agent=agent,
            external_id=f"faults-{i}",
            webhook_secret=f"segredo-{tag}-{i}",
            api_base_url="http://placeholder.invalid",
        )
        ChannelSession.objects.filter(pk=channel.pk).update(
            api_base_url=provider.url_for(str(channel.pk))
        )
        channel.refresh_from_db()
        channels.append(channel)
    return channels


def run_scenario(name: str, scenario: Any, database_url: str, provider: Any) -> None:
    from django.test import Client, override_settings

    from tests.celery_workers import celery_workers
    from tests.faults.harness import BrokerProcess, Stack, drive, tally, wait_until_answered

    env = {"TURN_BURST_WINDOW_S": "0", **scenario.worker_env}
    with (
        BrokerProcess() as broker,
        celery_workers(database_url=database_url, broker=broker.url, count=2, env=env) as procs,
        override_settings(TURN_BURST_WINDOW_S=float(env["TURN_BURST_WINDOW_S"])),
    ):
        time.sleep(3)  # workers connect
        stack = Stack(
            broker=broker,
            provider=provider,
            workers=procs,
            channels=make_channels(2, provider, name),
        )
        # Raised errors become 500 responses here, as in production.
        client = Client(raise_request_exception=False)
        posted = drive(scenario, stack, client)
        wait_until_answered(posted, provider, scenario.deadline_s)
        result = tally(name, posted, provider)
    for line in result.lines():
        print(json.dumps(line))  # value null when nothing was answered at all


def run_tenant_hang(n: int, database_url: str, provider: Any) -> None:
    """Org B's first-reply latency, quiet and while org A's provider hangs (target ≤ 2x)."""
    from django.test import Client

    from tests.celery_workers import celery_workers
    from tests.faults.harness import BrokerProcess, post_line, wait_until_answered

    with (
        BrokerProcess() as broker,
        celery_workers(database_url=database_url, broker=broker.url, count=2),
    ):
        time.sleep(3)
        slow, fast = make_channels(2, provider, "hang")
        client = Client(raise_request_exception=False)

        def b_latencies(prefix: str) -> list[float]:
            posted = [post_line(client, fast, f"{prefix}{i:07d}", "oi", 0) for i in range(n)]
            wait_until_answered(posted, provider, 120)
            firsts = {s.chat_id: s.at for s in reversed(provider.sends_for(str(fast.pk)))}
            return [firsts[f"{p.phone}@c.us"] - p.at for p in posted if f"{p.phone}@c.us" in firsts]

        quiet = b_latencies("551170")
        provider.set_mode(str(slow.pk), "hang")
        for i in range(n):
            post_line(client, slow, f"551160{i:07d}", "oi", 0)
        loaded = b_latencies("551150")
        provider.set_mode(str(slow.pk), "ok")
    emit("faults_tenant_hang_other_p50_quiet_s", percentile(quiet, 50), "s", len(quiet))
    emit("faults_tenant_hang_other_p50_loaded_s", percentile(loaded, 50), "s", len(loaded))
    emit("faults_tenant_hang_other_max_loaded_s", max(loaded, default=float("nan")), "s", n)


def run_race(rounds: int) -> None:
    """Two identical first messages of a known contact on a new channel, released together."""
    from django.db import connection
    from django.test import Client

    from conversation.models import Contact, Message
    from tests import factories
    from tests.faults.harness import post_waha, waha_event

    codes: list[int] = []
    stored = 0
    for round_ in range(rounds):
        org = factories.make_org(f"Race {round_}")
        Contact.objects.create(organization=org, phone="5511977770000")
        channel = factories.make_channel(
            org, "waha", agent=factories.make_agent(org), external_id="race"
        )
        event = waha_event(
            session="race", phone="5511977770000", text="oi", message_id=f"false_race_{round_}"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200, help="conversations per scenario")
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/retaguarda_faults"
    )
    parser.add_argument(
        "--scenario",
        action="append",
        choices=["broker_down", "worker_killed", "provider_down", "backlog", "tenant_hang", "race"],
        help="run only these (repeatable); default: all",
    )
    args = parser.parse_args()
    setup_django(args.database_url, ANTHROPIC_API_KEY="", LOG_LEVEL="ERROR")
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["localhost"]
    settings.WEBHOOK_RATE_LIMIT_PER_MINUTE = 1_000_000
    fresh_database()

    from tests.faults.harness import FakeProvider

    chosen = args.scenario or [
        "race",
        "broker_down",
        "worker_killed",
        "provider_down",
        "tenant_hang",
        "backlog",
    ]
    with FakeProvider(hang_s=30.0) as provider:
        for name in chosen:
            if name == "race":
                run_race(rounds=max(args.n // 10, 5))
            elif name == "tenant_hang":
                run_tenant_hang(max(args.n // 10, 5), args.database_url, provider)
            else:
                run_scenario(name, scenarios(args.n)[name], args.database_url, provider)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
