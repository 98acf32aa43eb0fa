"""The burst window as a pure rule on the lines' stored times (conversation.turns.burst)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from conversation.turns.burst import split_bursts

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
WINDOW = timedelta(seconds=2)
MAX_SPAN = timedelta(seconds=10)


@dataclass(frozen=True)
class Line:
    created_at: datetime


def lines_at(*seconds: float) -> list[Line]:
    return [Line(T0 + timedelta(seconds=s)) for s in seconds]


def cut(lines: list[Line]):
    return split_bursts(lines, window=WINDOW, max_span=MAX_SPAN)


def test_lines_typed_within_the_window_are_one_burst_due_a_window_after_the_last():
    (burst,) = cut(lines_at(0, 1, 2.5))
    assert len(burst.lines) == 3
    assert burst.due_at == T0 + timedelta(seconds=4.5)
    assert not burst.closed(T0 + timedelta(seconds=4.4))
    assert burst.closed(T0 + timedelta(seconds=4.5))


def test_a_pause_of_a_whole_window_starts_a_new_burst_and_closes_the_first():
    first, second = cut(lines_at(0, 1, 3))
    assert [len(first.lines), len(second.lines)] == [2, 1]
    assert first.followed and first.closed(T0)  # a later line closes it, whatever the clock
    assert not second.followed and second.due_at == T0 + timedelta(seconds=5)


def test_typing_without_pause_is_cut_at_the_maximum_after_the_first_line():
    bursts = cut(lines_at(*[i * 1.5 for i in range(12)]))  # 0 … 16.5 s, never a 2 s pause
    first = bursts[0]
    assert first.lines[-1].created_at == T0 + timedelta(seconds=9)  # 10.5 s starts the next
    assert first.due_at == T0 + MAX_SPAN  # not 11 s: the maximum wins over the window
    assert first.closed(T0 + MAX_SPAN)
    assert bursts[1].lines[0].created_at == T0 + timedelta(seconds=10.5)


def test_a_zero_window_answers_every_line_by_itself():
    bursts = split_bursts(lines_at(0, 0.001, 0.002), window=timedelta(0), max_span=MAX_SPAN)
    assert [len(b.lines) for b in bursts] == [1, 1, 1]
    assert bursts[-1].closed(T0 + timedelta(seconds=0.002))


offsets = st.lists(st.floats(min_value=0, max_value=60, allow_nan=False), max_size=30)


@given(offsets)
def test_every_line_is_in_exactly_one_burst_in_order(seconds):
    lines = lines_at(*sorted(seconds))
    bursts = cut(lines)
    assert [line for b in bursts for line in b.lines] == lines
    assert all(b.followed for b in bursts[:-1]) and not any(b.followed for b in bursts[-1:])


@given(offsets)
def test_no_burst_is_due_after_the_window_or_the_maximum(seconds):
    for burst in cut(lines_at(*sorted(seconds))):
        first, last = burst.lines[0].created_at, burst.lines[-1].created_at
        assert burst.due_at <= last + WINDOW and burst.due_at <= first + MAX_SPAN
        assert burst.due_at >= last  # never closed before its own last line
        assert last - first < MAX_SPAN


@given(offsets)
def test_a_line_that_starts_a_burst_came_a_window_after_the_previous_or_past_the_maximum(
    seconds,
):
    bursts = cut(lines_at(*sorted(seconds)))
    for previous, burst in itertools.pairwise(bursts):
        gap = burst.lines[0].created_at - previous.lines[-1].created_at
        span = burst.lines[0].created_at - previous.lines[0].created_at
        assert gap >= WINDOW or span >= MAX_SPAN
        assert burst.lines[0].created_at >= previous.due_at  # it came after the cut-off
