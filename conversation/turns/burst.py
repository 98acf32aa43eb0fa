"""The burst window: which customer lines one turn answers, and when it may answer them.

Pure: decided from the lines' stored times alone, never from when a task happens to run.
A burst starts at its first line; a later line joins it while it comes less than
``window`` after the previous line and less than ``max_span`` after the first. The burst
closes — its turn may run — at ``min(last + window, first + max_span)``, or as soon as a
line that does not join it exists. So the first reply is never due later than the window
after the customer's last line nor later than ``max_span`` after the first line, and a
backlog never makes a turn swallow lines that came after its burst closed (each later
burst gets its own turn).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

L = TypeVar("L")


def _created_at(line: Any) -> datetime:
    value: datetime = line.created_at
    return value


@dataclass(frozen=True)
class Burst(Generic[L]):
    lines: tuple[L, ...]
    due_at: datetime  # when the burst closes by time alone
    followed: bool  # a later line exists that does not join it: closed already

    def closed(self, now: datetime) -> bool:
        return self.followed or now >= self.due_at

    @property
    def last(self) -> L:
        return self.lines[-1]


def split_bursts(
    lines: Sequence[L],
    *,
    window: timedelta,
    max_span: timedelta,
    at: Callable[[L], datetime] = _created_at,
) -> list[Burst[L]]:
    """``lines`` (oldest first; ``at`` gives a line's time) cut into bursts, oldest first."""
    groups: list[list[L]] = []
    for line in lines:
        current = groups[-1] if groups else None
        if (
            current is not None
            and at(line) - at(current[-1]) < window
            and at(line) - at(current[0]) < max_span
        ):
            current.append(line)
        else:
            groups.append([line])
    return [
        Burst(
            lines=tuple(group),
            due_at=min(at(group[-1]) + window, at(group[0]) + max_span),
            followed=index < len(groups) - 1,
        )
        for index, group in enumerate(groups)
    ]
