"""The turn against Claude at the HTTP level: the official SDK talks to a local server
that answers with the recorded wire format. A model that stays down never leaves the
customer in silence (tests/conversation/test_turn_faults.py: the retry policy)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from conversation.models import Conversation, Handoff, LlmCall, Message, Turn
from conversation.turns.unavailable import UNAVAILABLE_HANDOFF_NOTICE
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import recorded, text_response, tool_use_response
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply


@pytest.fixture
def claude(settings):
    with FakeAnthropicServer() as server:
        settings.ANTHROPIC_API_KEY = "sk-ant-test"
        settings.ANTHROPIC_BASE_URL = server.base_url
        settings.ANTHROPIC_MAX_RETRIES = 1
        settings.ANTHROPIC_TIMEOUT_S = 0.5
        yield server


@pytest.fixture
def claude_channel(world):
    agent = factories.make_agent(
        world.org_a, "Claude", provider="anthropic", model="claude-haiku-4-5"
    )
    return factories.make_channel(world.org_a, agent=agent)


def say(channel, text, msg_id, capture):
    with capture(execute=True):
        return simulator_post(Client(), channel, text, msg_id=msg_id)


def test_tool_use_leads_to_a_sent_message_and_ledger_rows(
    claude, claude_channel, django_capture_on_commit_callbacks
):
    # A search first, so the second call carries its tool_result; the accepted send then
    # ends the turn without a third call.
    claude.enqueue_json(200, tool_use_response("search_knowledge", {"query": "atendimento"}))
    claude.enqueue_json(200, tool_use_response("send_message", {"text": "Olá! Como posso ajudar?"}))
    say(claude_channel, "oi", "a-1", django_capture_on_commit_callbacks)

    sent = Message.objects.get(direction="outbound")
    assert (sent.sender_kind, sent.body, sent.status) == (
        "ai",
        "Olá! Como posso ajudar?",
        "delivered",
    )
    calls = list(LlmCall.objects.order_by("created_at"))
    assert [(c.purpose, c.provider, c.error_code) for c in calls] == [
        ("orchestrator", "anthropic", ""),
        ("orchestrator", "anthropic", ""),
    ]
    assert calls[0].input_tokens == 656 and calls[0].output_tokens == 74
    first, second = (r.json for r in claude.requests)
    assert first["model"] == "claude-haiku-4-5"
    assert first["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert {t["name"] for t in first["tools"]} >= {"send_message", "search_knowledge"}
    # the second call carries our tool_result for the recorded tool_use id
    assert second["messages"][-1]["content"][0]["tool_use_id"] == "toolu_01A9HHF5Ezy3oBrKmSgfASm9"
    turn = Turn.objects.get()
    assert turn.outcome == "replied" and turn.trace["loop"]["stop"] == "terminal_tool"


def test_plain_model_text_is_discarded_never_sent(
    claude, claude_channel, django_capture_on_commit_callbacks
):
    body = text_response()
    body["content"] = [{"type": "text", "text": "Texto solto que não deveria chegar ao cliente"}]
    # Twice: after plain text the loop asks once for the answer through a tool
    # (tests/llm/test_plain_text_answer.py); plain text is never what goes out.
    claude.enqueue_json(200, body)
    claude.enqueue_json(200, body)
    say(claude_channel, "oi", "a-2", django_capture_on_commit_callbacks)
    # Never the loose text; nor silence: the model-down notice (tests/llm/test_review_r31_*).
    outbound = list(Message.objects.filter(direction="outbound").values_list("body", flat=True))
    assert outbound == [UNAVAILABLE_HANDOFF_NOTICE]
    turn = Turn.objects.get()
    assert turn.outcome == "llm_unavailable" and turn.trace["loop"]["discarded_text_chars"] > 0
    assert turn.trace["loop"]["nudged"] is True and turn.trace["loop"]["stop"] == "plain_text"


@pytest.mark.parametrize(
    ("replies", "error_code"),
    [
        # 529 overloaded twice (first try + the SDK's one retry)
        (
            [
                Reply(
                    529,
                    json.dumps(recorded("error_529_overloaded_error.json")).encode(),
                    {"content-type": "application/json"},
                )
            ]
            * 2,
            "llm_unavailable",
        ),
        # slower than the timeout, twice
        (
            [
                Reply(
                    200,
                    json.dumps(text_response()).encode(),
                    {"content-type": "application/json"},
                    delay_s=1.5,
                )
            ]
            * 2,
            "llm_timeout",
        ),
        # 200 with a body that is not a message
        (
            [
                Reply(
                    200,
                    b'{"type": "message", "content": "oops"',
                    {"content-type": "application/json"},
                )
            ],
            "llm_bad_response",
        ),
    ],
    ids=["overloaded_529", "timeout", "malformed"],
)
def test_model_failures_leave_no_silence_the_turn_hands_off_with_a_short_notice(
    claude, claude_channel, django_capture_on_commit_callbacks, replies, error_code
):
    # Issue 10 changed this behaviour: a model failure used to end the turn with nothing
    # sent ("error"); now the customer gets the notice and the canonical handoff happens.
    claude.enqueue(*replies)
    say(claude_channel, "oi", "a-3", django_capture_on_commit_callbacks)
    (notice,) = Message.objects.filter(direction="outbound")
    assert (notice.sender_kind, notice.body) == ("system", UNAVAILABLE_HANDOFF_NOTICE)
    turn = Turn.objects.get()
    assert (turn.status, turn.outcome, turn.error_code) == ("done", "llm_unavailable", error_code)
    assert turn.trace["model_down"] == {"action": "handoff", "attempt": 1, "error": error_code}
    handoff = Handoff.objects.get()
    assert (handoff.reason_code, handoff.status) == ("llm_unavailable", "open")
    conversation = Conversation.objects.select_related("contact").get()
    assert conversation.is_human_owned() and conversation.contact.force_human
    call = LlmCall.objects.get()
    assert call.error_code == error_code
    inbound = Message.objects.get(direction="inbound")
    assert inbound.turn_id == turn.pk  # the message is kept and linked to its turn
