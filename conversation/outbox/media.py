"""Media through the outbox: fetching an inbound file for staff, and sending a file.

**In** (``message_media_fetch``): the first time someone opens a message's file, it is
downloaded from the provider (Meta: ``GET /{media-id}`` then the URL it names; WAHA: its
``/api/files/...``) with the channel's credentials, capped at ``WHATSAPP_MEDIA_MAX_BYTES``,
and kept through Django's storage API (``Message.media_file``: local files by default,
S3-compatible when ``STORAGES["default"]`` says so). Later views read the stored copy. The
browser only ever talks to our proxy view; the provider's token and URL never reach it.

**Out** (``outbound_media_enqueue``): an image or a document sent by link, stored at the
tail of the conversation's chain like any reply; the delivery calls the adapter's
``send_media`` (``conversation.outbox.delivery``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from accounts.services import audit_log_write
from conversation.channels import get_adapter
from conversation.channels.base import SendError
from conversation.channels.media import OUTBOUND_KINDS, has_file, ref_from_columns, safe_filename
from conversation.channels.transport import provider_timeout
from conversation.models import Conversation, Direction, Message, Turn

from .delivery import channel_config
from .writes import outbound_enqueue

log = logging.getLogger(__name__)

FETCH_TIMEOUT_S = 20.0
_EXTENSIONS = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/webp": ".webp",
    "audio/ogg": ".ogg",
    "audio/mpeg": ".mp3",
    "audio/mp4": ".m4a",
    "video/mp4": ".mp4",
    "application/pdf": ".pdf",
}


class MediaUnavailable(Exception):
    """The file cannot be had: ``code`` is ``no_media``, ``too_large``, ``not_found``,
    ``auth_failed``, ``unreachable``... (the page words it)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class StoredMedia:
    name: str  # the storage name
    mime_type: str
    filename: str


def max_bytes() -> int:
    return int(settings.WHATSAPP_MEDIA_MAX_BYTES)


def message_media_fetch(*, message: Message) -> StoredMedia:
    """The message's file in storage, downloading it once. No transaction or lock is held
    across the provider call; two first views racing both download, the last write wins
    (same bytes). The fetch is audited as system work (it changes the row)."""
    if message.media_file:
        return _stored(message)
    if message.direction != Direction.INBOUND or not has_file(
        message.kind, message.media_id, message.media_url
    ):
        raise MediaUnavailable("no_media")
    channel = message.channel
    ref = ref_from_columns(
        kind=message.kind,
        media_id=message.media_id,
        url=message.media_url,
        mime=message.media_mime,
        filename=message.media_filename,
        meta=message.media_meta or {},
    )
    try:
        with provider_timeout(FETCH_TIMEOUT_S):
            download = get_adapter(channel.provider).fetch_media(
                channel_config(channel), media=ref, max_bytes=max_bytes()
            )
    except SendError as exc:
        log.warning(
            "media fetch failed",
            extra={"message_id": str(message.pk), "error_code": exc.code},
        )
        code = exc.code if exc.code in ("too_large", "auth_failed", "not_found") else "unreachable"
        raise MediaUnavailable(code) from exc
    mime = download.mime_type.split(";")[0].strip().lower() or "application/octet-stream"
    name = f"{message.pk}{_EXTENSIONS.get(mime, '')}"
    with transaction.atomic():
        message.media_file.save(name, ContentFile(download.content), save=False)
        if not message.media_mime:
            message.media_mime = download.mime_type[:100]
        message.save(update_fields=["media_file", "media_mime"])
        audit_log_write(
            actor=None,
            actor_kind="system",
            action="message.media_fetch",
            resource=message,
            diff={"bytes": len(download.content), "mime": mime},
        )
    log.info("media stored", extra={"message_id": str(message.pk), "bytes": len(download.content)})
    return _stored(message)


def _stored(message: Message) -> StoredMedia:
    return StoredMedia(
        name=message.media_file.name,
        mime_type=message.media_mime or "application/octet-stream",
        filename=safe_filename(message.media_filename, fallback=f"{message.kind}-{message.pk}"),
    )


def outbound_media_enqueue(
    *,
    conversation: Conversation,
    kind: str,
    url: str = "",
    upload: UploadedFile | None = None,
    caption: str = "",
    filename: str = "",
    mime_type: str = "",
    sender_kind: str,
    actor: Any = None,
    turn: Turn | None = None,
) -> Message:
    """Queue an image or document (``kind`` in ``OUTBOUND_KINDS``) sent by its public link or
    as a file staff uploaded (kept in storage; the delivery sends its bytes). The caption is
    the message's text. Audited when a person sends it."""
    if kind not in OUTBOUND_KINDS:
        raise ValueError(f"cannot send {kind!r} files")
    if upload is None and not url.startswith(("https://", "http://")):
        raise ValueError("a file is sent by its http(s) URL or uploaded")
    if upload is not None:
        url = ""
        filename = filename or upload.name or ""
        mime_type = mime_type or upload.content_type or ""
    with transaction.atomic():
        message = outbound_enqueue(
            conversation=conversation,
            body=caption,
            sender_kind=sender_kind,
            turn=turn,
            sent_by=actor if getattr(actor, "is_authenticated", False) else None,
            kind=kind,
            media={
                "media_url": url[:1000],
                "media_filename": filename[:200],
                "media_mime": mime_type[:100],
            },
        )
        if upload is not None:
            extension = _EXTENSIONS.get(message.media_mime.split(";")[0].strip().lower(), "")
            message.media_file.save(f"{message.pk}{extension}", upload, save=False)
            message.save(update_fields=["media_file"])
        conversation.save(update_fields=["last_message_at"])
        audit_log_write(
            actor=actor,
            actor_kind="user" if actor is not None else "system",
            action="message.media_send",
            resource=message,
            diff={"kind": kind, "filename": message.media_filename},
        )
    return message
