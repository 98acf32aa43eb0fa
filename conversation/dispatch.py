"""Scheduling Celery tasks by name after commit, with an in-process mode for the embedded default.

Producers name the task (``enqueue("conversation.deliver_outbox", conversation_id)``)
and never import a task module: only this module touches Celery's registry, so the
code that schedules work stays below the entry points that run it. Each app config
imports its own ``tasks`` module, so every name is registered in web processes too;
an unknown name fails at ``enqueue`` (a typo fails in tests, not on commit).

With a broker, ``enqueue`` is ``apply_async`` on commit. Without one (no
``CELERY_BROKER_URL``), the same task function runs in this process: immediately
on commit when there is no delay, or later on one background thread when there
is (the burst window, outbox backoff). Arguments round-trip through JSON either
way, so a payload that a broker would reject fails in tests too.

The in-process runner is also the embedded default's beat for the sweeper: from the first
task this process schedules, its thread runs ``conversation.sweep_due_work`` every
``SWEEP_INTERVAL_S`` (the first sweep at once). The delayed tasks live in memory, so a
restart loses them; the sweep re-drives the turns and deliveries they carried from the
database. With a broker, Celery beat runs the sweep (``CELERY_BEAT_SCHEDULE``).
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
from config.celery import app as celery_app

log = logging.getLogger(__name__)

_lock = threading.Condition()
_delayed: list[tuple[float, int, Task, tuple[Any, ...]]] = []
_seq = itertools.count()
_thread: threading.Thread | None = None
_next_sweep: float | None = None  # monotonic time of the in-process sweep; None: not yet
SWEEP_TASK = "conversation.sweep_due_work"
# Tests turn the thread off and call ``run_delayed`` to control time.
background_thread_enabled = True


def enqueue(name: str, *args: Any, countdown: float = 0.0) -> None:
    """Schedule the task registered as ``name`` with ``args`` once the transaction commits."""
    task = task_named(name)
    payload = tuple(json.loads(json.dumps(list(args))))
    transaction.on_commit(lambda: _send(task, payload, countdown))


def task_named(name: str) -> Task:
    """The registered task called ``name``; KeyError for a name no task module registers.

    The explicit app, not ``celery.current_app``: the current app is thread-local, and the
    in-process thread schedules work too (outbox retries)."""
    task: Task = celery_app.tasks[name]
    return task


def _send(task: Task, args: tuple[Any, ...], countdown: float) -> None:
    if not settings.TASKS_IN_PROCESS:
        try:
            if countdown > 0:
                task.apply_async(args=args, countdown=countdown)
            else:
                task.apply_async(args=args)
        except Exception as exc:
            # Runs on commit: the row is stored, the broker only wakes workers. Raising here
            # would turn a stored webhook into a 500 (and its redelivery into a duplicate);
            # the periodic sweeper re-drives what was committed but never published. One
            # line per task, no traceback: an outage would otherwise flood the log.
            log.error(
                "task publish failed",
                extra={
                    "task": task.name,
                    "task_args": list(args),
                    "countdown": countdown,
                    "error": f"{type(exc).__name__}: {exc}"[:300],
                },
            )
        return
    if background_thread_enabled:
        _ensure_thread()  # also the in-process sweeper's clock
    if countdown <= 0:
        _run(task, args)
        return
    with _lock:
        heapq.heappush(_delayed, (time.monotonic() + countdown, next(_seq), task, args))
        _lock.notify()


def _run(task: Task, args: tuple[Any, ...]) -> None:
    try:
        # Like a worker: the task sets its own tenant context from its row (accounts.rls),
        # whatever the code that scheduled it was allowed to see.
        with rls.unprivileged():
            task.apply(args=args, throw=True)
    except Exception:
        log.exception("in-process task failed", extra={"task": task.name})


def run_delayed(*, all_due: bool = True) -> int:
    """Run queued delayed tasks now (tests, and the in-process thread). Returns how many ran.

    ``all_due`` (tests): every task queued when called, whatever its time — not the ones
    they schedule in turn (a turn re-checking an open burst would otherwise run forever)."""
    ran = 0
    with _lock:
        budget = len(_delayed) if all_due else None
    while budget is None or ran < budget:
        with _lock:
            if not _delayed or (not all_due and _delayed[0][0] > time.monotonic()):
                return ran
            _, _, task, args = heapq.heappop(_delayed)
        _run(task, args)
        ran += 1
    return ran


def pending_delayed() -> int:
    with _lock:
        return len(_delayed)


def _ensure_thread() -> None:
    global _thread, _next_sweep
    with _lock:
        if _thread is not None and _thread.is_alive():
            return
        if _next_sweep is None:
            _next_sweep = time.monotonic()
        _thread = threading.Thread(target=_loop, name="in-process-tasks", daemon=True)
        _thread.start()


def _wake_in(now: float) -> float | None:
    """Seconds until the thread has something to do (0: now); None: nothing scheduled."""
    times = [t for t in (_delayed[0][0] if _delayed else None, _next_sweep) if t is not None]
    return max(min(times) - now, 0.0) if times else None


def _loop() -> None:
    global _next_sweep
    while True:
        with _lock:
            while (wait := _wake_in(time.monotonic())) != 0.0:
                _lock.wait(timeout=wait)
            sweep = _next_sweep is not None and _next_sweep <= time.monotonic()
            if sweep:
                _next_sweep = time.monotonic() + settings.SWEEP_INTERVAL_S
        close_old_connections()
        run_delayed(all_due=False)
        if sweep:
            _run(task_named(SWEEP_TASK), ())
        close_old_connections()
