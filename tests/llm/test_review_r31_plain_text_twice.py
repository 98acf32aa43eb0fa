"""Review r31: a model that answers in plain text even after the nudge (tool_choice "any")
must not leave the customer in silence.

The brief: every customer message is answered exactly once. Plain text never reaches the
customer (human-cases §4.3: "texto direto é descartado"), so a model that will not answer
through a tool gets the model-down path (DESIGN §10.4: "the customer is never left in
silence; the turn answers with a short message that promises nothing it cannot keep and
hands off"). At the HTTP level: the official SDK against the loopback server, real wire
format. The billed tokens of every call are on the ledger.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.test import Client

from conversation.models import Handoff, LlmCall, Message, Turn
from conversation.turns.unavailable import UNAVAILABLE_HANDOFF_NOTICE
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import text_response, tool_use_response
from tests.fakes.anthropic_server import FakeAnthropicServer

ANSWER = "O prazo de entrega é de 3 dias úteis."


def billed(body: dict[str, Any], input_tokens: int, output_tokens: int) -> dict[str, Any]:
    """``body`` with its own usage, so each call's tokens can be told apart on the ledger."""
    body = copy.deepcopy(body)
    body["usage"]["input_tokens"], body["usage"]["output_tokens"] = input_tokens, output_tokens
    return body


def make_channel(world: Any, **version: Any) -> Any:
    agent = factories.make_agent(
        world.org_a, "Claude", provider="anthropic", model="claude-haiku-4-5", **version
    )
    return factories.make_channel(world.org_a, agent=agent)


def outbound() -> list[str]:
    return list(
        Message.objects.filter(direction="outbound")
        .order_by("created_at")
        .values_list("body", flat=True)
    )


def ledger() -> list[tuple[int, int]]:
    return sorted(LlmCall.objects.values_list("input_tokens", "output_tokens"))


@pytest.mark.parametrize("second", [ANSWER, ""], ids=["text_again", "empty_after_nudge"])
def test_a_model_that_never_answers_through_a_tool_still_answers_the_customer_once(
    claude: FakeAnthropicServer,
    world: Any,
    django_capture_on_commit_callbacks: Any,
    second: str,
) -> None:
    channel = make_channel(world, cases_enabled=False)
    claude.enqueue_json(200, billed(text_response(ANSWER), 700, 30))
    claude.enqueue_json(200, billed(text_response(second), 760, 31))

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "qual o prazo de entrega?", msg_id="r31-1")

    assert len(claude.requests) == 2  # the nudge once, no third call
    # Answered exactly once: the short notice that promises only what happens (a person).
    assert outbound() == [UNAVAILABLE_HANDOFF_NOTICE]
    turn = Turn.objects.get()
    assert turn.outcome == "llm_unavailable"
    assert Handoff.objects.filter(conversation=turn.conversation).count() == 1
    # Both calls were billed: both are on the ledger, with their own tokens.
    assert ledger() == [(700, 30), (760, 31)]


def test_plain_text_on_the_last_step_still_answers_the_customer(
    claude: FakeAnthropicServer, world: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # A search, then the answer as plain text on the last step the agent allows: no step is
    # left for the nudge, and the customer must not be left in silence either.
    channel = make_channel(world, cases_enabled=False, max_steps=2)
    claude.enqueue_json(
        200, billed(tool_use_response("search_knowledge", {"query": "prazo"}), 650, 40)
    )
    claude.enqueue_json(200, billed(text_response(ANSWER), 720, 25))

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "qual o prazo de entrega?", msg_id="r31-2")

    assert len(claude.requests) == 2
    assert outbound() == [UNAVAILABLE_HANDOFF_NOTICE]
    assert Turn.objects.get().outcome == "llm_unavailable"
    assert ledger() == [(650, 40), (720, 25)]


def test_a_nudged_answer_through_the_tool_is_the_only_reply(
    claude: FakeAnthropicServer, world: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # The nudge working as meant: the tool's text goes out, no notice, no handoff.
    channel = make_channel(world, cases_enabled=False)
    claude.enqueue_json(200, billed(text_response(ANSWER), 700, 30))
    claude.enqueue_json(200, billed(tool_use_response("send_message", {"text": ANSWER}), 760, 45))

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "qual o prazo de entrega?", msg_id="r31-3")

    assert outbound() == [ANSWER]
    assert Turn.objects.get().outcome == "replied"
    assert not Handoff.objects.exists()
    assert ledger() == [(700, 30), (760, 45)]


def test_a_model_that_spends_every_step_on_tools_still_answers_the_customer_once(
    claude: FakeAnthropicServer, world: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # Searching on every step the agent allows, never sending: the customer gets the notice
    # and a person, not silence (the loop ends ``max_steps`` with nothing sent).
    channel = make_channel(world, cases_enabled=False, max_steps=2)
    for tokens in (600, 640):
        claude.enqueue_json(
            200, billed(tool_use_response("search_knowledge", {"query": "prazo"}), tokens, 40)
        )

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "qual o prazo de entrega?", msg_id="r31-4")

    assert len(claude.requests) == 2
    assert outbound() == [UNAVAILABLE_HANDOFF_NOTICE]
    turn = Turn.objects.get()
    assert (turn.outcome, turn.error_code) == ("llm_unavailable", "llm_max_steps")
    assert Handoff.objects.filter(conversation=turn.conversation).count() == 1
    assert ledger() == [(600, 40), (640, 40)]


def test_a_model_that_sent_its_answer_before_the_last_step_is_not_handed_off(
    claude: FakeAnthropicServer, world: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # The answer went out on the first step; the second step is spent on a search: replied.
    channel = make_channel(world, cases_enabled=False, max_steps=2)
    claude.enqueue_json(200, billed(tool_use_response("send_message", {"text": ANSWER}), 600, 40))
    claude.enqueue_json(
        200, billed(tool_use_response("search_knowledge", {"query": "prazo"}), 640, 40)
    )

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "qual o prazo de entrega?", msg_id="r31-5")

    assert outbound() == [ANSWER]
    assert Turn.objects.get().outcome == "replied"
    assert not Handoff.objects.exists()
