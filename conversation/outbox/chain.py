"""One conversation's delivery chain: pick its head, claim it, record what the provider said.

Each function here is one short step, run by ``delivery`` inside the organization's
context (on PostgreSQL: its own short transaction). The provider call happens between
two steps, with no transaction open and no row locked: the claim is a conditional UPDATE
(``queued`` → ``sending`` with a lease), not a lock.

The chain is the conversation's outbound messages that are queued or sending, plus those
that ended ``failed`` at the retry horizon and are young enough to be re-sent
automatically, in ``queued_at`` order. Only its head is ever attempted: later messages
wait behind it, spending no attempts. A head tried before is first looked for among the
echoes of what the number sent (``_adopt_echo``): its answer may have been lost.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet

from accounts.db.compiled import CompiledQuery
from conversation.channels.base import SendError, SendResult
from conversation.models import (
    OUTBOX_IN_FLIGHT,
    ChannelSession,
    DeliveryFailure,
    Direction,
    Message,
    MessageStatus,
    SenderKind,
    TurnOutcome,
)

from . import breaker
from .policy import OutboxPolicy
from .writes import apply_early_status

log = logging.getLogger(__name__)

# The error code of an AI reply withheld because a person took the conversation over.
HUMAN_OWNS = "human_owns"
# Refusals about the channel, not the message (its credentials, its API URL): nothing of
# the channel can go out until an admin fixes it, so they count as the provider being down —
# the breaker holds the channel, the message waits (up to its horizon) and goes out after.
CHANNEL_REFUSALS = frozenset({"auth_failed", "invalid_config"})
# A scheduled retry this close is due: a task woken a little early (clocks of two hosts
# disagree) attempts now instead of leaving the chain to the sweeper.
EARLY = timedelta(seconds=1)


def resendable(now: datetime, policy: OutboxPolicy) -> Q:
    """Failed because the provider was down, and young enough to be re-sent by itself."""
    return _resendable_since(now - policy.resend_max_age)


def _resendable_since(since: datetime) -> Q:
    return Q(
        status=MessageStatus.FAILED,
        failure_reason=DeliveryFailure.RETRY_HORIZON,
        created_at__gte=since,
    )


def _failed(reason: str, code: str) -> dict[str, Any]:
    """The columns of a message failed for good: why, and no attempt due any more."""
    return {
        "status": MessageStatus.FAILED,
        "failure_reason": reason,
        "error_code": code,
        "next_attempt_at": None,
    }


@dataclass(frozen=True)
class Stop:
    """Nothing to attempt now. ``wake_at``: this run owns the chain's next look."""

    reason: str  # idle | busy | waiting | held | lost_race
    wake_at: datetime | None = None


@dataclass(frozen=True)
class Expired:
    """The head gave up at its horizon while the breaker held it; the chain moves on."""

    message_id: str


@dataclass(frozen=True)
class Adopted:
    """An earlier attempt of the head reached the provider (its echo came back): it is sent."""

    message_id: str


@dataclass(frozen=True)
class Claim:
    message: Message  # with conversation, contact and channel loaded
    attempt: int  # the message's ``attempts`` after this claim: the claim's token
    probe: bool  # this delivery is the breaker's half-open probe
    resend: bool  # an automatic resend of a message that had failed


@dataclass(frozen=True)
class Recorded:
    counter: str  # sent | retry | failed | refused | stale
    retry_at: datetime | None = None  # the chain looks again then
    wake: list[str] = field(default_factory=list)  # conversations the closed breaker resumes


def _head_query(conversation_id: Any, condition: Q) -> QuerySet[Message]:
    return (
        Message.objects.select_related("conversation__contact", "channel", "turn")
        .filter(condition, conversation_id=conversation_id, direction=Direction.OUTBOUND)
        .order_by("queued_at", "created_at", "id")
    )


def _head(conversation_id: str, condition: Q) -> Message | None:
    return _head_query(conversation_id, condition).first()


def _pending_since(since: datetime) -> Q:
    """In flight, or ``resendable`` (created after ``since``)."""
    return Q(status__in=OUTBOX_IN_FLIGHT) | _resendable_since(since)


# Every delivery asks both: compiled once per thread (accounts.db.compiled).
_SAMPLES = (uuid.UUID(int=1), datetime(2000, 1, 1, tzinfo=UTC))
_PENDING_HEAD = CompiledQuery(
    lambda conversation_id, since: _head_query(conversation_id, _pending_since(since))[:1],
    _SAMPLES,
)
_ANY_PENDING = CompiledQuery(
    lambda conversation_id, since: Message.objects.filter(
        _pending_since(since), conversation_id=conversation_id, direction=Direction.OUTBOUND
    ).only("pk")[:1],
    _SAMPLES,
)


def has_pending(conversation_id: str, now: datetime, policy: OutboxPolicy) -> bool:
    """Whether the chain has anything ``claim_head`` could take: one EXISTS, asked inside
    the transaction that recorded a send, so the common chain of one message ends there
    instead of in a transaction of its own that finds nothing."""
    return _ANY_PENDING.first(conversation_id, now - policy.resend_max_age) is not None


def claim_head(
    conversation_id: str, now: datetime, policy: OutboxPolicy
) -> Claim | Stop | Expired | Adopted:
    """Claim the head of the chain for one delivery attempt, or say why not.

    Queries: the head (with its conversation, contact and channel) and the claim UPDATE;
    one more to take the breaker's probe."""
    # What it looks at: in flight, or due to be (re)sent (``resendable``).
    head = _PENDING_HEAD.first(conversation_id, now - policy.resend_max_age)
    if head is None:
        return Stop("idle")
    stop = _not_due(head, now)
    if stop is not None:
        return stop
    if head.attempts and _adopt_echo(head, now):
        return Adopted(str(head.pk))
    if _withheld(head, now):
        return Expired(str(head.pk))
    probe = False
    door = breaker.gate(head.channel, now)
    if door is breaker.Gate.PROBE:
        probe = breaker.acquire_probe(head.channel_id, now, policy)
        if not probe:
            door = breaker.Gate.HELD
    if door is breaker.Gate.HELD:
        return _hold(conversation_id, head, now, policy)
    return _claim(head, now, policy, probe=probe)


def _withheld(head: Message, now: datetime) -> bool:
    """An AI reply to a conversation a person took over after its turn began (a staff member
    took it, a case was escalated while the model thought, the outbox was down meanwhile)
    is not sent: the customer was told a person has it. A turn that handed off itself still
    says its last words. Refused, with the reason, before any provider call."""
    if head.sender_kind != SenderKind.AI or not head.conversation.is_human_owned(now):
        return False
    if head.turn is not None and head.turn.outcome == TurnOutcome.HANDOFF:
        return False
    Message.objects.filter(pk=head.pk, status=head.status).update(
        status=MessageStatus.REFUSED, error_code=HUMAN_OWNS, next_attempt_at=None
    )
    log.info("outbound AI reply withheld: a person owns the conversation", extra=_ids(head))
    return True


def _adopt_echo(head: Message, now: datetime) -> bool:
    """An earlier attempt of ``head`` may have reached the provider with its answer lost (a
    timeout, a dropped connection, a worker killed mid-send, a database blink before the
    record). WAHA echoes whatever the number sends (``fromMe``), and the webhook stores the
    echo as a line typed on the business phone: an echo of the same text, written since the
    message was queued, is proof it went out. The message takes the echo's id and status and
    the echo's row goes (as in ``record_sent``), instead of the customer getting it twice.
    One query, on retries only."""
    if not head.body.strip():
        return False
    echo = (
        Message.objects.filter(
            conversation_id=head.conversation_id,
            direction=Direction.OUTBOUND,
            sender_kind=SenderKind.HUMAN,
            sent_by__isnull=True,
            kind=head.kind,
            body=head.body,
            created_at__gte=head.queued_at or head.created_at,
        )
        .exclude(pk=head.pk)
        .exclude(provider_message_id="")
        .order_by("created_at")
        .first()
    )
    if echo is None:
        return False
    with transaction.atomic():
        Message.objects.filter(pk=echo.pk).delete()  # frees the provider id for ours
        adopted = Message.objects.filter(
            pk=head.pk, status=head.status, attempts=head.attempts
        ).update(
            status=echo.status,
            provider_message_id=echo.provider_message_id,
            sent_at=echo.sent_at or now,
            error_code=echo.error_code,
            failure_reason=echo.failure_reason,
            next_attempt_at=None,
        )
        if not adopted:  # another run moved the head meanwhile: leave both rows as they were
            transaction.set_rollback(True)
            return False
    log.warning("outbound answer was lost but its echo came back: not sent again", extra=_ids(head))
    return True


def _not_due(head: Message, now: datetime) -> Stop | None:
    due = head.next_attempt_at
    if head.status == MessageStatus.SENDING and due is not None and due > now:
        return Stop("busy")  # another worker is delivering it
    if head.status == MessageStatus.QUEUED and due is not None and due > now + EARLY:
        return Stop("waiting")  # a retry is scheduled; its task continues the chain
    return None


def _hold(
    conversation_id: str, head: Message, now: datetime, policy: OutboxPolicy
) -> Stop | Expired:
    """The breaker holds the channel: the head waits without spending an attempt, gives up
    at its horizon, and this run owns one wake-up for the chain."""
    if head.status == MessageStatus.FAILED:
        # Re-sending waits for the channel; what is queued behind still ages.
        queued = _head(conversation_id, Q(status__in=OUTBOX_IN_FLIGHT))
        if queued is None:
            return Stop("held")  # the breaker's close (or the sweeper) re-drives it
        head = queued
        stop = _not_due(head, now)
        if stop is not None:
            return stop
    still = Q(pk=head.pk, status=head.status)
    still &= (
        Q(next_attempt_at__isnull=True)
        if head.next_attempt_at is None
        else Q(next_attempt_at=head.next_attempt_at)
    )
    if head.retry_until is not None and now >= head.retry_until:
        Message.objects.filter(still).update(
            **_failed(DeliveryFailure.RETRY_HORIZON, head.error_code or "circuit_open")
        )
        log.warning("outbound gave up at the retry horizon", extra=_ids(head))
        return Expired(str(head.pk))
    wake = policy.breaker_wake(breaker.held_until(head.channel, now, policy))
    if head.retry_until is not None:
        wake = min(wake, head.retry_until)  # give up at the horizon, not at the cool-down's end
    owned = Message.objects.filter(still).update(status=MessageStatus.QUEUED, next_attempt_at=wake)
    return Stop("held", wake_at=wake if owned else None)


def _claim(head: Message, now: datetime, policy: OutboxPolicy, *, probe: bool) -> Claim | Stop:
    resend = head.status == MessageStatus.FAILED
    still = Q(pk=head.pk, status=head.status)
    if head.status == MessageStatus.FAILED:
        still &= Q(failure_reason=DeliveryFailure.RETRY_HORIZON)
    elif head.status == MessageStatus.QUEUED:
        still &= Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now + EARLY)
    else:  # sending with a lapsed lease: its worker died
        still &= Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    changes: dict[str, Any] = {
        "status": MessageStatus.SENDING,
        "next_attempt_at": now + policy.lease,
        "attempts": F("attempts") + 1,
    }
    if resend or head.retry_until is None:
        # An automatic resend starts a new round at the same place in the chain.
        changes.update(retry_until=now + policy.horizon, failure_reason="")
    if not Message.objects.filter(still).update(**changes):
        if probe:
            breaker.release_probe(head.channel_id, now)
        return Stop("lost_race")  # another run claimed it first and owns the chain
    if head.status == MessageStatus.SENDING:
        log.warning("outbound delivery lease lapsed; sending again", extra=_ids(head))
    elif resend:
        log.info("outbound re-sent after the channel recovered", extra=_ids(head))
    head.attempts += 1
    head.status = MessageStatus.SENDING
    head.retry_until = changes.get("retry_until", head.retry_until)
    return Claim(message=head, attempt=head.attempts, probe=probe, resend=resend)


def record_sent(claim: Claim, result: SendResult, now: datetime, policy: OutboxPolicy) -> Recorded:
    """The provider took the message. Queries: the UPDATE (in a savepoint); on a channel
    that had failed, the breaker's, and on its close the resume."""
    message = claim.message
    changes = {
        "status": result.status,
        "provider_message_id": result.provider_message_id,
        "sent_at": now,
        "error_code": "",
        "failure_reason": "",
        "next_attempt_at": None,
    }
    try:
        with transaction.atomic():
            updated = _claimed(claim).update(**changes)
    except IntegrityError:
        # The provider's echo of this very send (WAHA ``fromMe``, often posted before the
        # send's HTTP answer) was stored first under the same id, as a line typed on the
        # business phone: it is this message. The echo's row goes; ours keeps the id, so its
        # delivery receipts find it and the history holds the reply once, as the AI's.
        log.info("outbound echo stored first: merged into the send", extra=_ids(message))
        try:
            with transaction.atomic():
                Message.objects.filter(
                    channel_id=message.channel_id,
                    provider_message_id=result.provider_message_id,
                    direction=Direction.OUTBOUND,
                    sender_kind=SenderKind.HUMAN,
                    sent_by__isnull=True,
                ).exclude(pk=message.pk).delete()
                updated = _claimed(claim).update(**changes)
        except IntegrityError:
            # Another of our messages holds the id (an echo adopted by the wrong send, by
            # its text). The provider took this one: it is sent, under no id, rather than
            # left ``sending`` and sent again each time its lease lapses.
            log.warning("outbound sent under an id another message holds", extra=_ids(message))
            with transaction.atomic():
                updated = _claimed(claim).update(**{**changes, "provider_message_id": ""})
    if not updated:
        log.warning("outbound claim lost while sending (lease lapsed)", extra=_ids(message))
        return Recorded("stale")
    apply_early_status(message.channel, result.provider_message_id)
    wake: list[str] = []
    if breaker.record_success(message.channel):
        wake = resume_channel(message.channel, now, policy)
    return Recorded("sent", wake=wake)


def record_failure(claim: Claim, error: SendError, now: datetime, policy: OutboxPolicy) -> Recorded:
    """The provider did not take it: back off (retryable, or the channel refused), or fail
    it for good."""
    message = claim.message
    ours = _claimed(claim)
    code = error.code[:64]
    if not error.retryable and error.code not in CHANNEL_REFUSALS:
        # The provider answered (invalid number, bad request): the channel is up, the message
        # is not. (Auth and config refusals are the channel's: ``CHANNEL_REFUSALS`` above.)
        ours.update(**_failed(DeliveryFailure.REJECTED, code))
        log.error("outbound rejected by the provider", extra={**_ids(message), "code": code})
        wake = (
            resume_channel(message.channel, now, policy)
            if breaker.record_success(message.channel)
            else []
        )
        return Recorded("failed", wake=wake)
    retry_at = policy.next_attempt(now, claim.attempt, message.retry_until)
    breaker.record_failure(message.channel, now, policy, give_up=retry_at is None)
    if retry_at is None:
        ours.update(**_failed(DeliveryFailure.RETRY_HORIZON, code))
        log.error("outbound gave up at the retry horizon", extra={**_ids(message), "code": code})
        return Recorded("failed")
    ours.update(status=MessageStatus.QUEUED, error_code=code, next_attempt_at=retry_at)
    log.warning("outbound delivery failed, will retry", extra={**_ids(message), "code": code})
    return Recorded("retry", retry_at=retry_at)


def record_refused(claim: Claim, error: SendError, now: datetime) -> Recorded:
    """Refused before any call (the 24-hour window is closed): final, the chain moves on."""
    _claimed(claim).update(
        status=MessageStatus.REFUSED, error_code=error.code[:64], next_attempt_at=None
    )
    if claim.probe:
        breaker.release_probe(claim.message.channel_id, now)
    log.info("outbound refused: service window closed", extra=_ids(claim.message))
    return Recorded("refused")


def resume_channel(channel: ChannelSession, now: datetime, policy: OutboxPolicy) -> list[str]:
    """The breaker closed: every chain of the channel is due now, re-sends included.
    Returns the conversations to wake."""
    outbound = Message.objects.filter(channel=channel, direction=Direction.OUTBOUND)
    outbound.filter(status=MessageStatus.QUEUED, next_attempt_at__isnull=False).update(
        next_attempt_at=None
    )
    waiting = outbound.filter(Q(status=MessageStatus.QUEUED) | resendable(now, policy))
    ids = waiting.order_by().values_list("conversation_id", flat=True).distinct()
    return [str(pk) for pk in ids]


def _claimed(claim: Claim) -> Any:
    """The message, still under this claim (the lease was not re-taken by another run)."""
    return Message.objects.filter(
        pk=claim.message.pk, status=MessageStatus.SENDING, attempts=claim.attempt
    )


def _ids(message: Message) -> dict[str, str]:
    return {"message_id": str(message.pk), "conversation_id": str(message.conversation_id)}
