"""The clock seam: the runtime never reads the time except through ``Clock``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """A timezone-aware current time."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)
