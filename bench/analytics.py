"""Outcomes page at scale: 100,000 turns and 1,000,000 LlmCall rows for one organization
on PostgreSQL (90 days), seeded with COPY; then the beat's roll-up, the page's server
time and queries, the CSV, and the budget check a turn pays.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/retaguarda_analytics \\
        .venv/bin/python bench/analytics.py

Prints JSON lines {"name", "value", "unit", "n"}. The database is dropped and re-created.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import time
import uuid
from collections.abc import Iterable
from typing import Any

from _django import emit, median, percentile, setup_django

DB = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/retaguarda_analytics")
TURNS = int(os.environ.get("BENCH_TURNS", 100_000))
CALLS = int(os.environ.get("BENCH_CALLS", 1_000_000))
DAYS = 90
CONVERSATIONS = TURNS // 5
HANDOFFS = CONVERSATIONS // 8
CASES = CONVERSATIONS // 10
REQUESTS = 20
MODELS = ("claude-haiku-4-5", "claude-haiku-4-5", "claude-sonnet-4-5-20250929", "offline")


def fresh_migrated() -> None:
    from django.core.management import call_command
    from django.db import connection

    name = connection.settings_dict["NAME"]
    connection.close()
    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    call_command("migrate", verbosity=0)


def copy_rows(model: Any, rows: Iterable[dict[str, Any]]) -> int:
    """COPY rows into ``model``'s table; a field a row omits gets its Python default."""
    from django.db import connection
    from psycopg.types.json import Jsonb

    fields = [f for f in model._meta.concrete_fields if not getattr(f, "generated", False)]
    columns = ", ".join(f'"{f.column}"' for f in fields)
    from django.utils import timezone

    stamp = timezone.now()
    defaults = {
        f.attname: stamp
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
        else f.get_default()
        for f in fields
    }
    json_fields = {f.attname for f in fields if f.get_internal_type() == "JSONField"}
    n = 0
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(f'COPY "{model._meta.db_table}" ({columns}) FROM STDIN') as copy:
            for row in rows:
                values = []
                for f in fields:
                    v = row[f.attname] if f.attname in row else defaults[f.attname]
                    if f.attname in json_fields and v is not None:
                        v = Jsonb(v)
                    values.append(v)
                copy.write_row(values)
                n += 1
    return n


def seed() -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from accounts.models import Membership, Organization
    from cases.models import Case, CaseEvent, CaseFollowUp
    from conversation.models import (
        Agent,
        AgentVersion,
        ChannelSession,
        Contact,
        Conversation,
        Handoff,
        LlmCall,
        Turn,
    )

    rnd = random.Random(17)
    now = timezone.now()
    start = now - dt.timedelta(days=DAYS)

    def when() -> dt.datetime:
        return start + dt.timedelta(seconds=rnd.uniform(0, DAYS * 86400 - 60))

    with transaction.atomic():
        org = Organization.objects.create(name="Bench", slug="bench")
        manager = get_user_model().objects.create_user("gestor", password="x")
        Membership.objects.create(organization=org, user=manager, role="manager")
        agents, versions = [], []
        for name in ("Suporte", "Vendas", "Cobrança"):
            agent = Agent.objects.create(organization=org, name=name)
            version = AgentVersion.objects.create(
                organization=org, agent=agent, number=1, prompt="x", provider="offline"
            )
            agent.published_version = version
            agent.save(update_fields=["published_version"])
            agents.append(agent)
            versions.append(version)
        channels = [
            ChannelSession.objects.create(
                organization=org, name=f"Canal {i}", provider="simulator", agent=agents[i]
            )
            for i in range(2)
        ]
    t0 = time.perf_counter()
    org_id = org.pk
    contacts = [uuid.uuid4() for _ in range(CONVERSATIONS)]
    copy_rows(
        Contact,
        (
            {"id": c, "organization_id": org_id, "created_at": start, "phone": f"55119{i:08d}"}
            for i, c in enumerate(contacts)
        ),
    )
    conversations = []
    for i, contact in enumerate(contacts):
        created = when()
        channel = channels[i % 2]
        conversations.append((uuid.uuid4(), created, channel, contact))
    copy_rows(
        Conversation,
        (
            {
                "id": cid,
                "organization_id": org_id,
                "created_at": created,
                "channel_id": channel.pk,
                "contact_id": contact,
                "status": "closed" if i % 3 == 0 else "ai_handling",
                "last_message_at": created + dt.timedelta(minutes=10),
            }
            for i, (cid, created, channel, contact) in enumerate(conversations)
        ),
    )
    turns = []
    outcomes = ("classified", "classified", "sticky", "fallback", "no_match")
    for i in range(TURNS):
        cid, created, channel, _contact = conversations[i % CONVERSATIONS]
        at = min(created + dt.timedelta(minutes=(i // CONVERSATIONS) * 2), now)
        version = versions[(i // 7) % 3]
        trace = {
            "route": {
                "source": "router",
                "outcome": outcomes[i % 5],
                "stage": "local" if i % 2 else "llm",
            },
            "runtime": {"mode": "on", "handled": i % 4 != 0},
        }
        turns.append((uuid.uuid4(), cid, at, version, trace))
    copy_rows(
        Turn,
        (
            {
                "id": tid,
                "organization_id": org_id,
                "created_at": at,
                "conversation_id": cid,
                "trigger_kind": "inbound_message",
                "trigger_key": str(tid),
                "status": "done",
                "outcome": "replied",
                "agent_version_id": version.pk,
                "trace": trace,
            }
            for tid, cid, at, version, trace in turns
        ),
    )

    def calls() -> Iterable[dict[str, Any]]:
        for i in range(CALLS):
            tid, cid, at, _v, _t = turns[i % TURNS]
            yield {
                "id": uuid.uuid4(),
                "organization_id": org_id,
                "created_at": at,
                "conversation_id": cid,
                "turn_id": tid,
                "purpose": "orchestrator",
                "provider": "anthropic",
                "model": MODELS[i % len(MODELS)],
                "input_tokens": 1500 + i % 700,
                "output_tokens": 120 + i % 90,
                "cache_read_tokens": 3000 if i % 2 else 0,
                "cache_creation_tokens": 0 if i % 2 else 3000,
                "latency_ms": 800,
                "error_code": "" if i % 50 else "llm_timeout",
            }

    copy_rows(LlmCall, calls())
    reasons = ("requested_human", "low_confidence", "critical_stage", "llm_unavailable")
    copy_rows(
        Handoff,
        (
            {
                "id": uuid.uuid4(),
                "organization_id": org_id,
                "created_at": conversations[i * 8][1] + dt.timedelta(minutes=3),
                "conversation_id": conversations[i * 8][0],
                "reason_code": reasons[i % 4],
                "status": "returned",
            }
            for i in range(HANDOFFS)
        ),
    )
    cases, events, follow_ups = [], [], []
    for i in range(CASES):
        cid, created, _channel, contact = conversations[i * 10 + 1]
        opened = created + dt.timedelta(minutes=5)
        answered = opened + dt.timedelta(minutes=rnd.randint(5, 600))
        closed = answered + dt.timedelta(minutes=rnd.randint(1, 120))
        status = "resolved" if i % 5 else "escalated"
        case_id = uuid.uuid4()
        cases.append(
            {
                "id": case_id,
                "organization_id": org_id,
                "created_at": opened,
                "conversation_id": cid,
                "lead_id": contact,
                "agent_id": agents[i % 3].pk,
                "status": status,
                "title": "Caso",
                "summary": "Resumo",
                "blocker": "Bloqueio",
                "waiting_since": opened,
                "opened_at": opened,
                "closed_at": closed,
            }
        )
        for kind, at, action in (
            ("opened", opened, ""),
            ("human_replied", answered, "resolved" if status == "resolved" else "escalate"),
            (status, closed, ""),
        ):
            events.append(
                {
                    "id": uuid.uuid4(),
                    "organization_id": org_id,
                    "created_at": at,
                    "case_id": case_id,
                    "kind": kind,
                    "actor_kind": "human",
                    "human_action": action,
                }
            )
        if i % 4 == 0:
            follow_ups.append(
                {
                    "id": uuid.uuid4(),
                    "organization_id": org_id,
                    "created_at": opened,
                    "case_id": case_id,
                    "conversation_id": cid,
                    "due_at": answered,
                    "status": "sent",
                    "fired_at": answered,
                }
            )
    copy_rows(Case, cases)
    copy_rows(CaseEvent, events)
    copy_rows(CaseFollowUp, follow_ups)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    emit("seed", time.perf_counter() - t0, "s", TURNS + CALLS)
    return {"org": org, "manager": manager}


def main() -> None:
    setup_django(DB)
    fresh_migrated()
    world = seed()
    org, manager = world["org"], world["manager"]
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from accounts import rls
    from analytics import budgets, rollups
    from conversation.models import LlmCall, Turn

    with rls.tenant_context(org.pk):
        emit("seeded_turns", Turn.objects.filter(organization=org).count(), "rows", TURNS)
        emit("seeded_llm_calls", LlmCall.objects.filter(organization=org).count(), "rows", CALLS)
        t0 = time.perf_counter()
        days = rollups.roll_up(org.pk)
        emit("rollup_backfill", time.perf_counter() - t0, "s", days)
        t0 = time.perf_counter()
        days = rollups.roll_up(org.pk)
        emit("rollup_beat_run", time.perf_counter() - t0, "s", days)

    client = Client(SERVER_NAME="localhost")
    client.force_login(manager)
    today = dt.date.today()
    for label, query in (
        ("outcomes_page_90d", f"?de={today - dt.timedelta(days=89)}&ate={today}"),
        ("outcomes_page_30d", ""),
        ("outcomes_csv_90d", f"csv/?de={today - dt.timedelta(days=89)}&ate={today}"),
    ):
        url = "/resultados/" + query
        assert client.get(url).status_code == 200  # warm
        times, counts = [], []
        for _ in range(REQUESTS):
            with CaptureQueriesContext(connection) as queries:
                t0 = time.perf_counter()
                response = client.get(url)
                times.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200
            counts.append(len(queries))
        emit(f"{label}_server_ms_p50", median(times), "ms", REQUESTS)
        emit(f"{label}_server_ms_p95", percentile(times, 95), "ms", REQUESTS)
        emit(f"{label}_queries", max(counts), "queries", REQUESTS)

    with rls.tenant_context(org.pk):
        times, counts = [], []
        for _ in range(REQUESTS):
            with CaptureQueriesContext(connection) as queries:
                t0 = time.perf_counter()
                budgets.month_spend(org.pk)
                times.append((time.perf_counter() - t0) * 1000)
            counts.append(len(queries))
        emit("budget_month_spend_ms_p50", median(times), "ms", REQUESTS)
        emit("budget_month_spend_queries", max(counts), "queries", REQUESTS)


if __name__ == "__main__":
    main()
