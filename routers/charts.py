"""A stacked bar chart as plain geometry, drawn by the template as inline SVG.

No JavaScript and no chart library: the decisions page renders on the server like every
other page, and the numbers behind each bar are in its ``<title>`` for screen readers and
hover.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

# Colour-blind-safe palette (Okabe-Ito, without the near-white); "no intent" is grey.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
NO_INTENT_COLOR = "#9AA0A6"
NO_INTENT_LABEL = _("sem intenção (reserva ou padrão)")


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    color: str
    label: str
    count: int
    day: dt.date


@dataclass(frozen=True)
class Tick:
    pos: float
    text: str


@dataclass(frozen=True)
class LegendItem:
    color: str
    label: str
    total: int


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    plot_left: float
    plot_top: float
    plot_bottom: float
    plot_right: float
    bars: tuple[Bar, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    legend: tuple[LegendItem, ...]
    max_value: int

    @property
    def empty(self) -> bool:
        return self.max_value == 0


def _nice_max(value: int) -> int:
    """The smallest of 1, 2, 5 x 10^k at or above ``value`` (axis top)."""
    if value <= 0:
        return 1
    exponent = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if step * exponent >= value:
            return step * exponent
    return 10 * exponent


def stacked_bars(
    days: Sequence[dt.date],
    series: Mapping[str, Sequence[int]],
    *,
    width: int = 720,
    height: int = 240,
) -> Chart:
    """One bar per day, stacked by series (in ``series`` order, bottom up)."""
    left, right, top, bottom = 36.0, width - 8.0, 8.0, height - 28.0
    colors: dict[str, str] = {}
    for i, name in enumerate(n for n in series if n):
        colors[name] = PALETTE[i % len(PALETTE)]
    colors[""] = NO_INTENT_COLOR
    totals = [sum(values[i] for values in series.values()) for i in range(len(days))]
    top_value = _nice_max(max(totals, default=0))
    slot = (right - left) / max(len(days), 1)
    bar_width = slot * 0.7
    scale = (bottom - top) / top_value
    bars: list[Bar] = []
    for i, day in enumerate(days):
        y = bottom
        x = left + i * slot + (slot - bar_width) / 2
        for name, values in series.items():
            count = values[i]
            if not count:
                continue
            h = count * scale
            y -= h
            bars.append(
                Bar(
                    x=round(x, 2),
                    y=round(y, 2),
                    width=round(bar_width, 2),
                    height=round(h, 2),
                    color=colors[name],
                    label=name or str(NO_INTENT_LABEL),
                    count=count,
                    day=day,
                )
            )
    every = max(1, math.ceil(len(days) / 7))  # at most ~7 date labels
    x_ticks = tuple(
        Tick(round(left + i * slot + slot / 2, 2), day.strftime("%d/%m"))
        for i, day in enumerate(days)
        if i % every == 0 or i == len(days) - 1
    )
    y_ticks = tuple(
        Tick(round(bottom - v * scale, 2), str(v)) for v in sorted({0, top_value // 2, top_value})
    )
    legend = tuple(
        LegendItem(colors[name], name or str(NO_INTENT_LABEL), sum(values))
        for name, values in series.items()
        if sum(values)
    )
    return Chart(
        width=width,
        height=height,
        plot_left=left,
        plot_top=top,
        plot_bottom=bottom,
        plot_right=right,
        bars=tuple(bars),
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        legend=legend,
        max_value=max(totals, default=0),
    )
