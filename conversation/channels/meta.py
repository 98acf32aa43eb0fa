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
from datetime import datetime
from typing import Any

import httpx

from conversation.channels._parsing import (
    UNSUPPORTED_PLACEHOLDER,
    constant_time_equal,
    dig,
    get_header,
    load_json_object,
    optional_list,
    optional_object,
    optional_str,
    parse_epoch,
    placeholder,
    require_object,
    require_secret,
    require_str,
)
from conversation.channels.base import (
    ChannelConfig,
    InboundMessage,
    OutboundStatus,
    OutsideServiceWindow,
    ParsedWebhook,
    Provider,
    SendError,
    SendResult,
    SignatureError,
    StatusUpdate,
    WebhookError,
    service_window_open,
)
from conversation.channels.transport import (
    classify_status,
    fallback_message_id,
    json_or_empty,
    post_json,
)

logger = logging.getLogger(__name__)

DEFAULT_GRAPH_URL = "https://graph.facebook.com/v21.0"
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

_STATUS_MAP: Mapping[str, OutboundStatus] = {
    "sent": "sent",
    "delivered": "delivered",
    "read": "read",
    "played": "read",  # voice note played: it was read
    "failed": "failed",
}
_MEDIA_KINDS = frozenset({"image", "video", "document", "audio", "sticker"})


class MetaAdapter:
    provider: Provider = "meta"
    enforces_service_window: bool = True

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
        messages: list[InboundMessage] = []
        statuses: list[StatusUpdate] = []
        for entry in entries:
            for change in optional_list(
                require_object(entry, "entry[]").get("changes"), "entry[].changes"
            ):
                change = require_object(change, "entry[].changes[]")
                if change.get("field", "messages") != "messages":
                    continue
                value = optional_object(change.get("value"), "changes[].value")
                names = _contact_names(value)
                for raw in optional_list(value.get("messages"), "value.messages"):
                    message = _parse_message(require_object(raw, "value.messages[]"), names)
                    if message:
                        messages.append(message)
                for raw in optional_list(value.get("statuses"), "value.statuses"):
                    status = _parse_status(require_object(raw, "value.statuses[]"))
                    if status:
                        statuses.append(status)
        return ParsedWebhook(messages=tuple(messages), statuses=tuple(statuses))

    # -- outbound ------------------------------------------------------------------------

    def send_text(
        self,
        config: ChannelConfig,
        *,
        to: str,
        body: str,
        last_inbound_at: datetime | None,
        now: datetime,
        reply_to: str | None = None,
    ) -> SendResult:
        # Checked before anything else so a closed window never costs an HTTP call.
        if not service_window_open(last_inbound_at, now):
            raise OutsideServiceWindow()
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


# -- parsing helpers ---------------------------------------------------------------------


def _contact_names(value: dict[str, Any]) -> dict[str, str]:
    names: dict[str, str] = {}
    for contact in optional_list(value.get("contacts"), "value.contacts"):
        wa_id, name = dig(contact, "wa_id"), optional_str(dig(contact, "profile", "name"))
        if isinstance(wa_id, str) and name:
            names[wa_id] = name[:200]
    return names


def _parse_message(raw: dict[str, Any], names: Mapping[str, str]) -> InboundMessage | None:
    message_id = require_str(raw.get("id"), "messages[].id", code="missing_id")
    if raw.get("type") == "system":
        # WhatsApp's own notice (e.g. "customer changed number"), not something they wrote.
        logger.info("meta system message ignored", extra={"provider_message_id": message_id})
        return None
    sender = require_str(raw.get("from"), "messages[].from", code="missing_sender").lstrip("+")
    kind, body, reply_to = _content(raw)
    context_id = dig(raw, "context", "id")
    if reply_to is None and isinstance(context_id, str) and context_id:
        reply_to = context_id
    return InboundMessage(
        provider_message_id=message_id,
        from_phone=sender,
        body=body,
        timestamp=parse_epoch(raw.get("timestamp"), "messages[].timestamp"),
        from_name=names.get(sender, ""),
        kind=kind,
        reply_to=reply_to,
    )


def _content(raw: dict[str, Any]) -> tuple[str, str, str | None]:
    """(kind, body, reply_to override) for one Cloud API message."""
    kind = optional_str(raw.get("type")) or "unsupported"
    value = raw.get(kind)
    detail: dict[str, Any] = value if isinstance(value, dict) else {}
    if kind == "text":
        text = optional_str(dig(raw, "text", "body"))
        return "text", text or UNSUPPORTED_PLACEHOLDER, None
    if kind in _MEDIA_KINDS:
        return kind, optional_str(detail.get("caption")) or placeholder(kind), None
    if kind == "interactive":
        reply_type = optional_str(detail.get("type"))
        title = optional_str(dig(detail, reply_type, "title")) or optional_str(
            dig(detail, reply_type, "body")
        )
        return "interactive", title or placeholder("interactive"), None
    if kind == "button":
        return "button", optional_str(detail.get("text")) or placeholder("button"), None
    if kind == "location":
        return "location", _location_text(detail), None
    if kind == "contacts":
        people = [
            optional_str(dig(c, "name", "formatted_name"))
            for c in optional_list(raw.get("contacts"), "messages[].contacts")
        ]
        label = ", ".join(p for p in people if p)
        return "contacts", f"{placeholder('contacts')} {label}".strip(), None
    if kind == "reaction":
        target = dig(detail, "message_id")
        emoji = optional_str(detail.get("emoji"))
        body = f"{placeholder('reaction')} {emoji}".strip() if emoji else "[reação removida]"
        return "reaction", body, target if isinstance(target, str) and target else None
    if kind == "order":
        note = optional_str(detail.get("text"))
        return "order", f"{placeholder('order')} {note}".strip(), None
    return kind, UNSUPPORTED_PLACEHOLDER, None


def _location_text(location: dict[str, Any]) -> str:
    label = ", ".join(p for p in (optional_str(location.get(k)) for k in ("name", "address")) if p)
    if not label:
        lat, lng = location.get("latitude"), location.get("longitude")
        if isinstance(lat, int | float | str) and isinstance(lng, int | float | str):
            label = f"{lat}, {lng}"
    return f"{placeholder('location')} {label}".strip()


def _parse_status(raw: dict[str, Any]) -> StatusUpdate | None:
    message_id = require_str(raw.get("id"), "statuses[].id", code="missing_id")
    status = _STATUS_MAP.get(optional_str(raw.get("status")).lower())
    if status is None:
        return None  # e.g. "deleted"/"warning": nothing an outbound row tracks
    errors = optional_list(raw.get("errors"), "statuses[].errors")
    return StatusUpdate(
        provider_message_id=message_id,
        status=status,
        timestamp=parse_epoch(raw.get("timestamp"), "statuses[].timestamp"),
        error=_describe_error(errors[0]) if errors else "",
    )


def _describe_error(error: object) -> str:
    if not isinstance(error, dict):
        return "unknown error"
    code = error.get("code")
    title = optional_str(error.get("title")) or optional_str(error.get("message"))
    details = optional_str(dig(error, "error_data", "details"))
    text = " - ".join(p for p in (title, details) if p) or "unknown error"
    return (f"{code}: {text}" if isinstance(code, int | str) else text)[:500]


# -- outbound error mapping --------------------------------------------------------------


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
