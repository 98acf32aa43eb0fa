"""``scripts/worker.sh``: the documented worker command line per queue, and that the worker
kinds together consume every queue the task routes name (a routed task nobody consumes
would never run)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from django.conf import settings

from config.celery import route_task

ROOT = Path(__file__).resolve().parents[2]


def _printed(kind: str, **env: str) -> list[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CELERY_", "DB_POOL", "DATABASE_APPLICATION"))
    }
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "worker.sh"), "--print", kind],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def _option(words: list[str], flag: str) -> str:
    return words[words.index(flag) + 1]


def test_the_turns_worker_runs_threads_with_a_pool_sized_to_them() -> None:
    words = _printed("turns", TURN_THREADS="64")
    assert (_option(words, "-P"), _option(words, "-c"), _option(words, "-Q")) == (
        "threads",
        "64",
        "turns",
    )
    assert words[:2] == ["DATABASE_APPLICATION_NAME=retaguarda-turns", "DB_POOL_MAX_SIZE=64"]


def test_the_outbox_worker_runs_threads() -> None:
    words = _printed("outbox")
    assert (_option(words, "-P"), _option(words, "-Q")) == ("threads", "outbox")
    assert words[1] == f"DB_POOL_MAX_SIZE={_option(words, '-c')}"
    # its connections, by name in pg_stat_activity (bench/load.py finds them by it)
    assert words[0] == "DATABASE_APPLICATION_NAME=retaguarda-outbox"


def test_the_bulk_worker_is_prefork_without_a_pool_and_takes_the_default_queue() -> None:
    words = _printed("bulk", BULK_CONCURRENCY="3")
    assert (_option(words, "-P"), _option(words, "-c")) == ("prefork", "3")
    assert _option(words, "-Q").split(",") == ["bulk", "retaguarda"]
    assert words[1] == "DB_POOL_MAX_SIZE=0"  # Celery closes a pool after every prefork task


def test_beat_is_its_own_process_and_runs_no_tasks() -> None:
    words = _printed("beat")
    assert "beat" in words and "worker" not in words


def test_an_unknown_kind_is_refused() -> None:
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "worker.sh"), "everything"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "usage" in result.stderr


def test_each_routed_task_is_consumed_by_the_worker_kind_its_route_names() -> None:
    queues = {
        kind: _option(_printed(kind), "-Q").split(",") for kind in ("turns", "outbox", "bulk")
    }
    for name, kind in settings.TASK_QUEUE_KINDS.items():
        route = route_task(name)
        assert route is not None and route["queue"] in queues[kind], (name, kind, route)
    # Unrouted tasks land on the default queue: the bulk workers take it.
    assert route_task("some.unrouted_task") is None
    assert settings.CELERY_TASK_DEFAULT_QUEUE in queues["bulk"]


def test_a_renamed_queue_is_renamed_for_the_worker_too() -> None:
    # The same variable names the queue in the routes (config/settings/work.py).
    assert _option(_printed("turns", CELERY_TURNS_QUEUE="turns-eu"), "-Q") == "turns-eu"
