"""Turns on real Celery workers consuming from Redis, against the real test database."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from config.celery import app
from conversation.models import Message, Turn
from tests.conftest import simulator_post

ROOT = Path(__file__).resolve().parents[2]
BROKER = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.fixture
def workers(settings):
    if connection.vendor != "postgresql":
        pytest.skip("worker processes need a shared PostgreSQL database (scripts/test.sh)")
    queue = f"test-{uuid.uuid4().hex[:8]}"
    settings.TASKS_IN_PROCESS = False
    previous = (app.conf.broker_url, app.conf.task_always_eager, app.conf.task_default_queue)
    app.conf.broker_url, app.conf.task_always_eager, app.conf.task_default_queue = (
        BROKER,
        False,
        queue,
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": BROKER,
        "CELERY_QUEUE": queue,
        "TURN_BURST_WINDOW_S": "0",
        "ANTHROPIC_API_KEY": "",
    }
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--pool=solo",
                "-Q",
                queue,
                "-n",
                f"w{i}-{queue}@%h",
                "--without-heartbeat",
                "--without-mingle",
                "--without-gossip",
                "-l",
                "warning",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for i in range(2)
    ]
    yield procs
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    app.conf.broker_url, app.conf.task_always_eager, app.conf.task_default_queue = previous


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
