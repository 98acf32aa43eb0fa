"""The product's built-in test channel: the WhatsApp simulator page chats as a customer.

Inbound contract (the simulator page's server-side view posts it to
``/webhooks/simulator/<channel>``), a JSON object with exactly these keys::

    {
      "from": "5511999990000",   # required: the fake customer's phone, 8-15 digits, no "+"
      "text": "Oi, tudo bem?",   # required: 1-4096 characters, not only whitespace
      "id": "c-8f1e...",         # required: the page's message id, 1-128 of [A-Za-z0-9_.:-];
                                 #   it is the dedup key, so a double click is one message
      "name": "Maria",           # optional: display name, at most 100 characters
      "reply_to": "sim-..."      # optional: id of the message being replied to, or null
    }

Any other key, type or size is rejected with ``WebhookError``. The page is authenticated by a
shared secret in ``X-Simulator-Secret`` (the view adds it; no HMAC, the call never leaves the
server). Outbound messages make no network call: the page reads the outbound rows from the
database, so ``send_text`` just returns a fresh id as already "delivered".
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from conversation.channels._parsing import (
    constant_time_equal,
    get_header,
    load_json_object,
    require_secret,
)
from conversation.channels.base import (
    ChannelAdapter,
    ChannelConfig,
    InboundMessage,
    MediaDownload,
    MediaRef,
    OutboundMedia,
    ParsedWebhook,
    Provider,
    SendError,
    SendResult,
    SignatureError,
    TemplateInfo,
    WebhookError,
)

SECRET_HEADER = "X-Simulator-Secret"
MAX_TEXT_LENGTH = 4096  # WhatsApp's own limit for a text message
MAX_NAME_LENGTH = 100

_REQUIRED_KEYS = frozenset({"from", "text", "id"})
_ALLOWED_KEYS = _REQUIRED_KEYS | {"name", "reply_to"}
_PHONE = re.compile(r"[0-9]{8,15}", re.ASCII)
_MESSAGE_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}", re.ASCII)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SimulatorAdapter(ChannelAdapter):
    provider: Provider = "simulator"
    # The simulator talks to no WhatsApp, so no window applies.
    enforces_service_window: bool = False
    # The page posts to its own channel's URL and names no number.
    addresses_channel: bool = False

    def __init__(self, *, clock: Callable[[], datetime] = _utc_now) -> None:
        # The page sends no timestamp: a message is received when it is posted.
        self._clock = clock

    def verify_signature(self, *, headers: Mapping[str, str], body: bytes, secret: str) -> None:
        expected = require_secret(secret)
        given = get_header(headers, SECRET_HEADER)
        if not given:
            raise SignatureError(f"missing {SECRET_HEADER} header")
        if not constant_time_equal(given, expected.decode()):
            raise SignatureError(f"{SECRET_HEADER} does not match")

    def parse_webhook(self, body: bytes) -> ParsedWebhook:
        data = load_json_object(body)
        missing = sorted(_REQUIRED_KEYS - data.keys())
        if missing:
            raise WebhookError(f"missing field(s): {', '.join(missing)}", code="missing_field")
        unknown = sorted(data.keys() - _ALLOWED_KEYS)
        if unknown:
            raise WebhookError(f"unknown field(s): {', '.join(unknown)}", code="unknown_field")
        message_id = _match(data["id"], _MESSAGE_ID, "id", code="missing_id")
        phone = _match(data["from"], _PHONE, "from", code="invalid_sender")
        text = data["text"]
        if not isinstance(text, str) or not text.strip():
            raise WebhookError("text must be a non-empty string", code="invalid_text")
        if len(text) > MAX_TEXT_LENGTH:
            raise WebhookError(
                f"text is longer than {MAX_TEXT_LENGTH} characters", code="invalid_text"
            )
        return ParsedWebhook(
            messages=(
                InboundMessage(
                    provider_message_id=message_id,
                    from_phone=phone,
                    body=text.strip(),
                    timestamp=self._clock(),
                    from_name=_name(data.get("name")),
                    reply_to=_reply_to(data.get("reply_to")),
                ),
            )
        )

    def _send_text(
        self, config: ChannelConfig, *, to: str, body: str, reply_to: str | None
    ) -> SendResult:
        return SendResult(provider_message_id=new_message_id(), status="delivered")

    def send_template(
        self,
        config: ChannelConfig,
        *,
        to: str,
        template_name: str,
        language: str,
        parameters: Sequence[str],
    ) -> SendResult:
        return SendResult(provider_message_id=new_message_id(), status="delivered")

    def _send_media(
        self, config: ChannelConfig, *, to: str, media: OutboundMedia, reply_to: str | None
    ) -> SendResult:
        return SendResult(provider_message_id=new_message_id(), status="delivered")

    def fetch_media(
        self, config: ChannelConfig, *, media: MediaRef, max_bytes: int
    ) -> MediaDownload:
        # The page's customer sends text only: there is never a file to fetch.
        raise SendError("simulator: no media", retryable=False, code="not_found")

    def mark_read(self, config: ChannelConfig, *, to: str, message_id: str, typing: bool) -> None:
        return None  # the page shows no receipts

    def stop_typing(self, config: ChannelConfig, *, to: str) -> None:
        return None

    def list_templates(self, config: ChannelConfig) -> Sequence[TemplateInfo]:
        return ()


def new_message_id() -> str:
    return f"sim-{uuid.uuid4().hex}"


def _match(value: Any, pattern: re.Pattern[str], field: str, *, code: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise WebhookError(f"{field} has an invalid format", code=code)
    return value


def _name(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_NAME_LENGTH:
        raise WebhookError(
            f"name must be a string of at most {MAX_NAME_LENGTH} characters", code="invalid_name"
        )
    return value.strip()


def _reply_to(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _MESSAGE_ID.fullmatch(value):
        raise WebhookError("reply_to has an invalid format", code="invalid_reply_to")
    return value
