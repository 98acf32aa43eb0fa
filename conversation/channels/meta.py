"""WhatsApp Cloud API (Meta) adapter.

Inbound: ``{"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages",
"value": {"metadata", "contacts", "messages" | "statuses" | "errors"}}]}]}``. Only the
``messages`` field is read; other subscriptions (templates, account updates) are ignored.

Auth: ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, raw body)>``; always hash the
raw bytes (Meta signs an escaped-unicode serialization; re-encoded JSON would not match).
Subscription: a GET handshake echoes ``hub.challenge`` (``verify_subscription``).

Outbound: ``POST {base}/{phone_number_id}/messages`` with a Bearer token. Free text is only
allowed within 24 hours of the customer's last message; after that, approved templates only.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from conversation.channels import meta_api
from conversation.channels._parsing import (
    constant_time_equal,
    dig,
    get_header,
    load_json_object,
    optional_str,
    require_secret,
)
from conversation.channels.base import (
    ChannelAdapter,
    ChannelConfig,
    MediaDownload,
    MediaRef,
    OutboundMedia,
    OutsideServiceWindow,
    ParsedWebhook,
    Provider,
    SendError,
    SendResult,
    SignatureError,
    TemplateInfo,
    WebhookError,
)
from conversation.channels.meta_inbound import InboundBatch
from conversation.channels.transport import (
    classify_status,
    fallback_message_id,
    json_or_empty,
    post_json,
)

logger = logging.getLogger(__name__)

DEFAULT_GRAPH_URL = meta_api.DEFAULT_GRAPH_URL
SIGNATURE_HEADER = "X-Hub-Signature-256"

# Meta error codes (https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes)
RE_ENGAGEMENT_ERROR = 131047  # more than 24 h since the customer's last message
_RETRYABLE_CODES = frozenset(
    {
        1,  # API unknown
        2,  # API service (temporary)
        4,  # application request limit
        80007,  # WABA rate limit
        130429,  # throughput rate limit
        131000,  # something went wrong
        131016,  # service unavailable
        131056,  # business/consumer pair rate limit
    }
)
_RATE_LIMIT_CODES = frozenset({4, 80007, 130429, 131056})
_AUTH_CODES = frozenset({0, 10, 190, 200})


class MetaAdapter(ChannelAdapter):
    provider: Provider = "meta"
    enforces_service_window: bool = True
    addresses_channel: bool = True  # value.metadata.phone_number_id

    # -- inbound -------------------------------------------------------------------------

    def verify_signature(self, *, headers: Mapping[str, str], body: bytes, secret: str) -> None:
        key = require_secret(secret)
        header = get_header(headers, SIGNATURE_HEADER)
        if not header:
            raise SignatureError(f"missing {SIGNATURE_HEADER} header")
        scheme, _, given = header.partition("=")
        if scheme.strip().lower() != "sha256" or not given:
            raise SignatureError(f"{SIGNATURE_HEADER} must be 'sha256=<hex>'")
        expected = hmac.new(key, bytes(body), hashlib.sha256).hexdigest()
        if not constant_time_equal(given.strip().lower(), expected):
            raise SignatureError(f"{SIGNATURE_HEADER} does not match the body")

    def parse_webhook(self, body: bytes) -> ParsedWebhook:
        data = load_json_object(body)
        kind = data.get("object")
        if kind is not None and kind != "whatsapp_business_account":
            raise WebhookError(
                "object must be 'whatsapp_business_account'", code="unsupported_object"
            )
        entries = data.get("entry")
        if not isinstance(entries, list):
            raise WebhookError("entry must be a list", code="invalid_payload")
        # Each entry, change, message and status is parsed on its own: a malformed one is
        # rejected and the others of the same delivery are still stored. Meta redelivers a
        # body as a whole, so a poison event must never block the good ones next to it.
        batch = InboundBatch()
        for index, entry in enumerate(entries):
            batch.entry(entry, f"entry[{index}]")
        return ParsedWebhook(
            messages=tuple(batch.messages),
            statuses=tuple(batch.statuses),
            rejected=tuple(batch.rejected),
            ignored=tuple(batch.ignored),
        )

    # -- outbound ------------------------------------------------------------------------

    # ``send_text``/``send_media`` (ChannelAdapter) refuse a closed 24-hour window first.

    def _send_text(
        self, config: ChannelConfig, *, to: str, body: str, reply_to: str | None
    ) -> SendResult:
        if not body.strip():
            raise SendError("meta: empty message body", retryable=False, code="invalid_message")
        payload: dict[str, Any] = {
            "messaging_product": "whatsapp",
            "to": _recipient(to),
            "type": "text",
            "text": {"body": body},
        }
        if reply_to:
            payload["context"] = {"message_id": reply_to}
        return self._post(config, payload)

    def send_template(
        self,
        config: ChannelConfig,
        *,
        to: str,
        template_name: str,
        language: str,
        parameters: Sequence[str],
    ) -> SendResult:
        if not template_name or not language:
            raise SendError(
                "meta: template name and language are required",
                retryable=False,
                code="invalid_message",
            )
        template: dict[str, Any] = {"name": template_name, "language": {"code": language}}
        if parameters:
            template["components"] = [
                {"type": "body", "parameters": [{"type": "text", "text": p} for p in parameters]}
            ]
        payload = {
            "messaging_product": "whatsapp",
            "to": _recipient(to),
            "type": "template",
            "template": template,
        }
        return self._post(config, payload)

    def _send_media(
        self, config: ChannelConfig, *, to: str, media: OutboundMedia, reply_to: str | None
    ) -> SendResult:
        recipient = _recipient(to)
        uploaded = ""
        if media.content:
            if not config.external_id:
                raise SendError(
                    "meta: channel needs phone_number_id", retryable=False, code="invalid_config"
                )
            uploaded = meta_api.upload(config, media, error_mapper=_error_from_response)
        payload = meta_api.media_payload(recipient, media, uploaded_id=uploaded)
        if reply_to:
            payload["context"] = {"message_id": reply_to}
        return self._post(config, payload)

    def fetch_media(
        self, config: ChannelConfig, *, media: MediaRef, max_bytes: int
    ) -> MediaDownload:
        return meta_api.fetch_media(
            config, media=media, max_bytes=max_bytes, error_mapper=_error_from_response
        )

    def mark_read(self, config: ChannelConfig, *, to: str, message_id: str, typing: bool) -> None:
        meta_api.mark_read(
            config, message_id=message_id, typing=typing, error_mapper=_error_from_response
        )

    def stop_typing(self, config: ChannelConfig, *, to: str) -> None:
        return None  # Meta ends the indicator when the reply goes out (or after 25 s)

    def list_templates(self, config: ChannelConfig) -> Sequence[TemplateInfo]:
        return meta_api.list_templates(config, error_mapper=_error_from_response)

    def _post(self, config: ChannelConfig, payload: dict[str, Any]) -> SendResult:
        if not config.external_id or not config.api_token:
            raise SendError(
                "meta: channel needs phone_number_id and an access token",
                retryable=False,
                code="invalid_config",
            )
        base_url = (config.api_base_url.strip() or DEFAULT_GRAPH_URL).rstrip("/")
        data = post_json(
            f"{base_url}/{config.external_id}/messages",
            headers={"Authorization": f"Bearer {config.api_token}"},
            payload=payload,
            provider=self.provider,
            error_mapper=_error_from_response,
        )
        message_id = dig(data, "messages")
        first = message_id[0] if isinstance(message_id, list) and message_id else None
        wamid = dig(first, "id")
        if isinstance(wamid, str) and wamid:
            return SendResult(provider_message_id=wamid, status="sent")
        return SendResult(provider_message_id=fallback_message_id("meta"), status="sent")


# -- subscription handshake --------------------------------------------------------------


def verify_subscription(query: Mapping[str, str], *, verify_token: str) -> str:
    """Answer Meta's GET handshake: return ``hub.challenge`` to echo with 200.

    Raises ``SignatureError`` (answer 403) when the mode or the token is wrong, and
    ``WebhookError`` when the challenge is missing.
    """
    if query.get("hub.mode") != "subscribe":
        raise SignatureError("hub.mode must be 'subscribe'")
    if not verify_token or not constant_time_equal(
        query.get("hub.verify_token") or "", verify_token
    ):
        raise SignatureError("hub.verify_token does not match")
    challenge = query.get("hub.challenge") or ""
    if not challenge:
        raise WebhookError("hub.challenge is missing", code="missing_challenge")
    return challenge


def _recipient(to: str) -> str:
    digits = "".join(ch for ch in to.strip() if ch not in "+ -().")
    if not (digits.isascii() and digits.isdigit()):
        raise SendError(
            "meta: recipient is not a phone number", retryable=False, code="invalid_recipient"
        )
    return digits


def _error_from_response(response: httpx.Response) -> SendError:
    """Graph error ``{"error": {"message", "type", "code", "error_data"}}`` -> SendError."""
    error = dig(json_or_empty(response), "error")
    error = error if isinstance(error, dict) else {}
    raw_code = error.get("code")
    meta_code = raw_code if isinstance(raw_code, int) and not isinstance(raw_code, bool) else None
    if meta_code is None and isinstance(raw_code, str) and raw_code.isdigit():
        meta_code = int(raw_code)  # some proxies stringify it
    message = optional_str(error.get("message")) or response.reason_phrase or "error"
    details = optional_str(dig(error, "error_data", "details"))
    text = f"meta: HTTP {response.status_code}: {message}" + (f" ({details})" if details else "")
    provider_code = str(meta_code) if meta_code is not None else str(response.status_code)
    if meta_code == RE_ENGAGEMENT_ERROR:
        return OutsideServiceWindow(
            text[:500], provider_code=provider_code, http_status=response.status_code
        )
    code, retryable = classify_status(response.status_code)
    if meta_code in _RETRYABLE_CODES:
        retryable = True
        code = "rate_limited" if meta_code in _RATE_LIMIT_CODES else "provider_unavailable"
    elif meta_code in _AUTH_CODES:
        code, retryable = "auth_failed", False
    return SendError(
        text[:500],
        retryable=retryable,
        code=code,
        provider_code=provider_code,
        http_status=response.status_code,
    )
