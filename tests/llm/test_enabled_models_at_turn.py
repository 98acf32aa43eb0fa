"""An organization's enabled models bind every turn, not only the agent form: an admin who
narrows ``settings["llm"]["enabled_models"]`` after an agent was published (the agent form
keeps the model it may no longer offer) must not see that model called again. The turn uses
the organization's generic model instead (``conversation.agents.generic_model``), so the
customer is still answered; the trace says which model was configured and which ran.
Exercised at the HTTP level: the model in the request the API receives.
"""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from conversation.models import Message, Turn
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import tool_use_response
from tests.fakes.anthropic_server import FakeAnthropicServer


def _turn(world: Any, claude: FakeAnthropicServer, capture: Any, llm: dict[str, Any]) -> Any:
    world.org_a.settings = {**(world.org_a.settings or {}), "llm": llm}
    world.org_a.save(update_fields=["settings"])
    agent = factories.make_agent(
        world.org_a, "Claude", provider="anthropic", model="claude-haiku-4-5", cases_enabled=False
    )
    channel = factories.make_channel(world.org_a, agent=agent)
    claude.enqueue_json(200, tool_use_response("send_message", {"text": "Olá!"}))
    with capture(execute=True):
        simulator_post(Client(), channel, "oi", msg_id="em-1")
    return json.loads(claude.requests[0].body)


def test_a_model_the_organization_no_longer_enables_is_not_called(
    world: Any, claude: FakeAnthropicServer, django_capture_on_commit_callbacks: Any
) -> None:
    llm = {"enabled_models": ["claude-sonnet-5"], "default_model": "claude-sonnet-5"}

    sent = _turn(world, claude, django_capture_on_commit_callbacks, llm)

    assert sent["model"] == "claude-sonnet-5"
    assert Message.objects.filter(direction="outbound", body="Olá!").exists()
    assert Turn.objects.get().trace["model_substituted"] == {
        "configured": "claude-haiku-4-5",
        "used": "claude-sonnet-5",
    }


def test_an_enabled_model_and_no_restriction_call_the_agents_model(
    world: Any, claude: FakeAnthropicServer, django_capture_on_commit_callbacks: Any
) -> None:
    llm = {"enabled_models": ["claude-haiku-4-5", "claude-sonnet-5"]}

    sent = _turn(world, claude, django_capture_on_commit_callbacks, llm)

    assert sent["model"] == "claude-haiku-4-5"
    assert "model_substituted" not in Turn.objects.get().trace
