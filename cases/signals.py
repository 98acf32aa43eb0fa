"""Worker start-up: train the promise detector's learned stage before the first turn.

The learned stage is trained on its first use in a process (about a second). A worker that
did it on its first send would hold that turn (and its conversation) for that second, so
each worker process warms it up when it starts (``worker_process_init`` runs in every
prefork child; ``worker_ready`` covers the solo and threads pools).
"""

from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_process_init, worker_ready

from cases.guardrail.promise import warm_up

log = logging.getLogger(__name__)


def warm_promise_detector(**_kwargs: Any) -> None:
    try:
        warm_up()
    except Exception:  # never keep a worker from starting: the first send trains it instead
        log.exception("promise detector warm-up failed")


worker_process_init.connect(warm_promise_detector, weak=False)
worker_ready.connect(warm_promise_detector, weak=False)
