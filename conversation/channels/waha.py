"""WAHA (self-hosted WhatsApp HTTP API, devlikeapro) adapter.

Inbound: the session's webhook posts an envelope ``{"id", "timestamp" (ms), "event", "session",
"me", "payload", "engine", ...}``. ``message``/``message.any`` carry a ``WAMessage`` payload,
``message.ack`` a delivery receipt; every other event is acknowledged and ignored. Group, status
and newsletter chats are ignored too (``IgnoredEvent``, as Meta's group messages): agents serve
one customer per chat.

Chat ids: ``<digits>@c.us`` (a phone), ``<digits>@s.whatsapp.net`` (the same, engine-raw, maybe
with a ``:device`` suffix) and ``<id>@lid`` (WhatsApp's hidden "linked id"). When ``from`` is a
lid, the engine-specific ``_data`` often still reveals the phone (NOWEB ``key.remoteJidAlt`` /
``key.senderPn``, GOWS ``Info.SenderAlt`` / ``Info.Chat``): the phone is preferred, the lid kept.

Auth: with ``hmac.key`` set on the session webhook, WAHA sends ``X-Webhook-Hmac`` = hex
HMAC-SHA512 of the raw body and ``X-Webhook-Hmac-Algorithm: sha512``.

Outbound: ``POST {api_base_url}/api/sendText`` with ``X-Api-Key``. WAHA drives WhatsApp Web, so
there is no 24-hour window and no template API.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from conversation.channels import waha_api
from conversation.channels._parsing import (
    UNSUPPORTED_PLACEHOLDER,
    bounded_id,
    bounded_phone,
    constant_time_equal,
    dig,
    get_header,
    load_json_object,
    location_text,
    optional_id,
    optional_str,
    parse_epoch,
    placeholder,
    require_object,
    require_secret,
    require_str,
)
from conversation.channels.base import (
    MAX_NAME_LENGTH,
    MAX_PHONE_LENGTH,
    ChannelAdapter,
    ChannelConfig,
    IgnoredEvent,
    InboundMessage,
    MediaDownload,
    MediaRef,
    OutboundMedia,
    OutboundStatus,
    ParsedWebhook,
    Provider,
    RejectedEvent,
    SendError,
    SendResult,
    SignatureError,
    StatusUpdate,
    TemplateInfo,
    WebhookError,
    log_id,
)
from conversation.channels.waha_ids import (
    INBOUND_ALTERNATIVES,
    OUTBOUND_ALTERNATIVES,
    chat_id_for,
    ignored_chat,
    resolve_contact,
)

logger = logging.getLogger(__name__)

HMAC_HEADER = "X-Webhook-Hmac"
HMAC_ALGORITHM_HEADER = "X-Webhook-Hmac-Algorithm"
API_KEY_HEADER = waha_api.API_KEY_HEADER

_MESSAGE_EVENTS = frozenset({"message", "message.any"})

_NAME_PATHS: Sequence[tuple[str, ...]] = (
    ("_data", "notifyName"),
    ("_data", "pushName"),
    ("_data", "Info", "PushName"),
)

# WEBJS ``_data.type`` values: media kinds, and system notices that are not customer messages.
_WEBJS_KINDS: Mapping[str, str] = {
    "image": "image",
    "video": "video",
    "gif": "video",
    "audio": "audio",
    "ptt": "audio",
    "document": "document",
    "sticker": "sticker",
    "location": "location",
    "vcard": "contacts",
    "multi_vcard": "contacts",
}
_WEBJS_SYSTEM_TYPES = frozenset(
    {"e2e_notification", "notification_template", "gp2", "call_log", "protocol", "revoked"}
)

_ACK_STATUS: Mapping[int, OutboundStatus] = {
    -1: "failed",
    1: "sent",
    2: "delivered",
    3: "read",
    4: "read",  # PLAYED: a played voice note was necessarily read
}
_ACK_NAME_STATUS: Mapping[str, OutboundStatus] = {
    "ERROR": "failed",
    "SERVER": "sent",
    "DEVICE": "delivered",
    "READ": "read",
    "PLAYED": "read",
}


def _utc_now() -> datetime:
    return datetime.now(UTC)


class WahaAdapter(ChannelAdapter):
    provider: Provider = "waha"
    enforces_service_window: bool = False
    addresses_channel: bool = True  # the envelope's ``session``

    def __init__(self, *, clock: Callable[[], datetime] = _utc_now) -> None:
        # Only for receipts that carry no timestamp at all (the docs' own example has none).
        self._clock = clock

    # -- inbound -------------------------------------------------------------------------

    def verify_signature(self, *, headers: Mapping[str, str], body: bytes, secret: str) -> None:
        key = require_secret(secret)
        algorithm = get_header(headers, HMAC_ALGORITHM_HEADER).lower()
        if algorithm and algorithm != "sha512":
            raise SignatureError(f"unsupported {HMAC_ALGORITHM_HEADER}")
        given = get_header(headers, HMAC_HEADER).lower()
        if not given:
            raise SignatureError(f"missing {HMAC_HEADER} header")
        expected = hmac.new(key, bytes(body), hashlib.sha512).hexdigest()
        if not constant_time_equal(given, expected):
            raise SignatureError(f"{HMAC_HEADER} does not match the body")

    def parse_webhook(self, body: bytes) -> ParsedWebhook:
        envelope = load_json_object(body)
        event = require_str(envelope.get("event"), "event", code="missing_event")
        if event not in _MESSAGE_EVENTS and event != "message.ack":
            return ParsedWebhook()
        # One event per body: a malformed payload is that event's rejection (the envelope
        # itself was fine), reported like a rejected event of a Meta batch.
        try:
            payload = require_object(envelope.get("payload"), "payload")
            if event == "message.ack":
                status = self._parse_ack(payload, envelope)
                return ParsedWebhook(statuses=(status,) if status else ())
            message = self._parse_message(payload, envelope)
            if isinstance(message, IgnoredEvent):
                return ParsedWebhook(ignored=(message,))
            return ParsedWebhook(messages=(message,) if message else ())
        except WebhookError as exc:
            rejected = RejectedEvent(
                code=exc.code,
                reason=exc.message,
                where="payload",
                event_id=log_id(dig(envelope, "payload", "id")),
            )
            return ParsedWebhook(rejected=(rejected,))

    def _parse_message(
        self, payload: dict[str, Any], envelope: dict[str, Any]
    ) -> InboundMessage | IgnoredEvent | None:
        message_id = bounded_id(payload.get("id"), "payload.id")
        from_me = payload.get("fromMe") is True
        sender = require_str(payload.get("from"), "payload.from", code="missing_sender")
        # For our own messages ``from`` is us; the customer is the chat they went to.
        to = payload.get("to")
        chat = to.strip() if from_me and isinstance(to, str) and to.strip() else sender
        ignored = ignored_chat(chat, payload)
        if ignored is not None:  # a group (as Meta's ``group_id``), a status, a newsletter
            code, chat_id = ignored
            return IgnoredEvent(code, "payload", log_id(message_id), log_id(chat_id))
        data_type = optional_str(dig(payload, "_data", "type"))
        if data_type in _WEBJS_SYSTEM_TYPES:
            return None
        alternatives = OUTBOUND_ALTERNATIVES if from_me else INBOUND_ALTERNATIVES
        phone, lid = resolve_contact(chat, payload, alternatives)
        customer = bounded_phone(phone or lid, "payload.from")
        kind, text = _content(payload, data_type)
        return InboundMessage(
            provider_message_id=message_id,
            from_phone=customer,
            # Kept only while it fits where a phone goes (a contact may be keyed by it later).
            from_lid=lid if len(lid) <= MAX_PHONE_LENGTH else "",
            body=text,
            timestamp=self._timestamp(payload, envelope, required=True),
            from_name="" if from_me else _sender_name(payload),
            kind=kind,
            from_me=from_me,
            reply_to=optional_id(dig(payload, "replyTo", "id")),
            channel_ref=_session(envelope),
            media=waha_api.media_ref(payload, kind, data_type),
        )

    def _parse_ack(self, payload: dict[str, Any], envelope: dict[str, Any]) -> StatusUpdate | None:
        # Bounded like inbound ids: a longer one can match no row we stored.
        message_id = bounded_id(payload.get("id"), "payload.id")
        if payload.get("fromMe") is False:
            return None  # a receipt for the customer's message, not for one we sent
        ack = payload.get("ack")
        status: OutboundStatus | None = None
        if isinstance(ack, int) and not isinstance(ack, bool):
            status = _ACK_STATUS.get(ack)
        if status is None:
            status = _ACK_NAME_STATUS.get(optional_str(payload.get("ackName")).upper())
        if status is None:
            return None  # PENDING (0) or unknown: nothing to record yet
        return StatusUpdate(
            provider_message_id=message_id,
            status=status,
            timestamp=self._timestamp(payload, envelope, required=False),
            error="WhatsApp reported a delivery error (ack ERROR)" if status == "failed" else "",
            channel_ref=_session(envelope),
        )

    def _timestamp(
        self, payload: dict[str, Any], envelope: dict[str, Any], *, required: bool
    ) -> datetime:
        if payload.get("timestamp") is not None:
            return parse_epoch(payload["timestamp"], "payload.timestamp")
        if envelope.get("timestamp") is not None:
            return parse_epoch(envelope["timestamp"], "timestamp", millis=True)
        if required:
            raise WebhookError("payload.timestamp is required", code="invalid_timestamp")
        return self._clock()

    # -- outbound ------------------------------------------------------------------------

    # No service-window check (``enforces_service_window``): WAHA is WhatsApp Web, which has none.

    def _send_text(
        self, config: ChannelConfig, *, to: str, body: str, reply_to: str | None
    ) -> SendResult:
        waha_api.base_url(config)
        if not body.strip():
            raise SendError("waha: empty message body", retryable=False, code="invalid_message")
        payload: dict[str, Any] = {
            "session": config.external_id,
            "chatId": chat_id_for(to),
            "text": body,
        }
        if reply_to:
            payload["reply_to"] = reply_to
        data = waha_api.call(config, "sendText", payload)
        return SendResult(provider_message_id=waha_api.sent_message_id(data), status="sent")

    def _send_media(
        self, config: ChannelConfig, *, to: str, media: OutboundMedia, reply_to: str | None
    ) -> SendResult:
        return waha_api.send_media(config, to=to, media=media, reply_to=reply_to)

    def fetch_media(
        self, config: ChannelConfig, *, media: MediaRef, max_bytes: int
    ) -> MediaDownload:
        return waha_api.fetch_media(config, media=media, max_bytes=max_bytes)

    def mark_read(self, config: ChannelConfig, *, to: str, message_id: str, typing: bool) -> None:
        waha_api.mark_read(config, to=to, message_id=message_id, typing=typing)

    def stop_typing(self, config: ChannelConfig, *, to: str) -> None:
        waha_api.stop_typing(config, to=to)

    def list_templates(self, config: ChannelConfig) -> Sequence[TemplateInfo]:
        raise SendError(
            "waha: WhatsApp Web has no message templates", retryable=False, code="unsupported"
        )

    def send_template(
        self,
        config: ChannelConfig,
        *,
        to: str,
        template_name: str,
        language: str,
        parameters: Sequence[str],
    ) -> SendResult:
        raise SendError(
            "waha: WhatsApp Web has no message templates; send free text instead",
            retryable=False,
            code="unsupported",
        )


# -- helpers -----------------------------------------------------------------------------


def _session(envelope: dict[str, Any]) -> str:
    """The WAHA session the event came from ("" when the envelope names none)."""
    return optional_str(envelope.get("session"))


def _sender_name(payload: dict[str, Any]) -> str:
    for path in _NAME_PATHS:
        name = optional_str(dig(payload, *path))
        if name:
            return name[:MAX_NAME_LENGTH]
    return ""


def _kind_from_mime(mimetype: str) -> str:
    major, _, minor = mimetype.lower().partition("/")
    if mimetype.lower() == "image/webp":
        return "sticker"
    if major in ("image", "audio", "video"):
        return major
    return "document" if minor else ""


def _content(payload: dict[str, Any], data_type: str) -> tuple[str, str]:
    """(kind, body) of a WAMessage; media without caption gets a placeholder body."""
    text = optional_str(payload.get("body"))
    location = payload.get("location")
    if isinstance(location, dict) or data_type == "location":
        # payload.body is not read here: WEBJS may put a base64 map thumbnail in it.
        return "location", location_text(
            location if isinstance(location, dict) else {}, ("name", "address", "description")
        )
    vcards = payload.get("vCards")
    if (isinstance(vcards, list) and vcards) or _WEBJS_KINDS.get(data_type) == "contacts":
        return "contacts", placeholder("contacts")
    media = payload.get("media")
    if payload.get("hasMedia") is True or isinstance(media, dict) or data_type in _WEBJS_KINDS:
        mimetype = optional_str(dig(media, "mimetype")) if isinstance(media, dict) else ""
        kind = _WEBJS_KINDS.get(data_type) or _kind_from_mime(mimetype) or "media"
        return kind, text or placeholder(kind)
    if text:
        return "text", text
    return "unsupported", UNSUPPORTED_PLACEHOLDER
