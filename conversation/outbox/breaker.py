"""The per-channel circuit breaker, kept on the ``ChannelSession`` row.

Why the database and not the cache: the breaker decides whether committed work is
attempted, so it lives with that work (DESIGN §5: the database is the source of truth, the
broker only wakes workers). Every worker and web process sees the same row whatever cache
backend it has (the embedded default's cache is per process), it survives a Redis restart
(Redis is also the broker that fails in the outage drills), and its transitions are
conditional UPDATEs — exactly one delivery wins the half-open probe. It costs no read (the
row comes with the message being delivered) and no write while the channel is healthy:
only failures, and the first success after them, touch it.

States: **closed** — deliveries are attempted; consecutive retryable provider failures are
counted and ``OUTBOX_BREAKER_THRESHOLD`` of them open it. **open** — nothing is attempted
on the channel until ``breaker_until`` (the cool-down); rows stay queued, spending no
attempts. **half-open** — one delivery (the probe, leased until ``breaker_until``) tries
the provider: success closes the breaker and resumes every chain of the channel, failure
opens it for another cool-down.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime
from enum import Enum

from django.db.models import Case, F, Q, Value, When

from conversation.models import BreakerState, ChannelSession

from .policy import OutboxPolicy

log = logging.getLogger(__name__)


class Gate(Enum):
    ATTEMPT = "attempt"  # closed: deliver
    PROBE = "probe"  # the cool-down is over: whoever wins the probe delivers
    HELD = "held"  # open, or a probe is in flight


def gate(channel: ChannelSession, now: datetime) -> Gate:
    """What the breaker lets a delivery on ``channel`` do now (from the loaded row)."""
    if channel.breaker_state == BreakerState.CLOSED:
        return Gate.ATTEMPT
    until = channel.breaker_until
    if until is not None and until > now:
        return Gate.HELD
    return Gate.PROBE


def held_until(channel: ChannelSession, now: datetime, policy: OutboxPolicy) -> datetime:
    """When a delivery held by the breaker should look again."""
    if channel.breaker_state == BreakerState.OPEN and channel.breaker_until is not None:
        return max(channel.breaker_until, now)
    # A probe is in flight: its outcome resumes the chains on success; on failure the
    # breaker opens for a cool-down, so looking again after one is soon enough.
    return now + policy.breaker_cooldown


def is_held(now: datetime) -> Q:
    """Messages whose channel's breaker holds deliveries now (for the sweeper)."""
    return Q(
        channel__breaker_state__in=[BreakerState.OPEN, BreakerState.HALF_OPEN],
        channel__breaker_until__gt=now,
    )


def acquire_probe(channel_id: uuid.UUID, now: datetime, policy: OutboxPolicy) -> bool:
    """Take the half-open probe; True for exactly one caller per cool-down."""
    due = Q(breaker_until__isnull=True) | Q(breaker_until__lte=now)
    won = (
        ChannelSession.objects.filter(pk=channel_id)
        .filter(due, breaker_state__in=[BreakerState.OPEN, BreakerState.HALF_OPEN])
        .update(breaker_state=BreakerState.HALF_OPEN, breaker_until=now + policy.lease)
    )
    if won:
        log.info("channel breaker half-open: probing", extra={"channel_id": str(channel_id)})
    return won > 0


def release_probe(channel_id: uuid.UUID, now: datetime) -> None:
    """The probe was taken but nothing reached the provider (refused before any call, or
    the claim lost a race): let the next delivery probe at once instead of after the lease."""
    ChannelSession.objects.filter(pk=channel_id, breaker_state=BreakerState.HALF_OPEN).update(
        breaker_state=BreakerState.OPEN, breaker_until=now
    )


def record_failure(
    channel: ChannelSession, now: datetime, policy: OutboxPolicy, *, give_up: bool = False
) -> None:
    """Count one retryable provider failure; open the breaker at the threshold, when the
    probe failed, or when a message exhausted its horizon (``give_up``: hours of failures
    are proof enough). One UPDATE; the conditions read the row as it is in the database."""
    opens = Q(breaker_state=BreakerState.HALF_OPEN) | Q(
        breaker_state=BreakerState.CLOSED, breaker_failures__gte=policy.breaker_threshold - 1
    )
    if give_up:
        opens = ~Q(breaker_state=BreakerState.OPEN) | Q(breaker_until__lte=now)
    ChannelSession.objects.filter(pk=channel.pk).update(
        breaker_failures=F("breaker_failures") + 1,
        breaker_state=Case(When(opens, then=Value(BreakerState.OPEN)), default=F("breaker_state")),
        breaker_until=Case(
            When(opens, then=Value(now + policy.breaker_cooldown)), default=F("breaker_until")
        ),
    )
    seen = channel.breaker_failures + 1
    if give_up or channel.breaker_state != BreakerState.CLOSED or seen >= policy.breaker_threshold:
        log.warning(
            "channel breaker open",
            extra={"channel_id": str(channel.pk), "failures": seen, "gave_up": give_up},
        )


def record_success(channel: ChannelSession) -> bool:
    """The provider answered — it took the message, or refused it for good (a 4xx is an
    answer too): reset the count; True when this closed an open breaker (the caller then
    resumes the channel's chains). No query while the loaded row shows a healthy channel."""
    if channel.breaker_state == BreakerState.CLOSED and channel.breaker_failures == 0:
        return False
    closed = ChannelSession.objects.filter(
        pk=channel.pk, breaker_state__in=[BreakerState.OPEN, BreakerState.HALF_OPEN]
    ).update(breaker_state=BreakerState.CLOSED, breaker_failures=0, breaker_until=None)
    if closed:
        log.info("channel breaker closed", extra={"channel_id": str(channel.pk)})
        return True
    ChannelSession.objects.filter(pk=channel.pk, breaker_failures__gt=0).update(breaker_failures=0)
    return False
