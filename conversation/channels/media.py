"""Media values between the adapters and storage: the Message columns a ``MediaRef`` fills,
the ``MediaRef`` a stored message describes again (to fetch its file later), and the few
display rules the pages share (which files play inline, a location's map link).

Pure: no Django. ``conversation.outbox.media`` does the storing and fetching.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from conversation.channels.base import MediaRef

MEDIA_KINDS = frozenset({"image", "audio", "video", "document", "sticker", "media"})
# What staff may attach to a reply (sent by link).
OUTBOUND_KINDS = frozenset({"image", "document"})
# Served inline by the proxy (the browser shows them in <img>/<audio>/<video>); any other type
# is served as an attachment so an uploaded HTML or SVG never renders on our origin.
INLINE_MIME_PREFIXES = ("image/jpeg", "image/png", "image/webp", "image/gif", "audio/", "video/")


def columns_for(ref: MediaRef | None) -> dict[str, Any]:
    """The ``Message`` column values that record ``ref`` (nothing for a text message)."""
    if ref is None:
        return {}
    meta: dict[str, Any] = {}
    if ref.sha256:
        meta["sha256"] = ref.sha256
    if ref.voice:
        meta["voice"] = True
    if ref.error:
        meta["provider_error"] = ref.error
    if ref.latitude is not None and ref.longitude is not None:
        meta.update(latitude=ref.latitude, longitude=ref.longitude)
        if ref.label:
            meta["label"] = ref.label
    return {
        "media_id": ref.media_id,
        "media_url": ref.url,
        "media_mime": ref.mime_type,
        "media_filename": ref.filename,
        "media_meta": meta,
    }


def ref_from_columns(
    *, kind: str, media_id: str, url: str, mime: str, filename: str, meta: Mapping[str, Any]
) -> MediaRef:
    return MediaRef(
        kind=kind,
        media_id=media_id,
        url=url,
        mime_type=mime,
        filename=filename,
        sha256=str(meta.get("sha256") or ""),
        voice=meta.get("voice") is True,
    )


def has_file(kind: str, media_id: str, url: str) -> bool:
    """The message names a file the provider can give us."""
    return kind in MEDIA_KINDS and bool(media_id or url)


def served_inline(mime: str) -> bool:
    mime = mime.lower().split(";")[0].strip()
    return any(mime.startswith(prefix) for prefix in INLINE_MIME_PREFIXES)


def map_link(meta: Mapping[str, Any]) -> str:
    """An OpenStreetMap link to a location message's point ("" without coordinates)."""
    lat, lng = meta.get("latitude"), meta.get("longitude")
    if not isinstance(lat, int | float) or not isinstance(lng, int | float):
        return ""
    query = urlencode({"mlat": f"{lat:.6f}", "mlon": f"{lng:.6f}"})
    return f"https://www.openstreetmap.org/?{query}#map=17/{lat:.6f}/{lng:.6f}"


def safe_filename(name: str, *, fallback: str) -> str:
    """A download name with no path, quote or control character."""
    cleaned = "".join(ch for ch in name if ch.isprintable() and ch not in '/\\"').strip(". ")
    return cleaned[:120] or fallback
