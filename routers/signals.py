"""Worker start-up: load the router's sentence encoder before the first turn.

The encoder is loaded on its first use in a process (about a second, ~130 MB). A worker
that did it on a customer's first routed turn would hold that turn for that second, so
each worker process loads it when it starts (``accounts.worker_start``). Heads are still
trained per router on first use (tens of milliseconds) and cached.
"""

from __future__ import annotations

from accounts.worker_start import warm_on_worker_start
from routers.cascade_runner import warm_up

# A lambda: ``warm_up`` is looked up when a worker starts (tests replace it).
warm_on_worker_start(lambda: warm_up(), "router encoder")
