"""A model that answers the customer in plain text (no ``send_message``) would leave the
customer with no reply at all: plain text never reaches the customer (human-cases §5: "texto
direto é descartado") and the turn ended ``no_reply``. The brief: every customer message is
answered exactly once. The loop now asks once, in the same turn, for the answer through a
tool (forced), at the HTTP level against the recorded wire format.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from conversation.models import LlmCall, Message, Turn
from conversation.orchestrator import PLAIN_TEXT_NUDGE_PT
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import text_response, tool_use_response
from tests.fakes.anthropic_server import FakeAnthropicServer

ANSWER = "O prazo de entrega é de 3 dias úteis."


@pytest.fixture
def channel(world: Any) -> Any:
    agent = factories.make_agent(
        world.org_a, "Claude", provider="anthropic", model="claude-haiku-4-5", cases_enabled=False
    )
    return factories.make_channel(world.org_a, agent=agent)


def test_a_plain_text_answer_is_asked_again_through_a_tool_and_reaches_the_customer(
    claude: FakeAnthropicServer, channel: Any, django_capture_on_commit_callbacks: Any
) -> None:
    claude.enqueue_json(200, text_response(ANSWER))
    claude.enqueue_json(200, tool_use_response("send_message", {"text": ANSWER}))

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "qual o prazo de entrega?", msg_id="pt-1")

    outbound = list(Message.objects.filter(direction="outbound").values_list("body", flat=True))
    assert outbound == [ANSWER]
    turn = Turn.objects.get()
    assert turn.outcome == "replied"
    assert turn.trace["loop"]["nudged"] is True
    assert LlmCall.objects.count() == 2
    # The second request carries the model's own text back and the nudge, and forces a tool.
    second = json.loads(claude.requests[1].body)
    assert second["tool_choice"] == {"type": "any"}
    assert [m["role"] for m in second["messages"][-2:]] == ["assistant", "user"]
    assert second["messages"][-1]["content"] == PLAIN_TEXT_NUDGE_PT


def test_a_second_plain_text_answer_ends_the_turn_without_a_third_call(
    claude: FakeAnthropicServer, channel: Any, django_capture_on_commit_callbacks: Any
) -> None:
    claude.enqueue_json(200, text_response(ANSWER))
    claude.enqueue_json(200, text_response(ANSWER))

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "qual o prazo de entrega?", msg_id="pt-2")

    assert LlmCall.objects.count() == 2
    assert not Message.objects.filter(direction="outbound", body=ANSWER).exists()


def test_an_empty_end_turn_is_not_nudged(
    claude: FakeAnthropicServer, channel: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # Nothing written: the model chose not to answer (e.g. a thumbs-up); no second call.
    claude.enqueue_json(200, text_response(""))

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "👍", msg_id="pt-3")

    assert LlmCall.objects.count() == 1
