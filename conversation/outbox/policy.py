"""The outbox's rules as values: retry timing, the breaker's numbers, status order.

Pure (no database, no clock of its own): the delivery code reads the settings once per
run through ``OutboxPolicy.current()`` and hands times in.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

# Provider statuses only move forward along this order (``failed`` from a provider
# callback sits after ``sent``: it may overwrite an unconfirmed send, never a delivery the
# customer's phone confirmed; a later ``delivered``/``read`` does overwrite it).
STATUS_RANK: dict[str, int] = {
    "queued": 0,
    "sending": 1,
    "sent": 2,
    "failed": 3,
    "delivered": 4,
    "read": 5,
}


def moves_forward(current: str, new: str) -> bool:
    """True when a status callback ``new`` may replace ``current``."""
    if current not in STATUS_RANK or new not in STATUS_RANK:
        return False
    return STATUS_RANK[new] > STATUS_RANK[current]


def statuses_before(new: str) -> list[str]:
    """The statuses a callback ``new`` may overwrite (for one conditional UPDATE)."""
    return [s for s in STATUS_RANK if moves_forward(s, new)]


@dataclass(frozen=True)
class OutboxPolicy:
    horizon: timedelta
    backoff_base_s: float
    backoff_max_s: float
    breaker_threshold: int
    breaker_cooldown: timedelta
    lease: timedelta
    provider_timeout_s: float
    sweep_grace: timedelta
    resend_max_age: timedelta

    @classmethod
    def current(cls) -> OutboxPolicy:
        return cls(
            horizon=timedelta(seconds=settings.OUTBOX_RETRY_HORIZON_S),
            backoff_base_s=settings.OUTBOX_BACKOFF_BASE_S,
            backoff_max_s=settings.OUTBOX_BACKOFF_MAX_S,
            breaker_threshold=max(1, settings.OUTBOX_BREAKER_THRESHOLD),
            breaker_cooldown=timedelta(seconds=settings.OUTBOX_BREAKER_COOLDOWN_S),
            lease=timedelta(seconds=settings.OUTBOX_DELIVERY_LEASE_S),
            provider_timeout_s=settings.OUTBOX_PROVIDER_TIMEOUT_S,
            sweep_grace=timedelta(seconds=settings.OUTBOX_SWEEP_GRACE_S),
            resend_max_age=timedelta(seconds=settings.OUTBOX_AUTO_RESEND_MAX_AGE_S),
        )

    def backoff_s(self, attempts: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds before attempt ``attempts + 1`` after ``attempts`` failed ones.

        Exponential from the base, capped, with "equal jitter" (half fixed, half random):
        conversations that failed together do not retry together, and no retry comes
        sooner than half the step."""
        step = min(self.backoff_max_s, self.backoff_base_s * 2 ** max(attempts - 1, 0))
        return step / 2 + rand() * step / 2

    def next_attempt(
        self, now: datetime, attempts: int, retry_until: datetime | None
    ) -> datetime | None:
        """When to try again after a retryable failure, or None when the horizon is past
        (the last attempt falls on the horizon itself, never after it)."""
        if retry_until is not None and now >= retry_until:
            return None
        due = now + timedelta(seconds=self.backoff_s(attempts))
        return min(due, retry_until) if retry_until is not None else due

    def breaker_wake(self, until: datetime, rand: Callable[[], float] = random.random) -> datetime:
        """When a delivery held by an open breaker looks again: just after the cool-down,
        spread over a second so the held conversations do not all probe at once."""
        return until + timedelta(seconds=rand())
