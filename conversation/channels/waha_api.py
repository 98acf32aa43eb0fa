"""WAHA's HTTP API beyond text: media in and out, "seen" and typing, and the shared pieces
(headers, error mapping, the sent message's id) that ``waha.WahaAdapter`` uses.

Request formats (WAHA OpenAPI 2026.7.1, ``tests/fixtures/channels/``):

- ``POST /api/sendImage`` / ``/api/sendFile``: ``{"session", "chatId", "file": {"mimetype",
  "filename", "url"}, "caption"}`` (``RemoteFile``: WAHA downloads ``url`` itself).
- ``POST /api/sendSeen``: ``{"session", "chatId", "messageIds": [id]}`` — the docs tie reading
  before replying to "How to avoid blocking".
- ``POST /api/startTyping`` / ``/api/stopTyping``: ``{"session", "chatId"}``.
- Inbound files: ``payload.media.url`` points at WAHA's own ``/api/files/...`` (as WAHA sees
  itself, often ``http://localhost:3000``): it is fetched from the channel's ``api_base_url``
  with the key; a URL elsewhere (a pre-signed S3 URL) is fetched without it, so the key never
  leaves for another host.
"""

from __future__ import annotations

import base64
import mimetypes
from typing import Any
from urllib.parse import urlsplit

import httpx

from conversation.channels._parsing import coordinate, dig, optional_str
from conversation.channels.base import (
    MAX_FILENAME_LENGTH,
    MAX_LABEL,
    MAX_MEDIA_URL_LENGTH,
    MAX_MIME_LENGTH,
    ChannelConfig,
    MediaDownload,
    MediaRef,
    OutboundMedia,
    SendError,
    SendResult,
)
from conversation.channels.transport import (
    classify_status,
    fallback_message_id,
    get_bytes,
    json_or_empty,
    post_json,
)
from conversation.channels.waha_ids import chat_id_for, phone_of

API_KEY_HEADER = "X-Api-Key"
MEDIA_KINDS = frozenset({"image", "video", "audio", "document", "sticker", "media"})
# Which endpoint sends which kind (video and voice notes need WAHA Plus on some engines; a
# document is any file).
_SEND_ENDPOINTS = {"image": "sendImage", "document": "sendFile", "video": "sendVideo"}
_FILES_PATH = "/api/files/"


def base_url(config: ChannelConfig) -> str:
    url = config.api_base_url.strip().rstrip("/")
    if not url or not config.external_id:
        raise SendError(
            "waha: channel needs api_base_url and a session name",
            retryable=False,
            code="invalid_config",
        )
    return url


def headers(config: ChannelConfig) -> dict[str, str]:
    result = {"Accept": "application/json"}
    if config.api_token:
        result[API_KEY_HEADER] = config.api_token
    return result


def call(config: ChannelConfig, endpoint: str, payload: dict[str, Any]) -> dict[str, Any]:
    """POST ``payload`` to ``/api/<endpoint>`` of the channel's WAHA server."""
    return post_json(
        f"{base_url(config)}/api/{endpoint}",
        headers=headers(config),
        payload=payload,
        provider="waha",
        error_mapper=error_from_response,
    )


# -- inbound media ------------------------------------------------------------------------


def media_ref(payload: dict[str, Any], kind: str, data_type: str) -> MediaRef | None:
    """The file (``payload.media``: url on the WAHA server, mimetype, filename, error) or the
    location of a WAMessage; None for text. Over-long values are dropped, names cut."""
    if kind == "location":
        location = payload.get("location")
        if not isinstance(location, dict):
            return None
        lat, lng = coordinate(location.get("latitude")), coordinate(location.get("longitude"))
        if lat is None or lng is None:
            return None
        parts = (optional_str(location.get(k)) for k in ("name", "address"))
        label = ", ".join(p for p in parts if p) or optional_str(location.get("description"))
        return MediaRef(kind="location", latitude=lat, longitude=lng, label=label[:MAX_LABEL])
    if kind not in MEDIA_KINDS:
        return None
    media = payload.get("media")
    media = media if isinstance(media, dict) else {}
    url = optional_str(media.get("url"))
    usable = len(url) <= MAX_MEDIA_URL_LENGTH and url.startswith(("http://", "https://"))
    error = media.get("error")
    return MediaRef(
        kind=kind,
        url=url if usable else "",
        mime_type=optional_str(media.get("mimetype"))[:MAX_MIME_LENGTH],
        filename=optional_str(media.get("filename"))[:MAX_FILENAME_LENGTH],
        caption=optional_str(payload.get("body")) if kind != "sticker" else "",
        voice=data_type == "ptt",
        error=str(error)[:200] if error not in (None, False, "") else "",
    )


def fetch_media(config: ChannelConfig, *, media: MediaRef, max_bytes: int) -> MediaDownload:
    if not media.url:
        raise SendError("waha: the message has no file URL", retryable=False, code="not_found")
    url, with_key = _download_url(config, media.url)
    content, content_type = get_bytes(
        url,
        headers=headers(config) if with_key else {},
        provider="waha",
        error_mapper=error_from_response,
        max_bytes=max_bytes,
    )
    mime = media.mime_type or content_type.split(";")[0].strip() or "application/octet-stream"
    return MediaDownload(content=content, mime_type=mime, filename=media.filename)


def _download_url(config: ChannelConfig, url: str) -> tuple[str, bool]:
    """Where to fetch ``url`` and whether the API key goes with it.

    A WAHA file path is fetched from the channel's own server (the host in the webhook is the
    one WAHA believes it has); any other URL without the key."""
    parts = urlsplit(url)
    if parts.path.startswith(_FILES_PATH):
        query = f"?{parts.query}" if parts.query else ""
        return f"{base_url(config)}{parts.path}{query}", True
    return url, False


# -- outbound media and presence -----------------------------------------------------------


def send_media(
    config: ChannelConfig, *, to: str, media: OutboundMedia, reply_to: str | None = None
) -> SendResult:
    endpoint = _SEND_ENDPOINTS.get(media.kind)
    if endpoint is None:
        raise SendError(
            f"waha: cannot send {media.kind!r} files", retryable=False, code="unsupported"
        )
    file: dict[str, Any] = {"mimetype": _mime_of(media)}
    if media.content:
        file["data"] = base64.b64encode(media.content).decode("ascii")  # BinaryFile
    elif media.url.startswith(("http://", "https://")):
        file["url"] = media.url  # RemoteFile: WAHA downloads it
    else:
        raise SendError("waha: file URL must be http(s)", retryable=False, code="invalid_message")
    if media.filename:
        file["filename"] = media.filename
    payload: dict[str, Any] = {
        "session": config.external_id,
        "chatId": chat_id_for(to),
        "file": file,
    }
    if media.caption:
        payload["caption"] = media.caption
    if reply_to:
        payload["reply_to"] = reply_to
    base_url(config)  # the config check comes before the request is built
    return SendResult(provider_message_id=sent_message_id(call(config, endpoint, payload)))


def mark_read(config: ChannelConfig, *, to: str, message_id: str, typing: bool) -> None:
    chat = chat_id_for(to)
    seen: dict[str, Any] = {"session": config.external_id, "chatId": chat}
    if message_id:
        seen["messageIds"] = [message_id]
    call(config, "sendSeen", seen)
    if typing:
        call(config, "startTyping", {"session": config.external_id, "chatId": chat})


def stop_typing(config: ChannelConfig, *, to: str) -> None:
    call(config, "stopTyping", {"session": config.external_id, "chatId": chat_id_for(to)})


def _mime_of(media: OutboundMedia) -> str:
    if media.mime_type:
        return media.mime_type
    guessed, _ = mimetypes.guess_type(media.filename or urlsplit(media.url).path)
    if guessed:
        return guessed
    return "image/jpeg" if media.kind == "image" else "application/octet-stream"


# -- responses -----------------------------------------------------------------------------


def sent_message_id(data: dict[str, Any]) -> str:
    """The id WAHA will use in ``message.ack``; response shapes differ per engine."""
    for candidate in (
        data.get("id"),
        dig(data, "id", "_serialized"),  # WEBJS
        dig(data, "_data", "id", "_serialized"),  # WEBJS, raw message
    ):
        if isinstance(candidate, str) and candidate:
            return candidate
    key = data.get("key")  # NOWEB returns the raw Baileys message: rebuild the serialized id
    if isinstance(key, dict):
        remote, key_id = key.get("remoteJid"), key.get("id")
        if isinstance(remote, str) and isinstance(key_id, str) and remote and key_id:
            phone = phone_of(remote)
            chat = f"{phone}@c.us" if phone else remote
            from_me = "true" if key.get("fromMe", True) is not False else "false"
            return f"{from_me}_{chat}_{key_id}"
    return fallback_message_id("waha")


def error_from_response(response: httpx.Response) -> SendError:
    data = json_or_empty(response)
    detail = data.get("message")
    if isinstance(detail, list):  # NestJS validation errors
        detail = "; ".join(str(item) for item in detail)
    if not isinstance(detail, str) or not detail:
        detail = dig(data, "exception", "message") or data.get("error") or response.reason_phrase
    code, retryable = classify_status(response.status_code)
    if response.status_code == 422 and _session_not_working(data, str(detail)):
        # The session is starting, reconnecting or waiting for a QR scan: the message is
        # fine, the number is not ready yet. Resent when the channel recovers (DESIGN §5).
        code, retryable = "provider_unavailable", True
    return SendError(
        f"waha: HTTP {response.status_code}: {str(detail)[:300]}",
        retryable=retryable,
        code=code,
        provider_code=str(response.status_code),
        http_status=response.status_code,
    )


def _session_not_working(data: dict[str, Any], detail: str) -> bool:
    """WAHA's 422 for a session that is not WORKING: ``{"error": "Session status is not as
    expected. Try again later or restart the session", "status": "STARTING", "expected":
    ["WORKING"]}`` (devlikeapro/waha #1329), or "The session under FAILED status. Please try
    to restart it." (#289). Any other 422 is a message WAHA refuses."""
    expected = data.get("expected")
    if isinstance(expected, list) and "WORKING" in expected:
        return True
    text = detail.lower()
    return "session status is not as expected" in text or "the session under" in text
