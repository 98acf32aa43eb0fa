"""The send gate's model check against Claude at the HTTP level (DESIGN §4): the official SDK
talks to a local server with the recorded wire format. Only the uncertain band is checked,
the call has its own LlmCall purpose, and every failure counts as a promise (fail closed)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from cases.guardrail.promise import assess_promise
from conversation.models import LlmCall, Message, Turn
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import text_response, tool_use_response
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

# A near-miss (the AI did it itself now) the local stages are unsure about.
UNSURE = "Consultei o sistema e a sua consulta está marcada para terça, às 9h, com a Dra. Renata."
PLAIN = "Olá! Como posso ajudar?"


@pytest.fixture
def claude(settings):
    with FakeAnthropicServer() as server:
        settings.ANTHROPIC_API_KEY = "sk-ant-test"
        settings.ANTHROPIC_BASE_URL = server.base_url
        settings.ANTHROPIC_MAX_RETRIES = 1
        settings.ANTHROPIC_TIMEOUT_S = 2.0
        settings.PROMISE_CHECK_TIMEOUT_S = 0.4
        settings.PROMISE_CHECK_MODEL = "claude-haiku-4-5"
        yield server


@pytest.fixture
def channel(world):
    agent = factories.make_agent(
        world.org_a, "Claude", provider="anthropic", model="claude-haiku-4-5", cases_enabled=True
    )
    return factories.make_channel(world.org_a, agent=agent)


def say(channel, capture, msg_id="p-1"):
    with capture(execute=True):
        simulator_post(Client(), channel, "minha consulta?", msg_id=msg_id)


def check_answer(tool_input: dict) -> dict:
    return tool_use_response("classify_promise", tool_input)


def ai_sent() -> list[str]:
    return list(Message.objects.filter(sender_kind="ai").values_list("body", flat=True))


def test_the_uncertain_band_is_checked_with_a_forced_tool_call(
    claude, channel, django_capture_on_commit_callbacks
):
    assert assess_promise(UNSURE).uncertain
    claude.enqueue_json(200, tool_use_response("send_message", {"text": UNSURE}))
    claude.enqueue_json(200, check_answer({"promise": False, "who_acts": "ai_now"}))
    claude.enqueue_json(200, text_response())
    say(channel, django_capture_on_commit_callbacks)

    assert ai_sent() == [UNSURE]
    check = claude.requests[1].json
    assert check["model"] == "claude-haiku-4-5"
    assert check["tool_choice"] == {"type": "tool", "name": "classify_promise"}
    assert [t["name"] for t in check["tools"]] == ["classify_promise"]
    assert UNSURE in json.dumps(check["messages"], ensure_ascii=False)
    purposes = list(LlmCall.objects.order_by("created_at").values_list("purpose", "error_code"))
    assert ("promise_check", "") in purposes
    checks = Turn.objects.get().trace["promise_checks"]
    assert checks == [{"stage": "model", "promise": False, "check": "answered"}]


def test_a_text_the_local_stages_clear_costs_no_model_check(
    claude, channel, django_capture_on_commit_callbacks
):
    claude.enqueue_json(200, tool_use_response("send_message", {"text": PLAIN}))
    say(channel, django_capture_on_commit_callbacks)

    assert ai_sent() == [PLAIN]
    assert len(claude.requests) == 1  # the reply itself; no check, and the send ends the turn
    assert not LlmCall.objects.filter(purpose="promise_check").exists()


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (
            Reply(
                529,
                b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                {"content-type": "application/json"},
            ),
            "error",
        ),
        (
            Reply(
                200,
                json.dumps(check_answer({"promise": False, "who_acts": "ai_now"})).encode(),
                {"content-type": "application/json"},
                delay_s=1.0,
            ),
            "timeout",
        ),
        (
            Reply(200, b'{"type": "message", "content": [', {"content-type": "application/json"}),
            "error",
        ),
        (
            Reply(
                200,
                json.dumps(check_answer({"promise": "no", "why": "x"})).encode(),
                {"content-type": "application/json"},
            ),
            "invalid",
        ),
    ],
    ids=["overloaded_529", "timeout", "broken_json", "off_schema"],
)
def test_a_failed_check_fails_closed_and_the_text_is_not_sent(
    claude, channel, django_capture_on_commit_callbacks, reply, outcome
):
    claude.enqueue_json(200, tool_use_response("send_message", {"text": UNSURE}))
    claude.enqueue(reply)
    claude.enqueue_json(200, text_response())
    say(channel, django_capture_on_commit_callbacks)

    assert ai_sent() == []  # counted as a promise with no case: vetoed
    turn = Turn.objects.get()
    assert turn.trace["vetoes"] == ["case_promise_without_case"]
    assert turn.trace["promise_checks"] == [{"stage": "model", "promise": True, "check": outcome}]
    assert LlmCall.objects.filter(purpose="promise_check").count() == 1
