"""WhatsApp chat ids as WAHA writes them, and turning them into customer phone numbers.

``<digits>@c.us`` is a phone; ``<digits>@s.whatsapp.net`` the same in engine-raw form, maybe
with a ``:device`` suffix; ``<id>@lid`` WhatsApp's hidden "linked id"; ``@g.us`` groups,
``status@broadcast`` and ``@newsletter`` are not one-to-one chats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conversation.channels._parsing import dig
from conversation.channels.base import SendError, WebhookError

_PHONE_SERVERS = frozenset({"c.us", "s.whatsapp.net"})
# Chats that are not one customer talking to the business, by server: IgnoredEvent codes.
IGNORED_SERVERS: Mapping[str, str] = {
    "g.us": "group_chat",
    "broadcast": "broadcast_chat",
    "newsletter": "newsletter_chat",
}
# Where engines name the chat themselves (GOWS ``Info.Chat``, NOWEB ``key.remoteJid``).
_ENGINE_CHATS: Sequence[tuple[str, ...]] = (
    ("_data", "Info", "Chat"),
    ("_data", "key", "remoteJid"),
)

# Where engines put the other form (phone <-> lid) of the chat's id, in order of trust.
INBOUND_ALTERNATIVES: Sequence[tuple[str, ...]] = (
    ("_data", "key", "remoteJidAlt"),
    ("_data", "key", "senderPn"),
    ("_data", "key", "senderLid"),
    ("_data", "Info", "SenderAlt"),
    ("_data", "Info", "Sender"),
    ("_data", "Info", "Chat"),
)
OUTBOUND_ALTERNATIVES: Sequence[tuple[str, ...]] = (
    ("_data", "key", "remoteJidAlt"),
    ("_data", "Info", "RecipientAlt"),
    ("_data", "Info", "Chat"),
)


def chat_id_for(to: str) -> str:
    """``"+55 11 99999-0000"`` -> ``"5511999990000@c.us"``; chat ids (``...@lid``) pass through."""
    cleaned = to.strip()
    if "@" in cleaned:
        return cleaned
    digits = "".join(ch for ch in cleaned if ch not in "+ -().")
    if not (digits.isascii() and digits.isdigit()):
        raise SendError(
            "waha: recipient is not a phone number", retryable=False, code="invalid_recipient"
        )
    return f"{digits}@c.us"


def server_of(jid: str) -> str:
    return jid.rpartition("@")[2].lower() if "@" in jid else ""


def ignored_chat(chat: str, payload: dict[str, Any]) -> tuple[str, str] | None:
    """``(code, chat id)`` when the message was not written in a one-to-one chat: a group
    (``@g.us``), a status broadcast or a newsletter — by ``chat``, or by what the engine says
    (GOWS ``Info.IsGroup``/``Info.Chat``, NOWEB ``key.remoteJid``) even when ``from`` names
    the participant. None for a one-to-one chat."""
    for jid in (chat, *(dig(payload, *path) for path in _ENGINE_CHATS)):
        if isinstance(jid, str) and (code := IGNORED_SERVERS.get(server_of(jid))):
            return code, jid
    if dig(payload, "_data", "Info", "IsGroup") is True:
        return "group_chat", ""  # no group id to log (``chat`` names a person)
    return None


def phone_of(jid: str) -> str:
    """Digits of a phone chat id (``@c.us``/``@s.whatsapp.net``, device suffix dropped), or ""."""
    user, _, server = jid.strip().partition("@")
    if server and server.lower() not in _PHONE_SERVERS:
        return ""
    digits = user.split(":", 1)[0].lstrip("+")
    return digits if digits.isascii() and digits.isdigit() and 5 <= len(digits) <= 20 else ""


def lid_of(jid: str) -> str:
    user, _, server = jid.strip().partition("@")
    user = user.split(":", 1)[0]
    return f"{user}@lid" if server.lower() == "lid" and user else ""


def resolve_contact(
    chat: str, payload: dict[str, Any], alternatives: Sequence[tuple[str, ...]]
) -> tuple[str, str]:
    """(phone digits or "", lid or "") from the chat id and the engine's alternative ids."""
    candidates = [chat]
    for path in alternatives:
        value = dig(payload, *path)
        if isinstance(value, dict):  # WEBJS serializes ids as {"_serialized": ...}
            value = value.get("_serialized")
        if isinstance(value, str):
            candidates.append(value)
    phone = next((p for p in map(phone_of, candidates) if p), "")
    lid = next((x for x in map(lid_of, candidates) if x), "")
    if not phone and not lid:
        raise WebhookError("payload.from is not a WhatsApp chat id", code="invalid_sender")
    return phone, lid
