"""Review r30: a history turn with no text never reaches the Messages API as blank content.

The API refuses a request whose message has empty content ("messages: all messages must have
non-empty content except for the optional final assistant message") or a blank text block
("text content blocks must contain non-whitespace text"). A member of the team who sends an
image with no caption stores an outbound message with an empty body; every later turn whose
history window holds it would fail with HTTP 400 and hand the customer off. DESIGN §4: the
Anthropic implementation speaks the real wire format (tests at the HTTP level).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from conversation.llm import AnthropicClient, ChatMessage, ModelRequest, null_recorder
from conversation.models import Direction, Message, MessageStatus, SenderKind
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import text_response, tool_use_response
from tests.fakes.anthropic_server import FakeAnthropicServer


def blank_contents(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes of the wire messages the API would refuse for having no text."""
    bad = []
    for i, message in enumerate(messages):
        content = message["content"]
        if isinstance(content, str):
            if not content.strip():
                bad.append(i)
        elif not content or any(b["type"] == "text" and not b["text"].strip() for b in content):
            bad.append(i)
    return bad


@pytest.mark.parametrize("blank", ["", " \n"])
def test_a_blank_history_message_is_not_sent_blank(
    fake_anthropic: FakeAnthropicServer, blank: str
) -> None:
    fake_anthropic.enqueue_json(200, tool_use_response("send_message", {"text": "Recebi."}))
    client = AnthropicClient(
        "sk-ant-test", base_url=fake_anthropic.base_url, recorder=null_recorder, max_retries=0
    )
    history = [
        ChatMessage(role="user", content="Segue o comprovante?"),
        ChatMessage(role="assistant", content=blank),
        ChatMessage(role="user", content="Chegou a foto?"),
    ]

    client.complete(ModelRequest("orchestrator", "claude-haiku-4-5", ["Você é Ana."], history))
    client.close()

    sent = fake_anthropic.requests[0].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]  # turns still alternate
    assert blank_contents(sent) == []
    assert sent[2]["content"] == "Chegou a foto?"


def test_a_turn_after_an_image_sent_without_caption_calls_the_model_with_no_blank_turn(
    fake_anthropic: FakeAnthropicServer,
    world: Any,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.ANTHROPIC_BASE_URL = fake_anthropic.base_url
    settings.ANTHROPIC_MAX_RETRIES = 0
    agent = factories.make_agent(
        world.org_a, "Claude", provider="anthropic", model="claude-haiku-4-5"
    )
    channel = factories.make_channel(world.org_a, agent=agent)
    # The customer asks; the model answers nothing (an empty end_turn: the turn ends with no
    # reply and no handoff — plain text twice would hand the conversation to the team now).
    fake_anthropic.enqueue_json(200, text_response(""))
    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "Pode me mandar o boleto?", msg_id="r30-b0")
    conversation = Message.objects.get(direction="inbound").conversation
    factories.make_message(
        conversation,
        "",  # then the team sends the boleto as an image with no caption
        direction=Direction.OUTBOUND,
        sender_kind=SenderKind.HUMAN,
        status=MessageStatus.DELIVERED,
        kind="image",
    )
    fake_anthropic.enqueue_json(200, tool_use_response("send_message", {"text": "De nada!"}))

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "Recebi, obrigado", msg_id="r30-b1")

    sent = fake_anthropic.requests[1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert blank_contents(sent) == []
    assert Message.objects.filter(direction="outbound", body="De nada!").exists()
