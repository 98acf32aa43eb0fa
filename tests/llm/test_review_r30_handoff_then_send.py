"""Review r30: Claude answers with parallel tool calls, a handoff and then a message, in one
response (at the HTTP level, recorded wire format).

human-cases §1: "Handoff (existente, intocado): humano assume a conversa; bot silencia." and
the tool's own description: "Passa a conversa para uma pessoa da equipe; a IA sai da
conversa." Once the handoff ran, the AI's text must not follow the handoff notice.
"""

from __future__ import annotations

from typing import Any

from django.test import Client

from conversation.models import Handoff, Message, Turn
from conversation.turns.guards import HANDOFF_NOTICE
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import recorded
from tests.fakes.anthropic_server import FakeAnthropicServer


def handoff_then_send() -> dict[str, Any]:
    body = recorded("response_tool_use_parallel_haiku45.json")
    body["content"] = [
        {
            "type": "tool_use",
            "id": "toolu_01EEe2V5HD1Ac4rKiUR4HD2T",
            "name": "request_human_handoff",
            "input": {"motivo_codigo": "requested_human"},
        },
        {
            "type": "tool_use",
            "id": "toolu_01XFyAjstT3966qvRynZyVPo",
            "name": "send_message",
            "input": {"text": "Claro! Enquanto isso, me diga o número do seu pedido."},
        },
    ]
    return body


def test_a_message_after_the_handoff_in_the_same_answer_is_not_sent(
    claude: FakeAnthropicServer, world: Any, django_capture_on_commit_callbacks: Any
) -> None:
    agent = factories.make_agent(
        world.org_a, "Claude", provider="anthropic", model="claude-haiku-4-5"
    )
    channel = factories.make_channel(world.org_a, agent=agent)
    claude.enqueue_json(200, handoff_then_send())

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "quero falar com alguém", msg_id="r30-h1")

    outbound = list(Message.objects.filter(direction="outbound").values_list("sender_kind", "body"))
    assert outbound == [("system", HANDOFF_NOTICE)]
    assert Handoff.objects.get().reason_code == "requested_human"
    assert Turn.objects.get().outcome == "handoff"
