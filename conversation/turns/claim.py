"""Claiming a turn, and finishing it only while the claim is still its own.

One conversation has at most one *active* turn (``running``, or ``retry``: waiting to try
the model again). A claim is a short transaction: it locks the conversation row
(``FOR NO KEY UPDATE``: a webhook storing a line or updating ``last_inbound_at`` is never
blocked by a running turn, only by another claim for milliseconds), refuses while another
turn of the conversation is active, and writes the turn with a lease —
``lease_token`` (this attempt's epoch) and ``lease_expires_at``. The lock is released at
once: the turn decides with no transaction open. ``finish`` commits the outcome with a
conditional UPDATE on ``lease_token``: an attempt whose lease was taken over (it was
presumed dead: past ``TURN_LEASE_S``, longer than the turn task's hard time limit) writes
nothing. A redelivered task finds its trigger's turn done, or active under a live lease,
and ends quietly; past the lease it takes the turn over (``attempts`` + 1) and decides it
again — nothing the dead attempt decided was written, so nothing is said twice.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.db.models import Exists, F, OuterRef, QuerySet
from django.utils import timezone
from psycopg.errors import LockNotAvailable

from accounts.db.compiled import CompiledQuery
from accounts.logging import set_log_ids
from conversation.dispatch import enqueue
from conversation.models import (
    ACTIVE_TURN_STATUSES,
    Conversation,
    Direction,
    Message,
    TriggerKind,
    Turn,
    TurnOutcome,
    TurnStatus,
)

log = logging.getLogger(__name__)

INBOUND_TASK = "conversation.run_inbound_turn"
CASE_REPLY_TASK = "cases.run_case_reply_turn"
FOLLOW_UP_TASK = "cases.run_follow_up_turn"


class LeaseLost(Exception):
    """The turn's claim was taken over: this attempt must write nothing."""


@dataclass
class Claim:
    conversation: Conversation
    turn: Turn
    token: uuid.UUID
    started: float = field(default_factory=time.monotonic)
    taken_over: bool = False  # a re-drive of a turn whose earlier attempt never finished
    exhausted: bool = False  # ... that has had all its attempts (``TURN_MAX_ATTEMPTS``)

    def __post_init__(self) -> None:
        # Every later log line of this task names the turn (accounts.logging).
        set_log_ids(turn_id=self.turn.pk)


# A claim that found its conversation locked by another claim or finish comes back after
# this long (those transactions hold the lock for milliseconds, never across the network).
LOCKED_RETRY_S = 0.3


def lease_length() -> timedelta:
    return timedelta(seconds=settings.TURN_LEASE_S)


class ClaimRefused(Exception):
    """The claim's transaction must end with nothing written, and the task with nothing
    to do: the conversation is locked by another claim (the trigger comes back after
    ``LOCKED_RETRY_S``), or a concurrent delivery of the trigger inserted its turn first.

    Raised inside the claim's transaction, caught by the turn's entry point around it —
    the statement that failed doomed the transaction, and the claim opens no savepoint to
    survive it (two round trips each, on every turn, for a refusal that is rare). The
    entry point calls ``follow_up`` once the transaction has rolled back."""

    def __init__(self, redrive: tuple[str, str, float] | None = None) -> None:
        super().__init__()
        self._redrive = redrive

    def follow_up(self) -> None:
        if self._redrive is not None:
            kind, key, countdown = self._redrive
            redrive(kind, key, countdown=countdown)


@dataclass(frozen=True)
class Locked:
    conversation: Conversation
    already_turned: bool  # a turn has this trigger
    busy: bool  # a turn of the conversation is active


def _lock_query(kind: str, key: str, **lookup: Any) -> QuerySet[Conversation]:
    return (
        Conversation.objects.select_for_update(of=("self",), no_key=True, nowait=True)
        .select_related("contact", "channel", "organization")
        .annotate(
            already_turned=Exists(Turn.objects.filter(trigger_kind=kind, trigger_key=key)),
            busy=Exists(
                Turn.objects.filter(conversation=OuterRef("pk"), status__in=ACTIVE_TURN_STATUSES)
            ),
        )
        .filter(**lookup)
    )


# Every inbound turn claims with it: compiled once per thread (accounts.db.compiled).
_LOCK_BY_MESSAGE = CompiledQuery(
    lambda kind, key, message_id: _lock_query(kind, key, messages__pk=message_id)[:1],
    ("sample-kind", "sample-key", uuid.UUID(int=3)),
)


# The most customer lines one claim reads: a flood is answered a burst at a time.
MAX_UNANSWERED = 200


def _unanswered_query(conversation_id: uuid.UUID) -> QuerySet[Message]:
    return Message.objects.filter(
        conversation_id=conversation_id, direction=Direction.INBOUND, turn__isnull=True
    ).order_by("created_at", "pk")[:MAX_UNANSWERED]


# Every claim reads them: compiled once per thread (accounts.db.compiled).
_UNANSWERED = CompiledQuery(_unanswered_query, (uuid.UUID(int=1),))


def unanswered_lines(conversation_id: uuid.UUID) -> list[Message]:
    """The conversation's inbound lines no turn has answered yet, oldest first."""
    return _UNANSWERED.all(conversation_id)


def lock_conversation(kind: str, key: str, **lookup: Any) -> Locked | None:
    """The conversation found by ``lookup``, locked for this claim, with whether its
    trigger already has a turn and whether a turn of it is active. One query. None for
    a vanished row.

    ``NOWAIT``: under READ COMMITTED a statement that waits for the row lock returns the
    row with its ``EXISTS`` columns computed from the snapshot taken *before* the wait —
    a turn claimed by the transaction it waited for would be invisible, and two turns of
    one conversation would decide at once. So a claim that finds the conversation locked
    (another claim or finish, a few milliseconds) comes back shortly instead:
    ``ClaimRefused``, with the trigger re-driven after the rollback."""
    try:
        if set(lookup) == {"messages__pk"}:  # an inbound turn's claim: the hot path
            found: Any = _LOCK_BY_MESSAGE.first(kind, key, lookup["messages__pk"])
        else:
            found = _lock_query(kind, key, **lookup).first()
    except OperationalError as error:
        if not isinstance(error.__cause__, LockNotAvailable):
            raise
        log.info("conversation locked, claim retried", extra={"trigger_key": key})
        raise ClaimRefused(redrive=(kind, key, LOCKED_RETRY_S)) from error
    if found is None:
        return None
    return Locked(
        conversation=found,
        already_turned=bool(found.already_turned),
        busy=bool(found.busy),
    )


def create_turn(
    conversation: Conversation, kind: str, key: str, now: datetime, *, merged: bool = False
) -> Claim:
    """Insert the turn of trigger ``key`` with this attempt's lease (or, ``merged``, done
    at once: the line was answered by another turn). ``ClaimRefused`` when a concurrent
    delivery of the same trigger inserted it first — the unique trigger settles the race
    quietly."""
    token = uuid.uuid4()
    fields: dict[str, Any] = {"claimed_at": now, "attempts": 1}
    if merged:
        fields.update(
            status=TurnStatus.DONE,
            outcome=TurnOutcome.MERGED,
            trace={"merged": True},
            latency_ms=0,
            finished_at=now,
        )
    else:
        fields.update(lease_token=token, lease_expires_at=now + lease_length())
    try:
        # A duplicate delivery that read ``already_turned`` before the first delivery
        # committed its turn: the claim ends (``ClaimRefused``), nothing of it written.
        turn = Turn.objects.create(
            organization_id=conversation.organization_id,
            conversation=conversation,
            trigger_kind=kind,
            trigger_key=key,
            **fields,
        )
    except IntegrityError as error:
        log.info(
            "duplicate turn delivery ignored",
            extra={
                "trigger_kind": kind,
                "trigger_key": key,
                "conversation_id": str(conversation.pk),
            },
        )
        raise ClaimRefused() from error
    return Claim(conversation=conversation, turn=turn, token=token)


def reclaim(conversation: Conversation, kind: str, key: str, now: datetime) -> Claim | None:
    """The trigger already has a turn: None when it is done (a redelivered task) or its
    lease is alive (another attempt owns it); else take it over (a new token)."""
    turn = Turn.objects.filter(trigger_kind=kind, trigger_key=key).first()
    if turn is None or turn.status not in ACTIVE_TURN_STATUSES:
        log.info(
            "turn already answered its trigger", extra={"trigger_kind": kind, "trigger_key": key}
        )
        return None
    if turn.lease_expires_at is not None and turn.lease_expires_at > now:
        return None
    token = uuid.uuid4()
    taken = Turn.objects.filter(pk=turn.pk, lease_token=turn.lease_token).update(
        status=TurnStatus.RUNNING,
        lease_token=token,
        lease_expires_at=now + lease_length(),
        claimed_at=now,
        attempts=F("attempts") + 1,
    )
    if not taken:
        return None
    exhausted = turn.attempts >= settings.TURN_MAX_ATTEMPTS
    turn.attempts += 1
    turn.status, turn.lease_token = TurnStatus.RUNNING, token
    turn.error_code = ""  # this attempt's own, if any (its trace keeps the last one's)
    log.warning(
        "turn taken over",
        extra={
            "turn_id": str(turn.pk),
            "conversation_id": str(conversation.pk),
            "attempts": turn.attempts,
            "exhausted": exhausted,
        },
    )
    return Claim(
        conversation=conversation, turn=turn, token=token, taken_over=True, exhausted=exhausted
    )


def wait_for_active_turn(conversation: Conversation, kind: str, key: str, now: datetime) -> None:
    """Another turn of the conversation is active: try again shortly — unless that turn
    waits for the model (``retry``: the sweeper brings this trigger back). An active
    turn whose lease ran out is re-driven now instead of at the next sweep."""
    active = (
        Turn.objects.filter(conversation=conversation, status__in=ACTIVE_TURN_STATUSES)
        .only("status", "lease_expires_at", "trigger_kind", "trigger_key")
        .first()
    )
    if active is None:
        redrive(kind, key)  # it finished meanwhile
        return
    if active.lease_expires_at is not None and active.lease_expires_at <= now:
        redrive(active.trigger_kind, active.trigger_key)
    if active.status == TurnStatus.RETRY:
        return
    redrive(kind, key, countdown=settings.TURN_BUSY_RETRY_S)


def finish(
    claim: Claim,
    *,
    outcome: str,
    trace: dict[str, Any],
    agent_version_id: uuid.UUID | None = None,
    error_code: str = "",
    status: str = TurnStatus.DONE,
    retry_at: datetime | None = None,
) -> Turn:
    """Record the turn's outcome under its claim — raises ``LeaseLost`` (call inside the
    transaction that writes the turn's effects, so they roll back with it). ``retry_at``
    with status ``retry``: the turn stays active and the sweeper re-drives it then."""
    turn = claim.turn
    now_ms = int((time.monotonic() - claim.started) * 1000)
    done = status != TurnStatus.RETRY
    finished_at = None if not done else _now()
    changes: dict[str, Any] = {
        "status": status,
        "outcome": outcome,
        "trace": trace,
        "latency_ms": now_ms,
        "finished_at": finished_at,
        "agent_version_id": agent_version_id,
        "error_code": error_code,
        "lease_expires_at": retry_at,
    }
    if not Turn.objects.filter(pk=turn.pk, lease_token=claim.token).update(**changes):
        raise LeaseLost(str(turn.pk))
    for name, value in changes.items():
        setattr(turn, name, value)
    log.info(
        "turn finished" if done else "turn will retry",
        extra={
            "turn_id": str(turn.pk),
            "conversation_id": str(turn.conversation_id),
            "outcome": outcome,
            "status": status,
            "latency_ms": now_ms,
        },
    )
    return turn


def release(claim: Claim) -> None:
    """The attempt failed unexpectedly: let the next delivery (a task retry, the sweeper)
    take the turn over now rather than after the lease. Best effort."""
    try:
        with transaction.atomic():
            Turn.objects.filter(pk=claim.turn.pk, lease_token=claim.token).update(
                lease_expires_at=_now()
            )
    except Exception:
        log.warning("turn lease not released", extra={"turn_id": str(claim.turn.pk)})


def claim_trigger(kind: str, key: str, now: datetime, **lookup: Any) -> Claim | None:
    """The claim of a turn with one trigger and no lines (a case reply, a follow-up)."""
    locked = lock_conversation(kind, key, **lookup)
    if locked is None:
        return None
    if locked.already_turned:
        return reclaim(locked.conversation, kind, key, now)
    if locked.busy:
        wait_for_active_turn(locked.conversation, kind, key, now)
        return None
    return create_turn(locked.conversation, kind, key, now)


def count_failed_claim(error: Exception, claim_again: Callable[[], object]) -> None:
    """The claim's transaction failed after its claim (a guard's bug on a malformed line, a
    case service's bug on one follow-up), rolling back the turn's insert or takeover: the
    attempt would count for nothing and the trigger be re-driven for ever. Claim again and
    give the lease back: the attempt counts, and past ``TURN_MAX_ATTEMPTS`` the turn goes to
    the team (``guards.attempts_exhausted``). Every turn's entry point calls it the same way,
    then re-raises."""
    if isinstance(error, OperationalError | InterfaceError | LeaseLost):
        return  # the database itself (the task's own retry comes back), or not ours any more
    try:
        with transaction.atomic():
            again = claim_again()
    except Exception:
        log.warning("failed turn attempt not counted", exc_info=True)
        return
    claim = again[0] if isinstance(again, tuple) else again  # an inbound claim: (it, lines)
    if isinstance(claim, Claim):
        release(claim)
        log.error("turn failed in its claim", extra={"turn_id": str(claim.turn.pk)})


def count_failed_trigger_claim(
    error: Exception, claim: Claim | None, kind: str, key: str, now: datetime
) -> None:
    """``count_failed_claim`` for a turn keyed by its trigger (a case reply, a follow-up):
    nothing to count when it failed before its claim."""
    if claim is not None:
        pk = claim.conversation.pk
        count_failed_claim(error, lambda: claim_trigger(kind, key, now, pk=pk))


def redrive(kind: str, key: str, *, countdown: float = 0.0) -> None:
    """Schedule the task of a turn's trigger (after commit)."""
    if kind == TriggerKind.INBOUND:
        enqueue(INBOUND_TASK, key, countdown=countdown)
    elif kind == TriggerKind.CASE_REPLY:
        enqueue(CASE_REPLY_TASK, key, countdown=countdown)
    else:
        enqueue(FOLLOW_UP_TASK, key, countdown=countdown)


def _now() -> datetime:
    return timezone.now()
