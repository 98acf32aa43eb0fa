"""Delivering one conversation's chain: claim → provider call → record, head after head.

The provider call runs between two short steps with no transaction open and no row
locked, under the short ``OUTBOX_PROVIDER_TIMEOUT_S``. Steps run in the conversation's
organization (``rls.tenant_context``: on PostgreSQL one short transaction each), which is
why the task does not use ``rls.runs_in_tenant_of`` (one transaction around the whole task).

Queries per delivered message: 3 (the head with its conversation, contact and channel;
the claim; the record, in a savepoint) — plus, per run, the organization lookup and the
final look at an empty chain. A channel recovering from failures adds the breaker's UPDATEs.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from datetime import datetime
from typing import Any

from django.db import InterfaceError, OperationalError, connection
from django.utils import timezone

from accounts import rls
from conversation.channels import get_adapter
from conversation.channels.base import (
    ChannelConfig,
    OutboundMedia,
    OutsideServiceWindow,
    SendError,
    SendResult,
)
from conversation.channels.media import OUTBOUND_KINDS
from conversation.channels.transport import provider_timeout
from conversation.dispatch import enqueue
from conversation.models import ChannelSession, Conversation, Message

from . import chain
from .policy import OutboxPolicy

log = logging.getLogger(__name__)

TASK = "conversation.deliver_outbox"
DEFAULT_TEMPLATE_LANGUAGE = "pt_BR"
# A chain longer than this is continued by a fresh task, so one run stays short.
MAX_PER_RUN = 50


def channel_config(channel: ChannelSession) -> ChannelConfig:
    return ChannelConfig(
        provider=channel.provider,  # type: ignore[arg-type]
        external_id=channel.external_id,
        api_base_url=channel.api_base_url,
        api_token=channel.api_token,
        webhook_secret=channel.webhook_secret,
        extra={
            "templates": channel.templates,
            "business_account_id": channel.business_account_id,
        },
    )


def deliver_conversation_outbox(conversation_id: str) -> dict[str, int]:
    """Deliver the conversation's chain in order until it is empty or must wait.

    Idempotent: a run that finds the head claimed, scheduled or already sent does nothing;
    a redelivered task never sends a message twice. Returns counts by outcome."""
    organization_id = rls.organization_of(Conversation, conversation_id)
    if organization_id is None:
        log.info("outbox conversation vanished", extra={"conversation_id": conversation_id})
        return {}
    policy = OutboxPolicy.current()
    counts: Counter[str] = Counter()
    for _ in range(MAX_PER_RUN):
        with rls.tenant_context(organization_id):
            step = chain.claim_head(conversation_id, timezone.now(), policy)
        if isinstance(step, chain.Stop):
            counts[step.reason] += 1
            _wake(conversation_id, step.wake_at)
            return dict(counts)
        if isinstance(step, chain.Expired):
            counts["failed"] += 1
            continue
        if isinstance(step, chain.Adopted):
            counts["sent"] += 1
            continue
        outcome = _send(step.message, policy)
        recorded, more = _record_outcome(organization_id, conversation_id, step, outcome, policy)
        counts[recorded.counter] += 1
        for other in recorded.wake:
            if other != conversation_id:
                enqueue(TASK, other)
        if recorded.retry_at is not None:
            _wake(conversation_id, recorded.retry_at)
            return dict(counts)
        if not more:  # what the next claim would have found: the chain is empty
            counts["idle"] += 1
            return dict(counts)
    enqueue(TASK, conversation_id, countdown=0.5)
    return dict(counts)


def _send(message: Message, policy: OutboxPolicy) -> SendResult | SendError:
    """The provider call. No database access in here."""
    conversation = message.conversation
    adapter = get_adapter(message.channel.provider)
    config = channel_config(message.channel)
    try:
        content = _uploaded(message)
    except FileNotFoundError:
        # The file staff uploaded is not in this worker's storage (a local MEDIA_ROOT on
        # another host, a bucket rule that removed it): retrying will not bring it back, and
        # the chain behind it must not wait hours for it. Staff see why and can send it again.
        log.error("outbound file not in storage", extra={"message_id": str(message.pk)})
        return SendError("uploaded file not found", retryable=False, code="media_unavailable")
    try:
        with provider_timeout(policy.provider_timeout_s):
            if message.template_name:
                language, parameters = template_call(message)
                return adapter.send_template(
                    config,
                    to=conversation.contact.phone,
                    template_name=message.template_name,
                    language=language,
                    parameters=parameters,
                )
            if message.kind in OUTBOUND_KINDS and (message.media_url or message.media_file):
                return adapter.send_media(
                    config,
                    to=conversation.contact.phone,
                    media=OutboundMedia(
                        kind=message.kind,
                        url=message.media_url,
                        caption=message.body,
                        filename=message.media_filename,
                        mime_type=message.media_mime,
                        content=content,
                    ),
                    last_inbound_at=conversation.customer_wrote_at,
                    now=timezone.now(),
                )
            return adapter.send_text(
                config,
                to=conversation.contact.phone,
                body=message.body,
                last_inbound_at=conversation.customer_wrote_at,
                now=timezone.now(),
            )
    except SendError as exc:
        return exc
    except Exception:
        # An adapter bug must not strand the claim until its lease lapses: count it as a
        # retryable failure (backoff, then the horizon) and keep the traceback.
        log.exception("outbound adapter error", extra={"message_id": str(message.pk)})
        return SendError("adapter error", retryable=True, code="adapter_error")


def _uploaded(message: Message) -> bytes:
    """The bytes of a file staff uploaded (storage, not the database); b"" for a link."""
    if message.media_url or not message.media_file:
        return b""
    with message.media_file.open("rb") as handle:
        return bytes(handle.read())


def template_call(message: Message) -> tuple[str, list[str]]:
    """The language and body parameters a template message is sent with.

    A message queued with its own language carries its parameters (``template_params``); an
    older one (the cases' follow-ups: a name and one text) takes the language of the channel's
    template of that name, else ``pt_BR``, and its body as the one parameter."""
    if message.template_language:
        return message.template_language, [str(p) for p in message.template_params or []]
    named = [
        e
        for e in message.channel.templates or []
        if isinstance(e, dict) and e.get("name") == message.template_name
    ]
    # The entry chosen for a purpose wins when the name exists in several languages.
    entry = next((e for e in named if e.get("purpose")), named[0] if named else {})
    language = str(entry.get("language") or "").strip() or DEFAULT_TEMPLATE_LANGUAGE
    return language, [message.body] if message.body else []


# A database error while recording what the provider said is retried after these pauses
# (well inside the delivery lease): the outcome exists only in this run's memory, and a
# send left ``sending`` is sent again once its lease lapses.
RECORD_RETRY_S = (0.2, 1.0, 3.0)


def _record_outcome(
    organization_id: Any,
    conversation_id: str,
    claim: chain.Claim,
    outcome: SendResult | SendError,
    policy: OutboxPolicy,
) -> tuple[chain.Recorded, bool]:
    """Record the provider's answer under the claim (and whether the chain has more)."""
    for pause in (*RECORD_RETRY_S, None):
        try:
            with rls.tenant_context(organization_id):
                now = timezone.now()
                recorded = _record(claim, outcome, now, policy)
                more = recorded.counter != "sent" or chain.has_pending(conversation_id, now, policy)
            return recorded, more
        except (OperationalError, InterfaceError):
            if pause is None:
                raise
            log.warning(
                "outbound outcome not recorded: database error, trying again",
                extra={"message_id": str(claim.message.pk), "conversation_id": conversation_id},
            )
            if not connection.in_atomic_block:
                connection.close_if_unusable_or_obsolete()  # reconnect on the next query
            time.sleep(pause)
    raise AssertionError("unreachable")


def _record(
    claim: chain.Claim, outcome: SendResult | SendError, now: datetime, policy: OutboxPolicy
) -> chain.Recorded:
    if isinstance(outcome, OutsideServiceWindow):
        return chain.record_refused(claim, outcome, now)
    if isinstance(outcome, SendError):
        return chain.record_failure(claim, outcome, now, policy)
    return chain.record_sent(claim, outcome, now, policy)


def _wake(conversation_id: str, at: datetime | None) -> None:
    """Look at the chain again at ``at`` (the sweeper re-drives it if this task is lost)."""
    if at is None:
        return
    enqueue(TASK, conversation_id, countdown=max((at - timezone.now()).total_seconds(), 0.01))
