"""WhatsApp channel adapters: one module per provider under this common base.

Adapters know no Django model: the webhook view hands them the raw body and
headers, and the outbox hands them a ``ChannelConfig`` built from the
ChannelSession row. Everything inbound is normalized to ``InboundMessage`` /
``StatusUpdate``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

Provider = Literal["waha", "meta", "simulator"]
OutboundStatus = Literal["sent", "delivered", "read", "failed"]

SERVICE_WINDOW = timedelta(hours=24)
# The longest a provider may still be delivering a message late: Meta retries a webhook for
# up to 7 days. A timestamp older than that is a wrong clock or unit, not a late delivery.
MAX_DELIVERY_DELAY = timedelta(days=7)

# What the storage can hold, mirrored here so adapters (which know no Django model) refuse or
# bound a value before it reaches the database; tests/channels pins them to the models' fields.
# An id longer than this is refused, never cut: a cut id could collide with another message's
# (and the second would be dropped as a "duplicate") or stop matching its status callbacks.
MAX_MESSAGE_ID_LENGTH = 200  # Message.provider_message_id
# A phone longer than this is refused, never cut: a cut phone is somebody else's contact.
MAX_PHONE_LENGTH = 64  # Contact.phone
# Display-only values are cut: nothing is keyed by them.
MAX_NAME_LENGTH = 120  # Contact.name
MAX_KIND_LENGTH = 16  # Message.kind
# Media columns (Message.media_*): an over-long value is dropped (the media stays "unknown"),
# never cut into a different id or URL.
MAX_MEDIA_ID_LENGTH = 200
MAX_MEDIA_URL_LENGTH = 1000
MAX_MIME_LENGTH = 100
MAX_FILENAME_LENGTH = 200  # display only: cut
MAX_LABEL = 200  # a location's label: display only, cut


@dataclass(frozen=True)
class MediaRef:
    """What a message carries besides text, as the provider described it.

    Media (``image``, ``audio``, ``video``, ``document``, ``sticker``): Meta names a
    ``media_id`` to download through the Graph API; WAHA a ``url`` on its own server (or a
    pre-signed S3 URL). ``location``: ``latitude``/``longitude`` and an optional label in
    ``filename``'s place (``name``). The file itself is fetched only when staff open it.
    """

    kind: str
    media_id: str = ""
    url: str = ""
    mime_type: str = ""
    filename: str = ""
    caption: str = ""
    sha256: str = ""
    voice: bool = False  # an audio recorded as a voice note (Meta ``voice``, WAHA ``ptt``)
    latitude: float | None = None
    longitude: float | None = None
    label: str = ""  # a location's name/address
    error: str = ""  # the provider could not fetch the file from WhatsApp (WAHA media.error)


@dataclass(frozen=True)
class OutboundMedia:
    """A file to send: ``image`` or ``document`` (``video``/``audio`` where the provider
    takes them), by a public ``url`` the provider fetches itself, or as ``content``."""

    kind: str
    url: str = ""
    caption: str = ""
    filename: str = ""
    mime_type: str = ""
    # A file staff uploaded (no public URL): Meta gets it uploaded first (``POST /media``),
    # WAHA inline as base64. Either ``url`` or ``content``.
    content: bytes = b""


@dataclass(frozen=True)
class MediaDownload:
    content: bytes
    mime_type: str
    filename: str = ""


@dataclass(frozen=True)
class TemplateInfo:
    """One message template of a WhatsApp Business Account (Meta Graph API)."""

    name: str
    language: str
    status: str = ""  # APPROVED | PENDING | REJECTED | PAUSED | DISABLED ...
    category: str = ""  # UTILITY | MARKETING | AUTHENTICATION
    body: str = ""  # the BODY component's text, with {{1}} / {{name}} placeholders
    parameters: int = 0  # how many body placeholders a send must fill


@dataclass(frozen=True)
class InboundMessage:
    provider_message_id: str
    # E.164 without "+" for WhatsApp ids, e.g. "5511999990000"; "@lid" ids kept verbatim.
    # Always the customer's side of the chat: for ``from_me`` messages it is the recipient.
    from_phone: str
    body: str
    timestamp: datetime  # aware
    from_name: str = ""
    kind: str = "text"  # text | image | audio | video | document | sticker | location | ...
    from_me: bool = False  # sent by the business number itself (WAHA fromMe): never starts a turn
    reply_to: str | None = None
    # WhatsApp's hidden "linked id" ("123@lid") when the payload carried one. ``from_phone`` holds
    # the real number when the payload also revealed it, else the lid itself; keeping both lets the
    # caller link a contact first seen by lid to the same contact seen later by phone.
    from_lid: str = ""
    # The business number the payload says the event was sent to (Meta ``phone_number_id``,
    # WAHA ``session``); "" when the payload names none. See ``ParsedWebhook.addressed_to``.
    channel_ref: str = ""
    media: MediaRef | None = None


@dataclass(frozen=True)
class StatusUpdate:
    provider_message_id: str
    status: OutboundStatus
    timestamp: datetime
    error: str = ""
    channel_ref: str = ""  # as on InboundMessage


@dataclass(frozen=True)
class RejectedEvent:
    """One event of a body that was refused while the rest of the body went on.

    ``code`` is stable (``missing_id``, ``invalid_id``, ``invalid_sender``, ``wrong_channel``...),
    ``reason`` says what was wrong without quoting customer text, ``event_id`` is a bounded prefix
    of the provider's id when the event had one (for the operator's log), ``where`` the event's
    place in the body (``entry[0].changes[1].messages[2]``).
    """

    code: str
    reason: str
    where: str
    event_id: str = ""


@dataclass(frozen=True)
class IgnoredEvent:
    """A well-formed event the product deliberately does not act on: acknowledged (the
    provider must not redeliver it), logged with ids, stored as nothing.

    ``code``: ``group_chat`` (a WhatsApp group: agents serve one customer per chat, and
    answering the participant privately would leak the group's talk), ``broadcast_chat``
    (a status update), ``newsletter_chat`` (a channel post). ``chat_id`` is the group's (or
    other chat's) id, bounded like ``event_id``; never any text of the message.
    """

    code: str
    where: str
    event_id: str = ""
    chat_id: str = ""


@dataclass(frozen=True)
class ParsedWebhook:
    messages: Sequence[InboundMessage] = ()
    statuses: Sequence[StatusUpdate] = ()
    # Events refused one by one; the valid events of the same body are still kept above.
    rejected: Sequence[RejectedEvent] = ()
    # Valid events left alone on purpose (group chats...): answered 200, logged, not stored.
    ignored: Sequence[IgnoredEvent] = ()

    @property
    def accepted(self) -> int:
        return len(self.messages) + len(self.statuses)

    def addressed_to(self, external_id: str) -> ParsedWebhook:
        """Keep the events sent to the business number ``external_id``; refuse the others.

        An event naming another number (or none at all) is moved to ``rejected`` as
        ``wrong_channel``: storing it under this channel would mix two numbers' conversations.
        """
        expected = external_id.strip()
        messages = [m for m in self.messages if m.channel_ref == expected]
        statuses = [s for s in self.statuses if s.channel_ref == expected]
        refused = [
            RejectedEvent(
                code="wrong_channel",
                reason="event addressed to another number" if e.channel_ref else "no number named",
                where=kind,
                event_id=log_id(e.provider_message_id),
            )
            for kind, events in (("message", self.messages), ("status", self.statuses))
            for e in events
            if e.channel_ref != expected
        ]
        if not refused:
            return self
        return replace(
            self,
            messages=tuple(messages),
            statuses=tuple(statuses),
            rejected=(*self.rejected, *refused),
        )


def log_id(value: object) -> str:
    """A provider id cut short enough for a log line (ids can be anything a payload says)."""
    return value[:80] if isinstance(value, str) else ""


@dataclass(frozen=True)
class ChannelConfig:
    provider: Provider
    external_id: str  # Meta phone_number_id, WAHA session name, simulator: anything
    api_base_url: str = ""
    api_token: str = ""
    webhook_secret: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SendResult:
    provider_message_id: str
    status: OutboundStatus = "sent"


class WebhookError(Exception):
    """The payload is malformed: the webhook answers 400 with ``code``/``message``."""

    def __init__(self, message: str, code: str = "invalid_payload") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SignatureError(Exception):
    """Missing or wrong signature/HMAC: the webhook answers 401."""


class SendError(Exception):
    """Delivery failed. ``retryable`` tells the outbox whether to try again.

    ``code`` is a stable category (``timeout``, ``connection_error``, ``provider_unavailable``,
    ``rate_limited``, ``auth_failed``, ``rejected``, ``invalid_config``, ``invalid_recipient``,
    ``unsupported``, ``outside_service_window``); ``provider_code`` is the provider's own code
    (Meta ``error.code``, or the HTTP status) for the operator, ``http_status`` the response status.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        code: str = "send_failed",
        provider_code: str = "",
        http_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.code = code
        self.provider_code = provider_code
        self.http_status = http_status


def too_large_error(provider: str, max_bytes: int) -> SendError:
    return SendError(
        f"{provider}: file larger than {max_bytes} bytes", retryable=False, code="too_large"
    )


class OutsideServiceWindow(SendError):
    """WhatsApp's 24-hour customer-service window is closed: free text is refused."""

    def __init__(
        self,
        message: str = "customer-service window closed; send an approved template",
        *,
        provider_code: str = "",
        http_status: int | None = None,
    ) -> None:
        super().__init__(
            message,
            retryable=False,
            code="outside_service_window",
            provider_code=provider_code,
            http_status=http_status,
        )


def service_window_open(last_inbound_at: datetime | None, now: datetime) -> bool:
    """True while free text may be sent: the customer wrote less than 24 hours before ``now``.

    Both datetimes must be aware. A last inbound in the future (clock skew) counts as open.
    """
    if last_inbound_at is None:
        return False
    if last_inbound_at.tzinfo is None or now.tzinfo is None:
        raise ValueError("service window needs timezone-aware datetimes")
    return now - last_inbound_at < SERVICE_WINDOW


def customer_wrote_at(timestamp: datetime, now: datetime) -> datetime:
    """When the customer wrote, for the service window: the provider's own ``timestamp``
    (a message delivered late after an outage keeps the time it was written), or ``now`` when
    that timestamp is not believable — in the future (clock skew, a unit mistake) or older
    than any redelivery (``MAX_DELIVERY_DELAY``). Both datetimes must be aware."""
    if timestamp > now or now - timestamp > MAX_DELIVERY_DELAY:
        return now
    return timestamp


class ChannelAdapter(Protocol):
    """What every provider adapter offers. The adapters subclass it explicitly to inherit
    ``send_text``/``send_media``: the service-window rule lives here once, keyed on
    ``enforces_service_window``, and each adapter only delivers (``_send_text``/``_send_media``).
    """

    provider: Provider
    enforces_service_window: bool
    # The payload names the business number it was sent to (``channel_ref``), which must be the
    # channel's ``external_id``: checked by the webhook with ``ParsedWebhook.addressed_to``.
    addresses_channel: bool

    def verify_signature(self, *, headers: Mapping[str, str], body: bytes, secret: str) -> None:
        """Raise ``SignatureError`` unless the body is authentic (constant-time compare)."""

    def parse_webhook(self, body: bytes) -> ParsedWebhook:
        """Raise ``WebhookError`` when the body as a whole is malformed; a malformed event
        inside a well-formed body goes to ``ParsedWebhook.rejected`` and the rest is kept.
        Every string is cleaned of what storage cannot hold (``_parsing.clean_text``)."""

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
        """Send free text; raise ``OutsideServiceWindow`` before any HTTP call when it applies."""
        self._check_service_window(last_inbound_at, now)
        return self._send_text(config, to=to, body=body, reply_to=reply_to)

    def send_template(
        self,
        config: ChannelConfig,
        *,
        to: str,
        template_name: str,
        language: str,
        parameters: Sequence[str],
    ) -> SendResult: ...

    def send_media(
        self,
        config: ChannelConfig,
        *,
        to: str,
        media: OutboundMedia,
        last_inbound_at: datetime | None,
        now: datetime,
        reply_to: str | None = None,
    ) -> SendResult:
        """Send a file by URL; the service window applies like free text."""
        # A file is free-form content: the 24-hour window applies as to text.
        self._check_service_window(last_inbound_at, now)
        return self._send_media(config, to=to, media=media, reply_to=reply_to)

    def _check_service_window(self, last_inbound_at: datetime | None, now: datetime) -> None:
        # Checked before anything else so a closed window never costs an HTTP call; adapters
        # whose provider has no window (WAHA, simulator) never look at the datetimes.
        if self.enforces_service_window and not service_window_open(last_inbound_at, now):
            raise OutsideServiceWindow()

    def _send_text(
        self, config: ChannelConfig, *, to: str, body: str, reply_to: str | None
    ) -> SendResult:
        """Deliver free text (``send_text`` has checked the service window)."""

    def _send_media(
        self, config: ChannelConfig, *, to: str, media: OutboundMedia, reply_to: str | None
    ) -> SendResult:
        """Deliver a file (``send_media`` has checked the service window)."""

    def fetch_media(
        self, config: ChannelConfig, *, media: MediaRef, max_bytes: int
    ) -> MediaDownload:
        """Download an inbound file; ``SendError`` (``too_large``, ``not_found``...) otherwise."""

    def mark_read(self, config: ChannelConfig, *, to: str, message_id: str, typing: bool) -> None:
        """Mark the customer's message read and, with ``typing``, show "digitando...".
        Raises ``SendError``; callers treat it as best effort."""

    def stop_typing(self, config: ChannelConfig, *, to: str) -> None:
        """End the typing indicator (a no-op where the provider ends it on send)."""

    def list_templates(self, config: ChannelConfig) -> Sequence[TemplateInfo]:
        """The account's message templates; ``SendError(code="unsupported")`` without any."""
