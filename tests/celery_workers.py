"""Real Celery worker processes on Redis for the worker tests and bench/turns.py."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

from django.test import override_settings

from config.celery import app

ROOT = Path(__file__).resolve().parent.parent
# The queues config.celery.route_task reads (settings: TASK_QUEUE_KINDS).
ROUTED_QUEUE_SETTINGS = ("CELERY_TURNS_QUEUE", "CELERY_OUTBOX_QUEUE", "CELERY_BULK_QUEUE")


@contextlib.contextmanager
def celery_workers(
    *, database_url: str, broker: str, count: int = 2, env: dict[str, str] | None = None
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Start ``count`` solo workers on a fresh queue and route this process's tasks to it."""
    queue = f"q-{uuid.uuid4().hex[:8]}"
    previous = (app.conf.broker_url, app.conf.task_always_eager, app.conf.task_default_queue)
    app.conf.broker_url, app.conf.task_always_eager, app.conf.task_default_queue = (
        broker,
        False,
        queue,
    )
    worker_env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": broker,
        "CELERY_QUEUE": queue,
        **dict.fromkeys(ROUTED_QUEUE_SETTINGS, queue),  # turns, outbox, bulk: all on ``queue``
        "TURN_BURST_WINDOW_S": "0",
        "ANTHROPIC_API_KEY": "",
        "LOG_LEVEL": "WARNING",
        **(env or {}),
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "-Q"]
    flags = ["--without-heartbeat", "--without-mingle", "--without-gossip", "-l", "warning"]
    procs = [
        subprocess.Popen(
            [*command, queue, "-n", f"w{i}-{queue}@%h", *flags],
            cwd=ROOT,
            env=worker_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(count)
    ]
    try:
        with override_settings(
            TASKS_IN_PROCESS=False, **dict.fromkeys(ROUTED_QUEUE_SETTINGS, queue)
        ):
            yield procs
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        app.conf.broker_url, app.conf.task_always_eager, app.conf.task_default_queue = previous
