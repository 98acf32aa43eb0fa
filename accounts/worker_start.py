"""Warm a process-wide resource up where tasks will run, before the first one.

``worker_process_init`` runs in every prefork child; ``worker_ready`` in the worker itself,
which runs the tasks with the threads and solo pools — but not with prefork, whose parent
only supervises its children: loading there would cost the memory for nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery.signals import worker_process_init, worker_ready

log = logging.getLogger(__name__)

PREFORK_POOL_MODULE = "celery.concurrency.prefork"


def warm_on_worker_start(warm: Callable[[], None], what: str) -> None:
    """Connect ``warm`` to the worker start-up signals. A failure is logged, never raised:
    a worker must start anyway (the first use then loads the resource)."""

    def run() -> None:
        try:
            warm()
        except Exception:
            log.exception("warm-up failed", extra={"what": what})

    def in_child(**_kwargs: Any) -> None:
        run()

    def in_worker(sender: Any = None, **_kwargs: Any) -> None:
        pool = getattr(sender, "pool", None)
        if pool is not None and type(pool).__module__ == PREFORK_POOL_MODULE:
            return  # the children warm up themselves (worker_process_init)
        run()

    worker_process_init.connect(in_child, weak=False)
    worker_ready.connect(in_worker, weak=False)
