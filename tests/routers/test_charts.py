"""The decisions chart's geometry: bars stack inside the plot, one colour per intent."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routers.charts import NO_INTENT_COLOR, NO_INTENT_LABEL, stacked_bars

DAYS = tuple(dt.date(2026, 11, 1) + dt.timedelta(days=i) for i in range(3))


def test_bars_stack_per_day_with_heights_proportional_to_counts():
    chart = stacked_bars(DAYS, {"vendas": [2, 0, 1], "suporte": [2, 0, 0], "": [0, 0, 1]})
    assert chart.max_value == 4
    day0 = [b for b in chart.bars if b.day == DAYS[0]]
    assert [(b.label, b.count) for b in day0] == [("vendas", 2), ("suporte", 2)]
    assert day0[0].height == day0[1].height
    assert day0[1].y + day0[1].height == pytest.approx(day0[0].y)  # suporte sits on top of vendas
    assert not [b for b in chart.bars if b.day == DAYS[1]]
    assert {b.color for b in chart.bars if b.label == NO_INTENT_LABEL} == {NO_INTENT_COLOR}
    assert [(i.label, i.total) for i in chart.legend] == [
        ("vendas", 3),
        ("suporte", 2),
        (NO_INTENT_LABEL, 1),
    ]


def test_empty_window_is_an_empty_chart():
    chart = stacked_bars(DAYS, {})
    assert chart.empty and chart.bars == ()


@given(st.dictionaries(st.text(max_size=4), st.lists(st.integers(0, 500), min_size=3, max_size=3)))
def test_every_bar_stays_inside_the_plot(series):
    chart = stacked_bars(DAYS, series)
    for bar in chart.bars:
        assert bar.height > 0
        assert chart.plot_top - 0.01 <= bar.y
        assert bar.y + bar.height <= chart.plot_bottom + 0.01
        assert chart.plot_left <= bar.x and bar.x + bar.width <= chart.plot_right + 0.01
