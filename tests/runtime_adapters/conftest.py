"""An organization with the invoice-support agent on a simulator channel, and helpers that
talk to it through the simulator webhook (the same path a customer's message takes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from accounts.models import Organization
from conversation.models import Agent, ChannelSession, Message
from conversation.runtime_adapters.invoices import demo_invoice_save
from tests import factories
from tests.conftest import simulator_post
from tests.fakes import anthropic_bodies as bodies
from tests.fakes.anthropic_server import FakeAnthropicServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PHONE = "5511988887777"  # not a line of the invoice: the first line (final 4321) is used


def load_invoice() -> dict[str, Any]:
    data = json.loads((FIXTURES / "runtime" / "demo_invoice.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@dataclass
class InvoiceDesk:
    org: Organization
    agent: Agent
    channel: ChannelSession


def make_desk(mode: str = "on", **version: Any) -> InvoiceDesk:
    org = factories.make_org("Fatura")
    agent = factories.make_agent(
        org,
        "Atendimento de fatura",
        runtime_profile="invoice_support",
        runtime_mode=mode,
        handoff_keywords=["falar com atendente"],
        **version,
    )
    channel = factories.make_channel(org, agent=agent)
    demo_invoice_save(organization=org, phone=None, detail=load_invoice(), actor=None)
    return InvoiceDesk(org=org, agent=agent, channel=channel)


@pytest.fixture
def desk(db: Any, settings: Any) -> InvoiceDesk:
    settings.CONVERSATION_RUNTIME_ENABLED = True
    return make_desk()


class Customer:
    """One customer typing into a channel; every line runs its turn on commit."""

    def __init__(self, channel: ChannelSession, capture: Any, phone: str = PHONE) -> None:
        self.channel = channel
        self.capture = capture
        self.phone = phone
        self._n = 0

    def say(self, text: str) -> list[Message]:
        """Send ``text``; return the outbound messages its turn produced."""
        self._n += 1
        before = set(Message.objects.filter(direction="outbound").values_list("pk", flat=True))
        with self.capture(execute=True):
            response = simulator_post(
                Client(), self.channel, text, msg_id=f"{self.phone}-{self._n}", phone=self.phone
            )
        assert response.status_code == 200, response.content
        return list(
            Message.objects.filter(direction="outbound")
            .exclude(pk__in=before)
            .order_by("created_at")
        )


@pytest.fixture
def customer(desk: InvoiceDesk, django_capture_on_commit_callbacks: Any) -> Customer:
    return Customer(desk.channel, django_capture_on_commit_callbacks)


# --- Claude at the HTTP level (the official SDK against a local server) -------------------


def recorded(name: str) -> dict[str, Any]:
    folder = "runtime_adapters" if name.startswith("response_tool_use_intent") else "anthropic"
    return bodies.recorded(name, folder)


def tool_use_response(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """The recorded classifier response with another tool name and input."""
    base = recorded("response_tool_use_intent_classifier.json")
    return bodies.tool_use_response(name, tool_input, base=base)


def end_turn_response() -> dict[str, Any]:
    return bodies.text_response()


@pytest.fixture
def claude(settings: Any) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        settings.ANTHROPIC_API_KEY = "sk-ant-test"
        settings.ANTHROPIC_BASE_URL = server.base_url
        settings.ANTHROPIC_MAX_RETRIES = 1
        settings.ANTHROPIC_TIMEOUT_S = 0.5
        yield server


@pytest.fixture
def claude_desk(db: Any, settings: Any) -> InvoiceDesk:
    settings.CONVERSATION_RUNTIME_ENABLED = True
    return make_desk(provider="anthropic", model="claude-haiku-4-5")
