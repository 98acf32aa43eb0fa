"""Worker start-up: load the router's sentence encoder before the first turn.

The encoder is loaded on its first use in a process (about a second, ~130 MB). A worker
that did it on a customer's first routed turn would hold that turn for that second, so
each worker process loads it when it starts (``worker_process_init`` runs in every
prefork child; ``worker_ready`` covers the solo and threads pools). Heads are still
trained per router on first use (tens of milliseconds) and cached.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_process_init, worker_ready

from routers.cascade_runner import warm_up

log = logging.getLogger(__name__)


def warm_router_encoder(**_kwargs: Any) -> None:
    try:
        warm_up()
    except Exception:  # never keep a worker from starting: the first turn loads it instead
        log.exception("router encoder warm-up failed")


worker_process_init.connect(warm_router_encoder, weak=False)
worker_ready.connect(warm_router_encoder, weak=False)
