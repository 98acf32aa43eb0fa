"""Webhook endpoints: authenticate, validate, deduplicate, rate-limit, store.

Nothing a webhook sends can name an organization: the channel id in the URL does. Its
organization is read through the one narrow door of the tenant walls
(``rls.organization_of``), and everything after runs inside that organization's context;
the channel's own secret authenticates the body.

Order, cheapest refusal first: unknown channel (404) → declared size over the cap (413,
nothing read) → body read with the cap → signature (401; a flood of bad signatures
answers 429 on its own budget, so it cannot starve the real provider) → the channel's
rate limit (429) → payload validation (400) → store, deduplicated by provider message id.

Payload content never makes a webhook answer 5xx. Adapters clean every string (NUL, lone
surrogates) and refuse, one event at a time, what storage cannot hold (an id or a phone
longer than its column) or what is addressed to another business number (Meta
``phone_number_id``, WAHA ``session`` ≠ the channel's ``external_id``). When a body carries
several events each valid one is stored on its own savepoint, so a refused or unstorable
event never blocks the valid ones of the same body (a body of one needs none). A valid
event the product leaves alone on purpose (a group chat's message: agents answer one
customer per chat) is logged with ids and stored as nothing. The answer is 200 when at
least one event was accepted or ignored, 400 with the first refusal's code when the body
carried events and none was acceptable, and 200 for a body with nothing to do (an event
type we ignore). A concurrent delivery of the same event counts as a duplicate; other
concurrency errors (``IntegrityError``, ``OperationalError``) are not payload content: they
still surface so the provider redelivers.
"""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django.db import DataError, transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from accounts import rls
from accounts.db.compiled import CompiledQuery
from accounts.throttle import hit
from conversation.channels import get_adapter
from conversation.channels.base import (
    ChannelAdapter,
    IgnoredEvent,
    ParsedWebhook,
    RejectedEvent,
    SignatureError,
    WebhookError,
    log_id,
)
from conversation.channels.meta import verify_subscription
from conversation.inbound import DuplicateDelivery, ReceiveResult, webhook_receive
from conversation.llm.lru import LruCache
from conversation.models import ChannelSession, Provider

log = logging.getLogger(__name__)

# Failed signature checks a channel tolerates per minute before answering 429.
BAD_SIGNATURES_PER_MINUTE = 30

# channel id → its organization, for the channels this process has seen. Safe to keep:
# a row's organization never changes and ids are never reused, and only found channels are
# kept — the lookup inside the tenant context still answers 404 for one deleted or switched
# off since. It saves the narrow door's round trip on every webhook of a known number.
_channel_organizations: LruCache[uuid.UUID, uuid.UUID] = LruCache(10_000)


def _active_channel(channel_id: uuid.UUID, provider: str) -> QuerySet[ChannelSession]:
    return ChannelSession.objects.filter(pk=channel_id, provider=provider, is_active=True)[:1]


# Read on every webhook (a switched-off number answers 404 at once): compiled once per thread.
_CHANNEL = CompiledQuery(_active_channel, (uuid.UUID(int=1), "sample-provider"))


def _organization_of_channel(channel_id: uuid.UUID) -> uuid.UUID | None:
    organization_id = _channel_organizations.get(channel_id)
    if organization_id is None:
        organization_id = rls.organization_of(ChannelSession, channel_id)
        if organization_id is not None:
            _channel_organizations.put(channel_id, organization_id)
    return organization_id


def error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def body_cap() -> int:
    """The largest body a webhook reads: its own cap, never above Django's upload cap."""
    cap = int(settings.WEBHOOK_MAX_BODY_BYTES)
    upload_cap = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return min(cap, int(upload_cap)) if upload_cap is not None else cap


def read_capped_body(request: HttpRequest, cap: int) -> bytes | None:
    """The request body, or None when it is larger than ``cap`` — decided from
    Content-Length before reading, and by reading at most ``cap + 1`` bytes after."""
    declared = request.META.get("CONTENT_LENGTH") or "0"
    try:
        length = int(declared)
    except ValueError:
        return None
    if length > cap or length < 0:
        return None
    body = request.read(cap + 1)
    return None if len(body) > cap else body


@csrf_exempt
def webhook(request: HttpRequest, provider: str, channel_id: uuid.UUID) -> HttpResponse:
    if request.method not in ("GET", "POST"):
        response = error(405, "method_not_allowed", "Use POST.")
        response["Allow"] = "GET, POST"
        return response
    if provider not in Provider.values:
        return error(404, "channel_not_found", "Canal desconhecido ou inativo.")
    organization_id = _organization_of_channel(channel_id)
    if organization_id is None:
        return error(404, "channel_not_found", "Canal desconhecido ou inativo.")
    with rls.tenant_context(organization_id):
        channel = _CHANNEL.first(channel_id, provider)
        if channel is None:
            return error(404, "channel_not_found", "Canal desconhecido ou inativo.")
        if request.method == "GET":
            if not _within_rate(channel):
                return error(429, "rate_limited", "Muitas requisições para este canal.")
            return _meta_subscription(request, channel)
        return _receive(request, channel)


def _within_rate(channel: ChannelSession) -> bool:
    return hit(f"webhook:{channel.pk}", limit=settings.WEBHOOK_RATE_LIMIT_PER_MINUTE, window_s=60)


def _receive(request: HttpRequest, channel: ChannelSession) -> HttpResponse:
    ids = {"channel_id": str(channel.pk), "provider": channel.provider}
    body = read_capped_body(request, body_cap())
    if body is None:
        log.info("webhook body too large", extra=ids)
        return error(413, "payload_too_large", "Corpo da requisição grande demais.")
    adapter = get_adapter(channel.provider)
    try:
        adapter.verify_signature(
            headers=dict(request.headers), body=body, secret=channel.webhook_secret
        )
    except SignatureError:
        log.warning("webhook signature rejected", extra=ids)
        if not hit(f"webhook-bad:{channel.pk}", limit=BAD_SIGNATURES_PER_MINUTE, window_s=60):
            return error(429, "rate_limited", "Muitas requisições para este canal.")
        return error(401, "invalid_signature", "Assinatura inválida.")
    if not _within_rate(channel):
        log.warning("webhook rate limited", extra=ids)
        return error(429, "rate_limited", "Muitas requisições para este canal.")
    try:
        parsed = adapter.parse_webhook(body)
    except WebhookError as exc:
        log.info("webhook payload rejected", extra={**ids, "code": exc.code})
        return error(400, exc.code, exc.message)
    parsed = _for_this_number(adapter, channel, parsed, ids)
    for rejected in parsed.rejected:
        _log_rejected(rejected, ids)
    for ignored in parsed.ignored:
        _log_ignored(ignored, ids)
    result, unstorable = _store_each(channel, parsed, ids)
    refusals = [*parsed.rejected, *unstorable]
    if refusals and parsed.accepted == len(unstorable) and not parsed.ignored:
        # Every event of the body was refused: say why; a partly good body answers 200.
        return error(400, refusals[0].code, refusals[0].reason)
    answer: dict[str, object] = {
        "ok": True,
        "stored": result.stored,
        "duplicates": result.duplicates,
        "statuses": result.statuses,
    }
    if parsed.ignored:
        answer["ignored"] = len(parsed.ignored)
    if refusals:
        answer["rejected"] = len(refusals)
    return JsonResponse(answer)


def _for_this_number(
    adapter: ChannelAdapter, channel: ChannelSession, parsed: ParsedWebhook, ids: dict[str, str]
) -> ParsedWebhook:
    """Refuse the events addressed to another business number than this channel's."""
    if not adapter.addresses_channel:
        return parsed
    if not channel.external_id.strip():
        # Nothing to compare with; such a channel cannot send either (the adapters refuse
        # ``invalid_config``), so this is a channel still being set up.
        if parsed.accepted:
            log.warning("webhook number not checked: channel has no external id", extra=ids)
        return parsed
    return parsed.addressed_to(channel.external_id)


def _log_rejected(rejected: RejectedEvent, ids: dict[str, str]) -> None:
    extra = {
        **ids,
        "code": rejected.code,
        "where": rejected.where,
        "provider_message_id": rejected.event_id,
    }
    if rejected.code == "wrong_channel":
        # Two numbers mixed up (a webhook URL pasted on the wrong number): an operator's problem.
        log.warning("webhook event for another number refused", extra=extra)
    else:
        log.info("webhook event rejected", extra=extra)


def _log_ignored(ignored: IgnoredEvent, ids: dict[str, str]) -> None:
    # Ids only: never the message's text, nor the participant's number.
    log.info(
        "webhook event ignored",
        extra={
            **ids,
            "code": ignored.code,
            "where": ignored.where,
            "provider_message_id": ignored.event_id,
            "chat_id": ignored.chat_id,
        },
    )


def _store_each(
    channel: ChannelSession, parsed: ParsedWebhook, ids: dict[str, str]
) -> tuple[ReceiveResult, list[RejectedEvent]]:
    """Store every accepted event on its own savepoint inside the request's tenant
    transaction, so one that the database still refuses rolls back alone. A body of one
    event (nearly every real delivery) needs none: if it fails there is nothing to keep,
    and the transaction rolls back whole — two round trips fewer per webhook. Only content
    errors are caught: a value the database cannot hold (``DataError``, or the driver's
    ``ValueError`` for text it cannot encode)."""
    total = ReceiveResult()
    unstorable: list[RejectedEvent] = []
    singles = [
        ("message", m.provider_message_id, ParsedWebhook(messages=(m,))) for m in parsed.messages
    ]
    singles += [
        ("status", s.provider_message_id, ParsedWebhook(statuses=(s,))) for s in parsed.statuses
    ]
    isolate = len(singles) > 1
    for kind, provider_message_id, single in singles:
        try:
            with transaction.atomic(savepoint=isolate):
                # Alone in the request's transaction (one event), the insert needs no
                # savepoint: losing a race to a concurrent delivery dooms a transaction
                # that holds nothing else.
                result = webhook_receive(channel=channel, parsed=single, savepoints=isolate)
        except DuplicateDelivery:
            total.duplicates += 1
            continue
        except (DataError, ValueError) as exc:
            event_id = log_id(provider_message_id)
            log.error(
                "webhook event could not be stored",
                extra={**ids, "provider_message_id": event_id, "error": type(exc).__name__},
            )
            unstorable.append(
                RejectedEvent(
                    code="unstorable_event",
                    reason="the event holds a value that cannot be stored",
                    where=kind,
                    event_id=event_id,
                )
            )
            continue
        total.stored += result.stored
        total.duplicates += result.duplicates
        total.ignored += result.ignored
        total.statuses += result.statuses
    return total, unstorable


def _meta_subscription(request: HttpRequest, channel: ChannelSession) -> HttpResponse:
    """Meta's GET verification handshake: echo ``hub.challenge`` as plain text."""
    if channel.provider != "meta":
        return error(405, "method_not_allowed", "Use POST.")
    try:
        query = {key: str(request.GET.get(key, "")) for key in request.GET}
        challenge = verify_subscription(query, verify_token=channel.webhook_verify_token)
    except SignatureError:
        return error(403, "invalid_verify_token", "Token de verificação inválido.")
    except WebhookError as exc:
        return error(400, exc.code, exc.message)
    return HttpResponse(challenge, content_type="text/plain")
