"""Formatting of the analytics figures: shares, durations, dollars (pt-BR)."""

from __future__ import annotations

from decimal import Decimal

from django import template

register = template.Library()
DASH = "—"


@register.filter
def pct(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value * 100:.1f}%".replace(".", ",")


@register.filter
def duration(seconds: float | None) -> str:
    if seconds is None:
        return DASH
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    minutes = s // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


@register.filter
def usd(value: Decimal | None, places: int = 4) -> str:
    if value is None:
        return DASH
    text = f"{value:,.{int(places)}f}"
    # 1,234.5678 → 1.234,5678
    return "US$ " + text.replace(",", "\x00").replace(".", ",").replace("\x00", ".")
