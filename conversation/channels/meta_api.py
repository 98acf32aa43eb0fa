"""The Cloud API (Graph) calls beyond text and templates: media in and out, read receipts
with the typing indicator, and the account's message templates.

Formats (developers.facebook.com, WhatsApp Cloud API):

- Send a file by link: ``POST /{phone_number_id}/messages`` ``{"messaging_product":
  "whatsapp", "recipient_type": "individual", "to", "type": "image", "image": {"link",
  "caption"}}``; a document also takes ``filename``. An uploaded file: ``POST
  /{phone_number_id}/media`` (multipart) → ``{"id"}``, then ``"image": {"id", ...}``.
- Read + typing: the same endpoint, ``{"messaging_product": "whatsapp", "status": "read",
  "message_id": "wamid...", "typing_indicator": {"type": "text"}}`` → ``{"success": true}``.
  The indicator ends when the reply is sent, or after 25 seconds.
- Inbound media: ``GET /{media-id}`` → ``{"url", "mime_type", "sha256", "file_size", "id"}``,
  then ``GET url`` with the same Bearer token (the URL expires after minutes).
- Templates: ``GET /{waba_id}/message_templates?fields=name,language,status,category,
  components`` → ``{"data": [...], "paging": {"next": ...}}``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from conversation.channels._parsing import dig, optional_str
from conversation.channels.base import (
    ChannelConfig,
    MediaDownload,
    MediaRef,
    OutboundMedia,
    SendError,
    TemplateInfo,
    too_large_error,
)
from conversation.channels.transport import get_bytes, get_json, post_files, post_json

DEFAULT_GRAPH_URL = "https://graph.facebook.com/v21.0"
SENDABLE_KINDS = frozenset({"image", "document", "video", "audio"})
# One sync reads at most this many pages of 100 templates.
MAX_TEMPLATE_PAGES = 10
_PLACEHOLDER = re.compile(r"\{\{\s*([^{}\s]+)\s*\}\}")

ErrorMapper = Callable[[httpx.Response], SendError]


def graph_url(config: ChannelConfig) -> str:
    return (config.api_base_url.strip() or DEFAULT_GRAPH_URL).rstrip("/")


def auth(config: ChannelConfig) -> dict[str, str]:
    if not config.api_token:
        raise SendError(
            "meta: channel needs an access token", retryable=False, code="invalid_config"
        )
    return {"Authorization": f"Bearer {config.api_token}"}


def media_payload(to: str, media: OutboundMedia, *, uploaded_id: str = "") -> dict[str, Any]:
    """The message body of a file sent by link, or by the id of an upload (``to`` already
    digits only)."""
    if media.kind not in SENDABLE_KINDS:
        raise SendError(f"meta: cannot send {media.kind!r}", retryable=False, code="unsupported")
    detail: dict[str, Any]
    if uploaded_id:
        detail = {"id": uploaded_id}
    elif media.url.startswith("https://"):
        detail = {"link": media.url}
    else:
        # Meta fetches the link itself and refuses plain http.
        raise SendError("meta: file link must be https", retryable=False, code="invalid_message")
    if media.caption and media.kind != "audio":  # audio takes no caption
        detail["caption"] = media.caption
    if media.kind == "document" and media.filename:
        detail["filename"] = media.filename
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": media.kind,
        media.kind: detail,
    }


def upload(config: ChannelConfig, media: OutboundMedia, *, error_mapper: ErrorMapper) -> str:
    """``POST /{phone_number_id}/media`` (multipart: ``messaging_product``, ``type``, ``file``)
    -> the media id to send. Meta keeps an upload for 30 days."""
    mime = media.mime_type or "application/octet-stream"
    data = post_files(
        f"{graph_url(config)}/{config.external_id}/media",
        headers=auth(config),
        data={"messaging_product": "whatsapp", "type": mime},
        files={"file": (media.filename or "arquivo", media.content, mime)},
        provider="meta",
        error_mapper=error_mapper,
    )
    media_id = optional_str(data.get("id"))
    if not media_id:
        raise SendError("meta: upload returned no id", retryable=True, code="provider_unavailable")
    return media_id


def read_payload(message_id: str, *, typing: bool) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "status": "read",
        "message_id": message_id,
    }
    if typing:
        payload["typing_indicator"] = {"type": "text"}
    return payload


def mark_read(
    config: ChannelConfig, *, message_id: str, typing: bool, error_mapper: ErrorMapper
) -> None:
    if not message_id or not config.external_id:
        raise SendError("meta: nothing to mark read", retryable=False, code="invalid_message")
    post_json(
        f"{graph_url(config)}/{config.external_id}/messages",
        headers=auth(config),
        payload=read_payload(message_id, typing=typing),
        provider="meta",
        error_mapper=error_mapper,
    )


def fetch_media(
    config: ChannelConfig, *, media: MediaRef, max_bytes: int, error_mapper: ErrorMapper
) -> MediaDownload:
    if not media.media_id:
        raise SendError("meta: the message has no media id", retryable=False, code="not_found")
    headers = auth(config)
    info = get_json(
        f"{graph_url(config)}/{quote(media.media_id, safe='')}",
        headers=headers,
        provider="meta",
        error_mapper=error_mapper,
    )
    url = optional_str(info.get("url"))
    if not url.startswith("https://"):
        raise SendError("meta: no download URL for the media", retryable=False, code="not_found")
    size = info.get("file_size")
    if isinstance(size, int | str) and str(size).isdigit() and int(size) > max_bytes:
        raise too_large_error("meta", max_bytes)
    content, content_type = get_bytes(
        url, headers=headers, provider="meta", error_mapper=error_mapper, max_bytes=max_bytes
    )
    mime = (
        media.mime_type
        or optional_str(info.get("mime_type"))
        or content_type.split(";")[0].strip()
        or "application/octet-stream"
    )
    return MediaDownload(content=content, mime_type=mime, filename=media.filename)


def list_templates(config: ChannelConfig, *, error_mapper: ErrorMapper) -> Sequence[TemplateInfo]:
    waba = str(config.extra.get("business_account_id") or "").strip()
    if not waba:
        raise SendError(
            "meta: the channel has no WhatsApp Business Account id",
            retryable=False,
            code="invalid_config",
        )
    headers = auth(config)
    base = graph_url(config)
    url: str | None = f"{base}/{quote(waba, safe='')}/message_templates"
    params: dict[str, str] | None = {
        "fields": "name,language,status,category,components",
        "limit": "100",
    }
    found: list[TemplateInfo] = []
    for _ in range(MAX_TEMPLATE_PAGES):
        if url is None:
            break
        data = get_json(
            url, headers=headers, params=params, provider="meta", error_mapper=error_mapper
        )
        for raw in data.get("data") or []:
            template = template_info(raw)
            if template is not None:
                found.append(template)
        url, params = _next_page(dig(data, "paging", "next"), base), None
    return found


def template_info(raw: object) -> TemplateInfo | None:
    """One entry of ``message_templates`` (None when it names no template)."""
    if not isinstance(raw, dict):
        return None
    name, language = optional_str(raw.get("name")), optional_str(raw.get("language"))
    if not name or not language:
        return None
    body = ""
    components = raw.get("components")
    for component in components if isinstance(components, list) else ():
        if isinstance(component, dict) and optional_str(component.get("type")).upper() == "BODY":
            body = optional_str(component.get("text"))
    return TemplateInfo(
        name=name[:120],
        language=language[:16],
        status=optional_str(raw.get("status")).upper()[:24],
        category=optional_str(raw.get("category")).upper()[:24],
        body=body[:1024],
        parameters=len(dict.fromkeys(_PLACEHOLDER.findall(body))),
    )


def _next_page(value: object, base: str) -> str | None:
    # Follow ``paging.next`` only on the Graph host the token was meant for.
    if not isinstance(value, str) or not value:
        return None
    return value if urlsplit(value).netloc == urlsplit(base).netloc else None
