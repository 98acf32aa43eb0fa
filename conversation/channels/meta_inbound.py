"""Reading Meta's inbound webhook bodies: messages and statuses, event by event.

A malformed entry, change, message or status is rejected on its own (``RejectedEvent``) and
the rest of the same delivery is kept — Meta redelivers a body as a whole, so one poison event
must never block the good ones beside it. ``conversation.channels.meta`` calls this.

A message written in a WhatsApp group (Cloud API Groups: the message carries ``group_id``,
``from`` is the participant) is ignored (``IgnoredEvent``), as WAHA's ``@g.us`` chats are:
agents serve one customer per chat, and answering the participant privately would carry the
group's talk into a private chat.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from conversation.channels._parsing import (
    UNSUPPORTED_PLACEHOLDER,
    bounded_id,
    bounded_phone,
    coordinate,
    dig,
    location_text,
    optional_id,
    optional_list,
    optional_object,
    optional_str,
    parse_epoch,
    placeholder,
    require_object,
    require_str,
)
from conversation.channels.base import (
    MAX_FILENAME_LENGTH,
    MAX_KIND_LENGTH,
    MAX_LABEL,
    MAX_MEDIA_ID_LENGTH,
    MAX_MEDIA_URL_LENGTH,
    MAX_MIME_LENGTH,
    MAX_NAME_LENGTH,
    IgnoredEvent,
    InboundMessage,
    MediaRef,
    OutboundStatus,
    RejectedEvent,
    StatusUpdate,
    WebhookError,
    log_id,
)

logger = logging.getLogger(__name__)

_STATUS_MAP: Mapping[str, OutboundStatus] = {
    "sent": "sent",
    "delivered": "delivered",
    "read": "read",
    "played": "read",  # voice note played: it was read
    "failed": "failed",
}
_MEDIA_KINDS = frozenset({"image", "video", "document", "audio", "sticker"})


class InboundBatch:
    """What one delivery yielded so far: events kept, and events rejected one by one."""

    def __init__(self) -> None:
        self.messages: list[InboundMessage] = []
        self.statuses: list[StatusUpdate] = []
        self.rejected: list[RejectedEvent] = []
        self.ignored: list[IgnoredEvent] = []

    def reject(self, exc: WebhookError, where: str, raw: object = None) -> None:
        event_id = log_id(dig(raw, "id"))
        self.rejected.append(
            RejectedEvent(code=exc.code, reason=exc.message, where=where, event_id=event_id)
        )

    def entry(self, entry: object, where: str) -> None:
        try:
            changes = optional_list(require_object(entry, where).get("changes"), f"{where}.changes")
        except WebhookError as exc:
            self.reject(exc, where)
            return
        for index, change in enumerate(changes):
            self.change(change, f"{where}.changes[{index}]")

    def change(self, change: object, where: str) -> None:
        try:
            value = _messages_value(change, where)
            if value is None:
                return  # another subscription field (templates, account updates...)
            messages = optional_list(value.get("messages"), f"{where}.value.messages")
            statuses = optional_list(value.get("statuses"), f"{where}.value.statuses")
        except WebhookError as exc:
            self.reject(exc, where)
            return
        channel_ref = _number_id(dig(value, "metadata", "phone_number_id"))
        names = _contact_names(value)
        for index, raw in enumerate(messages):
            at = f"{where}.value.messages[{index}]"
            group = _group_of(raw)
            if group:
                event_id = log_id(dig(raw, "id"))
                self.ignored.append(IgnoredEvent("group_chat", at, event_id, log_id(group)))
                continue
            try:
                message = _parse_message(require_object(raw, at), names, channel_ref)
            except WebhookError as exc:
                self.reject(exc, at, raw)
                continue
            if message is not None:
                self.messages.append(message)
        for index, raw in enumerate(statuses):
            at = f"{where}.value.statuses[{index}]"
            try:
                status = _parse_status(require_object(raw, at), channel_ref)
            except WebhookError as exc:
                self.reject(exc, at, raw)
                continue
            if status is not None:
                self.statuses.append(status)


def _group_of(raw: object) -> str:
    """The group a message was written in ("" for a one-to-one chat). Any ``group_id`` makes
    it a group message, even one of an unexpected type: never answered as a private one."""
    group = dig(raw, "group_id")
    if group is None or group == "":
        return ""
    if isinstance(group, str) and group.strip():
        return group.strip()
    return "?"  # a group id we cannot read: still a group


def _messages_value(change: object, where: str) -> dict[str, Any] | None:
    """The ``value`` of a ``messages`` change; None for other subscription fields."""
    change = require_object(change, where)
    if change.get("field", "messages") != "messages":
        return None
    return optional_object(change.get("value"), f"{where}.value")


def _number_id(value: object) -> str:
    """``metadata.phone_number_id`` as text ("" when absent); a JSON number is accepted."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value.strip() if isinstance(value, str) else ""


def _contact_names(value: dict[str, Any]) -> dict[str, str]:
    """wa_id -> profile name. Display only, so a malformed ``contacts`` just means no names."""
    names: dict[str, str] = {}
    contacts = value.get("contacts")
    for contact in contacts if isinstance(contacts, list) else ():
        wa_id, name = dig(contact, "wa_id"), optional_str(dig(contact, "profile", "name"))
        if isinstance(wa_id, str) and name:
            names[wa_id] = name[:MAX_NAME_LENGTH]
    return names


def _parse_message(
    raw: dict[str, Any], names: Mapping[str, str], channel_ref: str
) -> InboundMessage | None:
    message_id = bounded_id(raw.get("id"), "messages[].id")
    if raw.get("type") == "system":
        # WhatsApp's own notice (e.g. "customer changed number"), not something they wrote.
        logger.info("meta system message ignored", extra={"provider_message_id": message_id})
        return None
    sender = require_str(raw.get("from"), "messages[].from", code="missing_sender").lstrip("+")
    sender = bounded_phone(sender, "messages[].from")
    kind, body, reply_to = _content(raw)
    context_id = optional_id(dig(raw, "context", "id"))
    if reply_to is None and context_id:
        reply_to = context_id
    return InboundMessage(
        provider_message_id=message_id,
        from_phone=sender,
        body=body,
        timestamp=parse_epoch(raw.get("timestamp"), "messages[].timestamp"),
        from_name=names.get(sender, ""),
        kind=kind,
        reply_to=reply_to,
        channel_ref=channel_ref,
        media=media_ref(kind, raw.get(kind)),
    )


def _content(raw: dict[str, Any]) -> tuple[str, str, str | None]:
    """(kind, body, reply_to override) for one Cloud API message."""
    kind = optional_str(raw.get("type")) or "unsupported"
    if len(kind) > MAX_KIND_LENGTH:
        kind = "unsupported"  # a type Meta never sent: the stored kind stays within its column
    value = raw.get(kind)
    detail: dict[str, Any] = value if isinstance(value, dict) else {}
    if kind == "text":
        text = optional_str(dig(raw, "text", "body"))
        return "text", text or UNSUPPORTED_PLACEHOLDER, None
    if kind in _MEDIA_KINDS:
        caption = optional_str(detail.get("caption"))
        filename = optional_str(detail.get("filename"))
        if not caption and kind == "document" and filename:
            return kind, f"{placeholder(kind)} {filename}", None
        return kind, caption or placeholder(kind), None
    if kind == "interactive":
        reply_type = optional_str(detail.get("type"))
        title = optional_str(dig(detail, reply_type, "title")) or optional_str(
            dig(detail, reply_type, "body")
        )
        return "interactive", title or placeholder("interactive"), None
    if kind == "button":
        return "button", optional_str(detail.get("text")) or placeholder("button"), None
    if kind == "location":
        return "location", location_text(detail, ("name", "address")), None
    if kind == "contacts":
        people = [
            _shared_contact(c) for c in optional_list(raw.get("contacts"), "messages[].contacts")
        ]
        label = ", ".join(p for p in people if p)
        return "contacts", f"{placeholder('contacts')} {label}".strip(), None
    if kind == "reaction":
        target = optional_id(dig(detail, "message_id"))
        emoji = optional_str(detail.get("emoji"))
        body = f"{placeholder('reaction')} {emoji}".strip() if emoji else "[reação removida]"
        return "reaction", body, target
    if kind == "order":
        # What the customer put in the cart is the order: the agent reads it as a line.
        items = [
            _order_item(i)
            for i in optional_list(dig(detail, "product_items"), "messages[].order.product_items")
        ]
        parts = [
            p for p in (", ".join(i for i in items if i), optional_str(detail.get("text"))) if p
        ]
        return "order", " ".join((placeholder("order"), *parts)), None
    return kind, UNSUPPORTED_PLACEHOLDER, None


def media_ref(kind: str, detail: object) -> MediaRef | None:
    """The media (or location) a Cloud API message carries, as ``MediaRef``; None for text.

    Meta sends only an id (``image.id``...): the file is fetched later through
    ``GET /{media-id}`` (``MetaAdapter.fetch_media``). Strings are bounded to their columns.
    """
    if not isinstance(detail, dict):
        return None
    if kind == "location":
        lat, lng = coordinate(detail.get("latitude")), coordinate(detail.get("longitude"))
        if lat is None or lng is None:
            return None
        parts = (optional_str(detail.get(k)) for k in ("name", "address"))
        label = ", ".join(p for p in parts if p)
        return MediaRef(kind="location", latitude=lat, longitude=lng, label=label[:MAX_LABEL])
    if kind not in _MEDIA_KINDS:
        return None
    media_id = optional_str(detail.get("id"))
    return MediaRef(
        kind=kind,
        media_id=media_id if len(media_id) <= MAX_MEDIA_ID_LENGTH else "",
        url=_bounded_url(detail.get("url")),
        mime_type=optional_str(detail.get("mime_type"))[:MAX_MIME_LENGTH],
        filename=optional_str(detail.get("filename"))[:MAX_FILENAME_LENGTH],
        caption=optional_str(detail.get("caption")),
        sha256=optional_str(detail.get("sha256"))[:128],
        voice=detail.get("voice") is True,
    )


def _bounded_url(value: object) -> str:
    url = optional_str(value)
    return url if len(url) <= MAX_MEDIA_URL_LENGTH and url.startswith("https://") else ""


def _parse_status(raw: dict[str, Any], channel_ref: str) -> StatusUpdate | None:
    # Bounded like inbound ids: a longer one can match no row we stored.
    message_id = bounded_id(raw.get("id"), "statuses[].id")
    status = _STATUS_MAP.get(optional_str(raw.get("status")).lower())
    if status is None:
        return None  # e.g. "deleted"/"warning": nothing an outbound row tracks
    errors = optional_list(raw.get("errors"), "statuses[].errors")
    return StatusUpdate(
        provider_message_id=message_id,
        status=status,
        timestamp=parse_epoch(raw.get("timestamp"), "statuses[].timestamp"),
        error=_describe_error(errors[0]) if errors else "",
        channel_ref=channel_ref,
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


def _shared_contact(contact: object) -> str:
    """A shared contact as "Name (+55 11 ...)": the name and its numbers (what the customer
    sent is someone to call)."""
    name = optional_str(dig(contact, "name", "formatted_name"))
    phones = [
        optional_str(dig(p, "phone")) for p in optional_list(dig(contact, "phones"), "phones")
    ]
    numbers = ", ".join(p for p in phones if p)
    return f"{name} ({numbers})" if name and numbers else name or numbers


def _order_item(item: object) -> str:
    """One cart line: "3× HAMBURGER"."""
    product = optional_str(dig(item, "product_retailer_id"))
    quantity = dig(item, "quantity")
    if not product:
        return ""
    return f"{quantity}× {product}" if isinstance(quantity, int) and quantity > 0 else product
