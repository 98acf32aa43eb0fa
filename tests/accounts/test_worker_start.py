"""Warm-ups run where tasks run: every prefork child and the threads/solo worker, never
the prefork parent (which only supervises)."""

from __future__ import annotations

from typing import Any

from celery.concurrency import prefork, thread
from celery.signals import worker_process_init, worker_ready

from accounts.worker_start import warm_on_worker_start


class _Consumer:
    """What ``worker_ready`` is sent by: the worker's consumer, holding its pool."""

    def __init__(self, pool_cls: Any) -> None:
        self.pool = pool_cls.__new__(pool_cls)


def _consumer(pool_cls: Any) -> Any:
    return _Consumer(pool_cls)


def test_a_warm_up_runs_in_children_and_thread_workers_but_not_in_a_prefork_parent() -> None:
    calls: list[str] = []
    warm_on_worker_start(lambda: calls.append("warm"), "test resource")
    worker_ready.send(sender=_consumer(prefork.TaskPool))
    assert calls == []
    worker_process_init.send(sender=None)
    worker_ready.send(sender=_consumer(thread.TaskPool))
    assert calls == ["warm", "warm"]
