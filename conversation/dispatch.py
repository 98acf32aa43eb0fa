"""Scheduling Celery tasks after commit, with an in-process mode for the embedded default.

With a broker, ``enqueue`` is ``apply_async`` on commit. Without one (no
``CELERY_BROKER_URL``), the same task function runs in this process: immediately
on commit when there is no delay, or later on one background thread when there
is (the burst window, outbox backoff). Arguments round-trip through JSON either
way, so a payload that a broker would reject fails in tests too.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import threading
import time
from typing import Any

from celery import Task
from django.conf import settings
from django.db import close_old_connections, transaction

from accounts import rls

log = logging.getLogger(__name__)

_lock = threading.Condition()
_delayed: list[tuple[float, int, Task, tuple[Any, ...]]] = []
_seq = itertools.count()
_thread: threading.Thread | None = None
# Tests turn the thread off and call ``run_delayed`` to control time.
background_thread_enabled = True


def enqueue(task: Task, *args: Any, countdown: float = 0.0) -> None:
    payload = tuple(json.loads(json.dumps(list(args))))
    transaction.on_commit(lambda: _send(task, payload, countdown))


def _send(task: Task, args: tuple[Any, ...], countdown: float) -> None:
    if not settings.TASKS_IN_PROCESS:
        if countdown > 0:
            task.apply_async(args=args, countdown=countdown)
        else:
            task.apply_async(args=args)
        return
    if countdown <= 0:
        _run(task, args)
        return
    with _lock:
        heapq.heappush(_delayed, (time.monotonic() + countdown, next(_seq), task, args))
        _lock.notify()
    if background_thread_enabled:
        _ensure_thread()


def _run(task: Task, args: tuple[Any, ...]) -> None:
    try:
        # Like a worker: the task sets its own tenant context from its row (accounts.rls),
        # whatever the code that scheduled it was allowed to see.
        with rls.unprivileged():
            task.apply(args=args, throw=True)
    except Exception:
        log.exception("in-process task failed", extra={"task": task.name})


def run_delayed(*, all_due: bool = True) -> int:
    """Run queued delayed tasks now (tests, and the in-process thread). Returns how many ran."""
    ran = 0
    while True:
        with _lock:
            if not _delayed or (not all_due and _delayed[0][0] > time.monotonic()):
                return ran
            _, _, task, args = heapq.heappop(_delayed)
        _run(task, args)
        ran += 1


def pending_delayed() -> int:
    with _lock:
        return len(_delayed)


def _ensure_thread() -> None:
    global _thread
    with _lock:
        if _thread is not None and _thread.is_alive():
            return
        _thread = threading.Thread(target=_loop, name="in-process-tasks", daemon=True)
        _thread.start()


def _loop() -> None:
    while True:
        with _lock:
            while not _delayed or _delayed[0][0] > time.monotonic():
                timeout = (_delayed[0][0] - time.monotonic()) if _delayed else None
                _lock.wait(timeout=timeout)
        close_old_connections()
        run_delayed(all_due=False)
        close_old_connections()
