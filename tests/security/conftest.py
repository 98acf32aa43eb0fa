"""Fixtures of the security suite: two organizations with a row in every tenant table."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from tests.security.tenant_data import TenantData, build_world


@pytest.fixture
def tenants(db: Any) -> TenantData:
    return build_world()


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Any:
    # Throttles count in the cache; every test starts (and leaves) with empty buckets.
    cache.clear()
    yield
    cache.clear()


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client
