"""Turns on real Celery workers consuming from Redis, against the real test database."""

from __future__ import annotations

import itertools
import os
import time

import pytest
from django.db import connection
from django.test import Client

from conversation.models import Message, Turn
from tests.celery_workers import celery_workers
from tests.conftest import simulator_post

BROKER = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.fixture
def workers():
    if connection.vendor != "postgresql":
        pytest.skip("worker processes need a shared PostgreSQL database (scripts/test.sh)")
    with celery_workers(database_url=database_url(), broker=BROKER, count=2) as procs:
        yield procs


def wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_real_worker_answers_a_webhook_message(world, workers):
    simulator_post(Client(), world.channel_a, "oi", msg_id="w-1")
    assert wait_for(
        lambda: Message.objects.filter(direction="outbound", status="delivered").exists()
    )
    assert Turn.objects.get().outcome == "replied"


def test_two_workers_on_one_conversation_never_interleave_or_duplicate(world, workers):
    for i, text in enumerate(["oi", "qual o horário?", "e o prazo de entrega?", "obrigado"]):
        simulator_post(Client(), world.channel_a, text, msg_id=f"c-{i}")
    assert wait_for(lambda: Turn.objects.filter(status="done").count() == 4)
    assert wait_for(lambda: not Message.objects.filter(status="queued").exists())

    turns = list(Turn.objects.order_by("created_at"))
    answering = [t for t in turns if t.outcome == "replied"]
    # Every customer line was answered by exactly one turn; merged turns answer nothing.
    inbound = list(Message.objects.filter(direction="inbound"))
    assert all(m.turn_id in {t.pk for t in answering} for m in inbound)
    replies = list(Message.objects.filter(direction="outbound").order_by("created_at"))
    assert [r.turn_id for r in replies] == [t.pk for t in answering]
    # Turns of one conversation hold its lock: no two decide at the same time.
    for earlier, later in itertools.pairwise(turns):
        assert earlier.finished_at <= later.created_at
    # Each reply comes after every line its turn answered.
    for reply in replies:
        answered = [m for m in inbound if m.turn_id == reply.turn_id]
        assert max(m.created_at for m in answered) < reply.created_at
