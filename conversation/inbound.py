"""Storing what a webhook brings: inbound messages (deduplicated) and status callbacks."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, QuerySet, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from accounts.db.compiled import CompiledQuery
from accounts.services import audit_log_write
from conversation.channels.base import InboundMessage, ParsedWebhook, customer_wrote_at
from conversation.channels.media import columns_for
from conversation.channels.transport import UNKNOWN_ID_PREFIX
from conversation.dispatch import enqueue
from conversation.models import (
    ChannelSession,
    Contact,
    Conversation,
    ConversationStatus,
    Direction,
    Message,
    MessageStatus,
    SenderKind,
)
from conversation.outbox import outbound_status_update

log = logging.getLogger(__name__)

# How long after our send its echo may still come to adopt the id (the echo is near-instant).
ECHO_ADOPTION_WINDOW = timedelta(hours=1)


@dataclass
class ReceiveResult:
    stored: int = 0
    duplicates: int = 0
    ignored: int = 0
    statuses: int = 0


def _open_conversation(channel: ChannelSession, contact: Contact) -> Conversation | None:
    return (
        Conversation.objects.filter(channel=channel, contact=contact)
        .exclude(status=ConversationStatus.CLOSED)
        .first()
    )


def _reopen_resolved(channel: ChannelSession, contact: Contact) -> Conversation | None:
    """The customer writes again after staff resolved the conversation (inbox): the same
    conversation reopens — to the AI, or to the team if a human still owns it — instead of
    a new one starting. A conditional update: of two racing deliveries one reopens it."""
    last = (
        Conversation.objects.filter(
            channel=channel,
            contact=contact,
            status=ConversationStatus.CLOSED,
            resolved_at__isnull=False,
        )
        .order_by("-resolved_at")
        .first()
    )
    if last is None:
        return None
    last.contact = contact
    status = ConversationStatus.PENDING if last.is_human_owned() else ConversationStatus.AI_HANDLING
    try:
        with transaction.atomic():  # a savepoint, as below
            reopened = Conversation.objects.filter(
                pk=last.pk, status=ConversationStatus.CLOSED
            ).update(status=status)
    except IntegrityError:  # another conversation of this contact opened meanwhile
        reopened = 0
    if not reopened:
        return _open_conversation(channel, contact)
    last.status = status
    audit_log_write(
        actor=None,
        action="conversation.reopen",
        resource=last,
        diff={"status": [ConversationStatus.CLOSED.value, status.value]},
        actor_kind="system",
    )
    return last


def open_conversation_for(
    channel: ChannelSession, contact: Contact, *, reopen: bool = False, none_open: bool = False
) -> Conversation:
    """The contact's open conversation on ``channel``: found, reopened or created.
    ``none_open``: the caller has just looked and found none (no second look)."""
    conversation = None if none_open else _open_conversation(channel, contact)
    if conversation is not None:
        return conversation
    if reopen and (reopened := _reopen_resolved(channel, contact)) is not None:
        return reopened
    try:
        # A savepoint: losing the race to ``uniq_open_conversation`` must not break the
        # webhook's transaction (PostgreSQL aborts it on any error otherwise).
        with transaction.atomic():
            return Conversation.objects.create(
                organization_id=channel.organization_id, channel=channel, contact=contact
            )
    except IntegrityError:
        # A concurrent first message of this contact on this channel opened it first; its
        # insert had to commit for ours to fail, so it is visible now.
        conversation = _open_conversation(channel, contact)
        if conversation is None:
            raise
        return conversation


class DuplicateDelivery(Exception):
    """A concurrent delivery of the same event stored it first, and ``webhook_receive`` ran
    with ``savepoints=False``: the caller's transaction is doomed; it stored nothing."""


def webhook_receive(
    *, channel: ChannelSession, parsed: ParsedWebhook, savepoints: bool = True
) -> ReceiveResult:
    """Store every new inbound message and schedule its turn; apply statuses.

    All or nothing: a failure stores nothing of ``parsed``. Inside a transaction it joins
    it without a savepoint of its own (the webhook gives each event one only when a body
    carries several, ``webhooks._store_each``), so a failure dooms that transaction. A
    redelivered event (same provider message id on this channel) stores nothing new and
    starts no turn.

    Two deliveries of one event at the same instant both pass the duplicate check; the
    insert of the second fails on ``uniq_provider_message``. By default that insert runs on
    a savepoint and the event counts as a duplicate. ``savepoints=False`` — for a caller
    whose transaction holds this one event and nothing else (two round trips fewer per
    webhook) — raises ``DuplicateDelivery`` instead.
    """
    result = ReceiveResult()
    with transaction.atomic(savepoint=False):
        for inbound in parsed.messages:
            message = _store_inbound(channel, inbound, result, savepoint=savepoints)
            if message is not None and message.direction == Direction.INBOUND:
                # At once, not after the burst window: the turn's claim reads the window
                # from the lines' stored times and, while the burst is still open, schedules
                # one re-check for when it closes (conversation.turns.burst). Under a
                # backlog the task runs late, finds the burst closed and answers it — no
                # task waits in a worker for its ETA.
                enqueue("conversation.run_inbound_turn", str(message.pk))
        for status in parsed.statuses:
            if outbound_status_update(
                channel=channel,
                provider_message_id=status.provider_message_id,
                status=status.status,
                error=status.error,
            ):
                result.statuses += 1
    return result


def _already_stored(channel_id: uuid.UUID, provider_message_id: str) -> QuerySet[Message]:
    return Message.objects.filter(channel_id=channel_id, provider_message_id=provider_message_id)


def _known_lookup(
    channel_id: uuid.UUID, organization_id: uuid.UUID, phone: str, provider_message_id: str
) -> QuerySet[Conversation]:
    """The sender's open conversation with its contact, and whether this event is stored.

    The contact's organization too: the lookup then starts from ``uniq_contact_phone`` (one
    row) whatever the planner's statistics say."""
    stored = _already_stored(channel_id, provider_message_id)
    return (
        Conversation.objects.filter(
            channel_id=channel_id, contact__organization_id=organization_id, contact__phone=phone
        )
        .exclude(status=ConversationStatus.CLOSED)
        .select_related("contact")
        .annotate(event_stored=Exists(stored))[:1]
    )


# Every webhook of a customer writing again runs it: compiled once per thread.
_KNOWN = CompiledQuery(_known_lookup, (uuid.UUID(int=1), uuid.UUID(int=2), "+0", "sample-id"))


def _message_times(inbound: InboundMessage) -> dict[str, datetime]:
    """The columns of a conversation its first message sets: its last message and, when the
    customer wrote it, its last inbound one (both when it arrived: the list's order, what
    "answered since" means) and when the customer wrote it (``customer_wrote_at``): a message
    delivered late after a provider outage must not open WhatsApp's 24-hour window from its
    delivery."""
    now = timezone.now()
    if inbound.from_me:
        return {"last_message_at": now}
    wrote = customer_wrote_at(inbound.timestamp, now)
    return {"last_message_at": now, "last_inbound_at": now, "customer_wrote_at": wrote}


def _move_times(conversation: Conversation, inbound: InboundMessage) -> None:
    """Move the conversation's times for one more message, in one statement. When the
    customer wrote never goes back (a late line written before the newest one leaves it),
    also against a concurrent delivery: the database keeps the greater of the two."""
    times = _message_times(inbound)
    wrote = times.get("customer_wrote_at")
    columns: dict[str, Any] = dict(times)
    if wrote is not None:
        columns["customer_wrote_at"] = Greatest(
            Coalesce("customer_wrote_at", Value(wrote)), Value(wrote)
        )
        if conversation.customer_wrote_at is not None:
            times["customer_wrote_at"] = max(conversation.customer_wrote_at, wrote)
    Conversation.objects.filter(pk=conversation.pk).update(**columns)
    for field, value in times.items():  # what the row now holds, unless a concurrent one won
        setattr(conversation, field, value)


def _conversation_of(
    channel: ChannelSession, inbound: InboundMessage
) -> tuple[Conversation | None, bool]:
    """The sender's open conversation on this channel — or a new or reopened one — and None
    when the event is already stored; and whether the conversation was created here with
    this message's times (nothing to update after the message).

    A customer writing again (the common case) costs one query: their open conversation, its
    contact, and whether this event is a redelivery. A first-time customer costs the contact's
    get-or-create and one insert: a contact this transaction created has no stored message,
    no resolved conversation to reopen, and no open one another delivery could race to
    create (nobody else sees the contact before this transaction commits; a concurrent first
    message of the same phone waits on the contact's unique index, then finds it)."""
    phone, new_lid = inbound.from_phone, ""
    if inbound.from_lid:  # WAHA only; the common payload costs nothing more
        phone, new_lid = _phone_of_lid(channel.organization_id, phone, inbound.from_lid)
    known: Any = _KNOWN.first(
        channel.pk, channel.organization_id, phone, inbound.provider_message_id
    )
    if known is not None:
        return (None if known.event_stored else known), False
    contact, created = Contact.objects.get_or_create(
        organization_id=channel.organization_id,
        phone=phone,
        defaults={"name": inbound.from_name[:120], "whatsapp_lid": new_lid},
    )
    if created:
        conversation = Conversation.objects.create(
            organization_id=channel.organization_id,
            channel=channel,
            contact=contact,
            **_message_times(inbound),
        )
        return conversation, True
    if _already_stored(channel.pk, inbound.provider_message_id).exists():
        return None, False
    reopen = not inbound.from_me
    return open_conversation_for(channel, contact, reopen=reopen, none_open=True), False


def _phone_of_lid(organization_id: uuid.UUID, phone: str, lid: str) -> tuple[str, str]:
    """The phone that keys the contact of a WhatsApp ``lid`` (linking the two on the way),
    and the lid a contact created for that phone should carry ("" when another holds it).

    WhatsApp is moving to hidden ids: an engine sends the lid with the phone only sometimes.
    Keyed by what each payload happened to carry, one customer became two contacts, and one
    a person had taken over (``force_human``) got the bot again on the other. So: a payload
    with the lid only reaches the contact the lid was seen with; one with both records the lid
    on the phone's contact — or, for a contact first seen by lid alone, gives it its phone."""
    linked = (
        Contact.objects.filter(organization_id=organization_id, whatsapp_lid=lid)
        .only("pk", "phone")
        .first()
    )
    if linked is None:
        if phone != lid:  # the phone's contact, if it exists, learns its lid
            Contact.objects.filter(
                organization_id=organization_id, phone=phone, whatsapp_lid=""
            ).update(whatsapp_lid=lid)
        return phone, lid
    if phone == lid:  # only the lid: the contact it was seen with
        return linked.phone, ""
    if (
        linked.phone == lid
        and not Contact.objects.filter(organization_id=organization_id, phone=phone).exists()
    ):
        Contact.objects.filter(pk=linked.pk).update(phone=phone)  # first seen by lid alone
    return phone, ""


def _adopted_by_our_send(conversation: Conversation, inbound: InboundMessage) -> bool:
    """The echo of one of our sends that the provider accepted without telling its id
    (WAHA answering 201 with no body: stored under a local ``unknown-`` id): that send takes
    the echo's id (its receipts then find it) and no second row is written."""
    recent = timezone.now() - ECHO_ADOPTION_WINDOW
    ours = (
        Message.objects.filter(
            conversation=conversation,
            direction=Direction.OUTBOUND,
            provider_message_id__startswith=UNKNOWN_ID_PREFIX,
            body=inbound.body,
            created_at__gte=recent,
        )
        .order_by("-created_at")
        .values_list("pk", flat=True)
        .first()
    )
    if ours is None:
        return False
    return bool(
        Message.objects.filter(pk=ours, provider_message_id__startswith=UNKNOWN_ID_PREFIX).update(
            provider_message_id=inbound.provider_message_id
        )
    )


def _store_inbound(
    channel: ChannelSession, inbound: InboundMessage, result: ReceiveResult, *, savepoint: bool
) -> Message | None:
    conversation, fresh = _conversation_of(channel, inbound)
    if conversation is None:
        result.duplicates += 1  # a redelivery, or the echo of a message we sent
        return None
    if inbound.from_me:
        if _adopted_by_our_send(conversation, inbound):
            result.duplicates += 1  # the echo of a send whose id the provider did not tell
            return None
        # Someone typed on the business phone itself: keep it in the history, no turn.
        direction, sender, status = Direction.OUTBOUND, SenderKind.HUMAN, MessageStatus.SENT
    else:
        direction, sender, status = Direction.INBOUND, SenderKind.CUSTOMER, MessageStatus.RECEIVED
    try:
        with transaction.atomic(savepoint=savepoint):
            message = Message.objects.create(
                organization_id=channel.organization_id,
                conversation=conversation,
                channel=channel,
                direction=direction,
                sender_kind=sender,
                body=inbound.body,
                kind=inbound.kind,
                provider_message_id=inbound.provider_message_id,
                reply_to=inbound.reply_to,
                status=status,
                sent_at=inbound.timestamp if inbound.from_me else None,
                **columns_for(inbound.media),
            )
    except IntegrityError as exc:  # a concurrent delivery of the same event won the race
        if not savepoint:
            raise DuplicateDelivery from exc
        result.duplicates += 1
        return None
    if not fresh:
        _move_times(conversation, inbound)
    result.stored += 1
    log.info(
        "inbound stored",
        extra={
            "message_id": str(message.pk),
            "conversation_id": str(conversation.pk),
            "channel_id": str(channel.pk),
            "from_me": inbound.from_me,
        },
    )
    return message
