from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conversation.llm.base import CallRecord
from tests.fakes.anthropic_server import FakeAnthropicServer

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "anthropic"


def load_fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


class Records(list[CallRecord]):
    """A CallRecorder that keeps what it is given."""

    def __call__(self, record: CallRecord) -> None:
        self.append(record)


@pytest.fixture
def records() -> Records:
    return Records()


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def claude(settings: Any) -> Iterator[FakeAnthropicServer]:
    """Claude for the product's own client: the official SDK against the loopback server, with
    no retries and a short timeout (the whole-turn tests of this folder)."""
    with FakeAnthropicServer() as server:
        settings.ANTHROPIC_API_KEY = "sk-ant-test"
        settings.ANTHROPIC_BASE_URL = server.base_url
        settings.ANTHROPIC_MAX_RETRIES = 0
        settings.ANTHROPIC_TIMEOUT_S = 2.0
        yield server
