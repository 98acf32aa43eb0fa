"""Router tests: a fast password hasher (the shared world creates five users per test),
and a clean members cache so no test sees another's routers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from routers.loaders import clear_members_cache
from routers.models import Router
from tests import factories
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.routers.factories import SUPORTE, VENDAS, make_router


@pytest.fixture(autouse=True)
def _fast_router_tests(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    clear_members_cache()


@pytest.fixture
def vendas(world: Any) -> Any:
    return factories.make_agent(world.org_a, "Vendas")


@pytest.fixture
def router(world: Any, vendas: Any) -> Router:
    """The organization A's number routed to two agents: sales and support."""
    return make_router(world.channel_a, [(vendas, VENDAS), (world.agent_a, SUPORTE)])


@pytest.fixture
def claude(settings: Any) -> Iterator[FakeAnthropicServer]:
    """Claude at the HTTP level (the official SDK against a local fake), no retries."""
    with FakeAnthropicServer() as server:
        settings.ANTHROPIC_API_KEY = "sk-ant-test"
        settings.ANTHROPIC_BASE_URL = server.base_url
        settings.ANTHROPIC_MAX_RETRIES = 0
        settings.ANTHROPIC_TIMEOUT_S = 2
        yield server
