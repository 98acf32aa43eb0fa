"""Helpers for tests that read rendered pages."""

from __future__ import annotations

import re

# An asset the browser would fetch from another host ("No CDN: vendor static assets"): a
# script, stylesheet, image, frame or media source whose URL is absolute or protocol-relative.
# Links a person clicks (<a href>) are not assets.
_EXTERNAL_ASSET = re.compile(
    r"<(?:script|link|img|iframe|source|video|audio)\b[^>]*?\b(?:src|href)\s*=\s*[\"']?"
    r"(?:https?:)?//[^\s\"'>]+",
    re.IGNORECASE,
)


def external_assets(html: str) -> list[str]:
    """Every tag of ``html`` that loads an asset from another host."""
    return _EXTERNAL_ASSET.findall(html)
