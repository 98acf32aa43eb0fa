"""The model is down (DESIGN §10.4): the agent that retries later, through the official SDK
against a local server answering 529s (tests/conversation/test_turns_anthropic.py has the
default, the handoff)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from cases import services as case_services
from conversation import dispatch
from conversation.models import Handoff, Message, Turn
from conversation.sweeper import sweep_due_work
from conversation.turns.unavailable import UNAVAILABLE_HANDOFF_NOTICE, UNAVAILABLE_RETRY_NOTICE
from tests import factories
from tests.cases.conftest import open_case
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import recorded, tool_use_response
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

OVERLOADED = Reply(
    529,
    json.dumps(recorded("error_529_overloaded_error.json")).encode(),
    {"content-type": "application/json"},
)
MALFORMED = Reply(
    200, b'{"type": "message", "content": "oops"', {"content-type": "application/json"}
)


@pytest.fixture
def claude(settings):
    with FakeAnthropicServer() as server:
        settings.ANTHROPIC_API_KEY = "sk-ant-test"
        settings.ANTHROPIC_BASE_URL = server.base_url
        settings.ANTHROPIC_MAX_RETRIES = 1  # each failed call below is 2 requests
        settings.ANTHROPIC_TIMEOUT_S = 0.5
        yield server


@pytest.fixture
def retrying_channel(world):
    agent = factories.make_agent(
        world.org_a,
        "Claude",
        provider="anthropic",
        model="claude-haiku-4-5",
        cases_enabled=False,
        llm_unavailable_action="retry",
    )
    return factories.make_channel(world.org_a, agent=agent)


def say(channel, text, msg_id, capture):
    with capture(execute=True):
        assert simulator_post(Client(), channel, text, msg_id=msg_id).status_code == 200


def outbound():
    return list(
        Message.objects.filter(direction="outbound")
        .order_by("created_at")
        .values_list("sender_kind", "body")
    )


def sweep_at(when, capture):
    with time_machine.travel(when, tick=False), capture(execute=True):
        return sweep_due_work()


def test_a_retrying_agent_says_so_once_and_answers_when_the_model_is_back(
    claude, retrying_channel, settings, django_capture_on_commit_callbacks
):
    claude.enqueue(OVERLOADED, OVERLOADED)
    say(retrying_channel, "oi", "rt-1", django_capture_on_commit_callbacks)
    turn = Turn.objects.get()
    assert (turn.status, turn.outcome, turn.error_code) == ("retry", "", "llm_unavailable")
    assert turn.trace["model_down"]["action"] == "retry"
    retry_at = turn.lease_expires_at
    assert retry_at - timezone.now() > timedelta(seconds=settings.TURN_LLM_RETRY_DELAY_S - 5)
    assert outbound() == [("system", UNAVAILABLE_RETRY_NOTICE)]  # promises no person
    assert not Handoff.objects.exists()

    # The customer writes again meanwhile: no second turn while the first waits.
    say(retrying_channel, "alô?", "rt-2", django_capture_on_commit_callbacks)
    assert Turn.objects.count() == 1 and dispatch.pending_delayed() == 0

    assert (
        sweep_at(retry_at - timedelta(seconds=1), django_capture_on_commit_callbacks).expired_turns
        == 0
    )
    claude.enqueue_json(
        200, tool_use_response("send_message", {"text": "Oi! Em que posso ajudar?"})
    )
    assert (
        sweep_at(retry_at + timedelta(seconds=1), django_capture_on_commit_callbacks).expired_turns
        == 1
    )

    turn.refresh_from_db()
    assert (turn.status, turn.outcome, turn.attempts, turn.error_code) == ("done", "replied", 2, "")
    assert outbound() == [
        ("system", UNAVAILABLE_RETRY_NOTICE),
        ("ai", "Oi! Em que posso ajudar?"),
    ]
    # The retry answered both lines, in one model call that saw them both.
    assert set(
        turn.messages.filter(direction="inbound").values_list("provider_message_id", flat=True)
    ) == {
        "rt-1",
        "rt-2",
    }
    asked = claude.requests[-1].json["messages"][-1]["content"]  # the send ended the turn
    text = asked if isinstance(asked, str) else " ".join(b.get("text", "") for b in asked)
    assert "oi" in text and "alô?" in text


def test_a_retrying_agent_hands_off_when_its_attempts_run_out(
    claude, retrying_channel, settings, django_capture_on_commit_callbacks
):
    settings.TURN_MAX_ATTEMPTS = 2
    claude.enqueue(OVERLOADED, OVERLOADED)
    say(retrying_channel, "oi", "ro-1", django_capture_on_commit_callbacks)
    turn = Turn.objects.get()
    claude.enqueue(OVERLOADED, OVERLOADED)
    sweep_at(turn.lease_expires_at + timedelta(seconds=1), django_capture_on_commit_callbacks)
    turn.refresh_from_db()
    assert (turn.status, turn.outcome, turn.attempts) == ("done", "llm_unavailable", 2)
    assert outbound() == [
        ("system", UNAVAILABLE_RETRY_NOTICE),
        ("system", UNAVAILABLE_HANDOFF_NOTICE),
    ]
    assert Handoff.objects.get().reason_code == "llm_unavailable"


def test_a_retrying_agent_hands_off_at_once_when_a_retry_cannot_help(
    claude, retrying_channel, django_capture_on_commit_callbacks
):
    claude.enqueue(MALFORMED)
    say(retrying_channel, "oi", "rb-1", django_capture_on_commit_callbacks)
    turn = Turn.objects.get()
    assert (turn.status, turn.outcome, turn.error_code) == (
        "done",
        "llm_unavailable",
        "llm_bad_response",
    )
    assert outbound() == [("system", UNAVAILABLE_HANDOFF_NOTICE)]
    assert Handoff.objects.get().reason_code == "llm_unavailable"


@pytest.mark.parametrize("action", ["handoff", "retry"])
def test_a_case_answer_the_model_cannot_relay_reaches_the_customer_through_a_person(
    claude, world, settings, django_capture_on_commit_callbacks, action
):
    # The team resolved a case while the model is down. The member was told "A IA vai
    # contar ao cliente": the relay turn must not claim "Recebi sua mensagem" (the customer
    # wrote nothing), and when it hands off, the person gets the team's note to pass on.
    settings.TURN_MAX_ATTEMPTS = 1  # the retrying agent gives up at once here
    agent = factories.make_agent(
        world.org_a,
        "Claude",
        provider="anthropic",
        model="claude-haiku-4-5",
        cases_enabled=True,
        llm_unavailable_action=action,
    )
    channel = factories.make_channel(world.org_a, agent=agent)
    conversation = factories.make_conversation(channel)
    case = open_case(conversation)
    claude.enqueue(OVERLOADED, OVERLOADED)
    with django_capture_on_commit_callbacks(execute=True):
        case_services.case_answer(
            case=case, actor=world.agent, action="resolved", text="Estorno feito, cai em 2 dias"
        )

    bodies = [body for _, body in outbound()]
    assert UNAVAILABLE_RETRY_NOTICE not in bodies
    assert UNAVAILABLE_HANDOFF_NOTICE in bodies
    handoff = Handoff.objects.get(conversation=conversation)
    assert "Estorno feito, cai em 2 dias" in handoff.briefing
