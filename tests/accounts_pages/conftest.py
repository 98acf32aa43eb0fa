"""Fixtures of the team, account and error-page tests: empty rate-limit buckets."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Any:
    cache.clear()
    yield
    cache.clear()
