"""Webhook endpoints: authenticate, validate, deduplicate, rate-limit, store.

Nothing a webhook sends can name an organization: the channel id in the URL does. Its
organization is read through the one narrow door of the tenant walls
(``rls.organization_of``), and everything after runs inside that organization's context;
the channel's own secret authenticates the body.

Order, cheapest refusal first: unknown channel (404) → declared size over the cap (413,
nothing read) → body read with the cap → signature (401; a flood of bad signatures
answers 429 on its own budget, so it cannot starve the real provider) → the channel's
rate limit (429) → payload validation (400) → store, deduplicated by provider message id.
"""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from accounts import rls
from accounts.throttle import hit
from conversation.channels import get_adapter
from conversation.channels.base import SignatureError, WebhookError
from conversation.channels.meta import verify_subscription
from conversation.inbound import webhook_receive
from conversation.models import ChannelSession, Provider

log = logging.getLogger(__name__)

# Failed signature checks a channel tolerates per minute before answering 429.
BAD_SIGNATURES_PER_MINUTE = 30


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
    organization_id = rls.organization_of(ChannelSession, channel_id)
    if organization_id is None:
        return error(404, "channel_not_found", "Canal desconhecido ou inativo.")
    with rls.tenant_context(organization_id):
        channel = ChannelSession.objects.filter(
            pk=channel_id, provider=provider, is_active=True
        ).first()
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
    result = webhook_receive(channel=channel, parsed=parsed)
    return JsonResponse(
        {
            "ok": True,
            "stored": result.stored,
            "duplicates": result.duplicates,
            "statuses": result.statuses,
        }
    )


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
