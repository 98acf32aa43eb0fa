"""Worker start-up: train the promise detector's learned stage before the first turn.

The learned stage is trained on its first use in a process (about a second). A worker that
did it on its first send would hold that turn (and its conversation) for that second, so
each worker process warms it up when it starts (``accounts.worker_start``).
"""

from __future__ import annotations

from accounts.worker_start import warm_on_worker_start
from cases.guardrail.promise import warm_up

# A lambda: ``warm_up`` is looked up when a worker starts (tests replace it).
warm_on_worker_start(lambda: warm_up(), "promise detector")
