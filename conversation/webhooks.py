"""Webhook endpoints: authenticate, validate, deduplicate, rate-limit, store.

Nothing a webhook sends can name an organization: the channel id in the URL does,
and the channel's own secret authenticates the body.
"""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from accounts.throttle import hit
from conversation.channels import get_adapter
from conversation.channels.base import SignatureError, WebhookError
from conversation.channels.meta import verify_subscription
from conversation.inbound import webhook_receive
from conversation.models import ChannelSession

log = logging.getLogger(__name__)


def error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


@csrf_exempt
@require_http_methods(["GET", "POST"])
def webhook(request: HttpRequest, provider: str, channel_id: uuid.UUID) -> HttpResponse:
    channel = ChannelSession.objects.filter(
        pk=channel_id, provider=provider, is_active=True
    ).first()
    if channel is None:
        return error(404, "channel_not_found", "Canal desconhecido ou inativo.")
    if request.method == "GET":
        return _meta_subscription(request, channel)
    if len(request.body) > settings.WEBHOOK_MAX_BODY_BYTES:
        return error(413, "payload_too_large", "Corpo da requisição grande demais.")
    if not hit(f"webhook:{channel.pk}", limit=settings.WEBHOOK_RATE_LIMIT_PER_MINUTE, window_s=60):
        return error(429, "rate_limited", "Muitas requisições para este canal.")
    adapter = get_adapter(channel.provider)
    ids = {"channel_id": str(channel.pk), "provider": channel.provider}
    try:
        adapter.verify_signature(
            headers=dict(request.headers), body=request.body, secret=channel.webhook_secret
        )
    except SignatureError:
        log.warning("webhook signature rejected", extra=ids)
        return error(401, "invalid_signature", "Assinatura inválida.")
    try:
        parsed = adapter.parse_webhook(request.body)
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
        challenge = verify_subscription(
            {k: str(v) for k, v in request.GET.items()}, verify_token=channel.webhook_secret
        )
    except SignatureError:
        return error(403, "invalid_verify_token", "Token de verificação inválido.")
    except WebhookError as exc:
        return error(400, exc.code, exc.message)
    return HttpResponse(challenge, content_type="text/plain")
