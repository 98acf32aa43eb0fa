"""The shared tenant world and the switches that make turns deterministic in tests."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import time_machine
from django.test import Client

from conversation import dispatch
from tests import factories

# Browser fixtures (one Chromium session for every browser test of the run).
pytest_plugins = ["tests.browser"]


@pytest.fixture(autouse=True)
def _deterministic_tasks(settings: Any) -> None:
    # Turns run on commit, in-process, with no burst window unless a test sets one;
    # delayed tasks wait for ``dispatch.run_delayed()`` instead of a background thread.
    settings.TURN_BURST_WINDOW_S = 0
    # PBKDF2 costs seconds per user on a loaded machine; tests need no strong hashing.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
    dispatch.background_thread_enabled = False
    dispatch.run_delayed()  # nothing leaks between tests


@pytest.fixture
def one_rate_window() -> Iterator[None]:
    """Start the test at the top of a minute, so that the fixed one-minute windows of
    ``accounts.throttle.hit`` cannot roll over between its requests (a test that crossed
    ``hh:mm:59`` → ``hh:mm+1:00`` once saw its counter reset and a 429 become a 200)."""
    next_minute = (int(time.time()) // 60 + 1) * 60
    with time_machine.travel(next_minute, tick=True):
        yield


@dataclass
class World:
    org_a: Any
    org_b: Any
    admin: Any
    manager: Any
    agent: Any
    viewer: Any
    outsider: Any
    agent_a: Any
    channel_a: Any
    agent_b: Any
    channel_b: Any

    def client_for(self, user: Any) -> Client:
        client = Client()
        client.force_login(user)
        return client


@pytest.fixture
def world(db: Any) -> World:
    org_a, org_b = factories.make_org("A"), factories.make_org("B")
    agent_a = factories.make_agent(org_a, "Suporte", handoff_keywords=["falar com atendente"])
    agent_b = factories.make_agent(org_b, "Outro")
    return World(
        org_a=org_a,
        org_b=org_b,
        admin=factories.make_user(org_a, "admin"),
        manager=factories.make_user(org_a, "manager"),
        agent=factories.make_user(org_a, "agent"),
        viewer=factories.make_user(org_a, "viewer"),
        outsider=factories.make_user(org_b, "admin"),
        agent_a=agent_a,
        channel_a=factories.make_channel(org_a, agent=agent_a),
        agent_b=agent_b,
        channel_b=factories.make_channel(org_b, agent=agent_b),
    )


def simulator_post(
    client: Client, channel: Any, text: str, *, msg_id: str, phone: str = "5511988887777"
) -> Any:
    return client.post(
        f"/webhooks/simulator/{channel.pk}",
        data=json.dumps({"from": phone, "text": text, "id": msg_id}),
        content_type="application/json",
        HTTP_X_SIMULATOR_SECRET=channel.webhook_secret,
    )
