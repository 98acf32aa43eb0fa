"""Router tests: a fast password hasher (the shared world creates five users per test),
and a clean members cache so no test sees another's routers."""

from __future__ import annotations

from typing import Any

import pytest

from routers.loaders import clear_members_cache


@pytest.fixture(autouse=True)
def _fast_router_tests(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    clear_members_cache()
