"""Small pure helpers shared by the adapters: JSON loading, timestamps, headers, HMAC compare.

Every helper either returns a clean value or raises ``WebhookError``/``SignatureError``, so an
adapter's ``parse_webhook`` never leaks a ``KeyError``/``TypeError`` to the webhook view.
"""

from __future__ import annotations

import hmac
import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from conversation.channels.base import (
    MAX_MESSAGE_ID_LENGTH,
    MAX_PHONE_LENGTH,
    SignatureError,
    WebhookError,
)

# Body text stored for messages that carry no text of their own. pt-BR because back-office
# staff read them in the conversation page and the agent sees them in its history.
PLACEHOLDERS: Mapping[str, str] = {
    "image": "[imagem]",
    "audio": "[áudio]",
    "video": "[vídeo]",
    "document": "[documento]",
    "sticker": "[figurinha]",
    "location": "[localização]",
    "contacts": "[contato]",
    "interactive": "[resposta interativa]",
    "button": "[botão]",
    "reaction": "[reação]",
    "order": "[pedido]",
    "media": "[mídia]",
}
UNSUPPORTED_PLACEHOLDER = "[mensagem não suportada]"

# 9999-12-31T23:59:59Z: the largest instant a datetime can hold.
_MAX_EPOCH_SECONDS = 253_402_300_799

# After json.loads a valid surrogate pair is already one astral character, so any surrogate
# code point left in a str is a lone one: it cannot be encoded to UTF-8 (the database refuses
# it), and neither can PostgreSQL store NUL in text.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT_CHARACTER = "\ufffd"


def placeholder(kind: str) -> str:
    return PLACEHOLDERS.get(kind, UNSUPPORTED_PLACEHOLDER)


def location_text(location: Mapping[str, Any], label_keys: tuple[str, ...]) -> str:
    """The body stored for a shared location: the placeholder, then its non-empty labels
    (``label_keys``, in order, joined), else its coordinates."""
    label = ", ".join(p for p in (optional_str(location.get(k)) for k in label_keys) if p)
    if not label:
        lat, lng = location.get("latitude"), location.get("longitude")
        if isinstance(lat, int | float | str) and isinstance(lng, int | float | str):
            label = f"{lat}, {lng}"
    return f"{placeholder('location')} {label}".strip()


def clean_text(value: str) -> str:
    """``value`` without NUL characters and with each lone surrogate replaced by U+FFFD.

    Deterministic, so a redelivered event cleans to the same id and is still deduplicated.
    """
    if "\x00" in value:
        value = value.replace("\x00", "")
    if _LONE_SURROGATE.search(value):
        value = _LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, value)
    return value


def clean_tree(data: Any) -> Any:
    """Apply ``clean_text`` to every string (keys too) of a decoded JSON document, in place.

    Iterative: the document may be nested as deep as json.loads allowed.
    """
    if isinstance(data, str):
        return clean_text(data)
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in list(node):
                value = node[key]
                if isinstance(value, str):
                    value = clean_text(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
                clean_key = clean_text(key)
                if clean_key != key:
                    del node[key]
                node[clean_key] = value
        elif isinstance(node, list):
            for index, value in enumerate(node):
                if isinstance(value, str):
                    node[index] = clean_text(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
    return data


def _may_need_cleaning(body: bytes) -> bool:
    # NUL and lone surrogates reach a str only as a \u escape or as raw surrogate bytes
    # (UTF-8 lead byte 0xED, which json.loads decodes with "surrogatepass").
    return b"\\u" in body or b"\xed" in body


def load_json_object(body: bytes) -> dict[str, Any]:
    """Decode a webhook body that must be a JSON object; every string comes out clean."""
    if not isinstance(body, bytes | bytearray):
        raise WebhookError("body must be bytes", code="invalid_body")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        # ValueError covers bad JSON, bad UTF-8 and over-long integers; RecursionError deep nesting.
        raise WebhookError("body is not valid JSON", code="invalid_json") from exc
    if not isinstance(data, dict):
        raise WebhookError("body must be a JSON object", code="invalid_payload")
    if _may_need_cleaning(bytes(body)):
        clean_tree(data)
    return data


def bounded_id(value: object, where: str) -> str:
    """A provider message id: non-empty and no longer than the storage holds."""
    text = require_str(value, where, code="missing_id")
    if len(text) > MAX_MESSAGE_ID_LENGTH:
        raise WebhookError(
            f"{where} is longer than {MAX_MESSAGE_ID_LENGTH} characters", code="invalid_id"
        )
    return text


def bounded_phone(value: str, where: str) -> str:
    """A customer's phone or WhatsApp id: no longer than the storage holds, no whitespace."""
    if len(value) > MAX_PHONE_LENGTH:
        raise WebhookError(
            f"{where} is longer than {MAX_PHONE_LENGTH} characters", code="invalid_sender"
        )
    if not value.isprintable() or any(ch.isspace() for ch in value):
        raise WebhookError(f"{where} is not a WhatsApp id", code="invalid_sender")
    return value


def optional_id(value: object) -> str | None:
    """An optional reference to another message (a quoted reply): dropped when unusable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    return text if len(text) <= MAX_MESSAGE_ID_LENGTH else None


def require_object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WebhookError(f"{where} must be an object", code="invalid_payload")
    return value


def optional_object(value: object, where: str) -> dict[str, Any]:
    """An object, or an empty one when the key is absent/null."""
    if value is None:
        return {}
    return require_object(value, where)


def optional_list(value: object, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise WebhookError(f"{where} must be a list", code="invalid_payload")
    return value


def require_str(value: object, where: str, *, code: str = "invalid_payload") -> str:
    if not isinstance(value, str) or not value.strip():
        raise WebhookError(f"{where} must be a non-empty string", code=code)
    return value.strip()


def optional_str(value: object) -> str:
    """A string field that may be missing or of the wrong type: used only for display text."""
    return value.strip() if isinstance(value, str) else ""


def dig(data: object, *path: str) -> object:
    """Follow ``path`` through nested objects; None when any step is missing or not an object."""
    current = data
    for key in path:
        if not isinstance(current, dict):
            return None
        current = current.get(key)
    return current


def parse_epoch(value: object, where: str, *, millis: bool = False) -> datetime:
    """Unix time (seconds, or milliseconds) as an int, float or numeric string -> aware UTC."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise WebhookError(f"{where} must be a unix timestamp", code="invalid_timestamp")
    try:
        number = float(value)
    except (ValueError, OverflowError) as exc:
        raise WebhookError(f"{where} must be a unix timestamp", code="invalid_timestamp") from exc
    seconds = number / 1000 if millis else number
    if not math.isfinite(seconds) or not 0 <= seconds <= _MAX_EPOCH_SECONDS:
        raise WebhookError(f"{where} is out of range", code="invalid_timestamp")
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise WebhookError(f"{where} is out of range", code="invalid_timestamp") from exc


def coordinate(value: object) -> float | None:
    """A latitude/longitude as a finite float (a JSON number or numeric string), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and abs(number) <= 180 else None


def get_header(headers: Mapping[str, str], name: str) -> str:
    """Case-insensitive header lookup (Django's ``request.headers`` is; a plain dict is not)."""
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return value.strip() if isinstance(value, str) else ""


def require_secret(secret: str) -> bytes:
    # Fail closed: a channel without a configured secret accepts nothing.
    if not secret:
        raise SignatureError("no webhook secret configured for this channel")
    return secret.encode()


def constant_time_equal(given: str, expected: str) -> bool:
    # Compare bytes: hmac.compare_digest refuses non-ASCII str, and headers are attacker-controlled.
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode())
