from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest

from ._support import FIXED_NOW


@pytest.fixture
def fixed_clock() -> Callable[[], datetime]:
    return lambda: FIXED_NOW
