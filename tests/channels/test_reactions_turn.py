"""A customer's reaction to a reply asks nothing (the recorded Cloud API ``reaction`` and
``unreaction_empty`` updates through the signed webhook and a real turn): the line is kept for
the inbox, the turn takes it, and nothing is sent — no model call, no read receipt, no reply.
A reaction typed together with a question is answered as the question."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
import respx
from django.utils import timezone

from conversation.models import LlmCall, Message, Turn
from conversation.sweeper import sweep_due_work

from ._media_support import GRAPH, META_NUMBER, meta_agent_channel, meta_case
from ._support import encode
from ._webhooks import meta_post


@pytest.fixture
def meta(world: Any) -> Any:
    return meta_agent_channel(world)


@pytest.mark.parametrize("update", ["reaction", "unreaction_empty"])
def test_a_reaction_alone_gets_no_reply(world, meta, update, django_capture_on_commit_callbacks):
    with respx.mock(assert_all_called=False) as mock:
        graph = mock.post(f"{GRAPH}/{META_NUMBER}/messages").respond(
            200, json={"messaging_product": "whatsapp", "messages": [{"id": "wamid.OUT"}]}
        )
        with django_capture_on_commit_callbacks(execute=True):
            response = meta_post(meta, encode(meta_case(update, message_id="wamid.IN-R")))
        calls = graph.call_count

    assert response.status_code == 200
    line = Message.objects.get(provider_message_id="wamid.IN-R")
    assert line.kind == "reaction" and line.turn is not None  # kept, and taken by a turn
    turn = Turn.objects.get()
    assert (turn.outcome, turn.trace.get("guard")) == ("no_reply", "reaction_only")
    assert calls == 0  # no read receipt, no reply
    assert not Message.objects.filter(direction="outbound").exists()
    assert not LlmCall.objects.exists()
    # The sweeper finds no stranded line to answer later.
    assert sweep_due_work(timezone.now() + timedelta(minutes=5)).stranded_lines == 0


def test_a_reaction_with_a_question_is_answered(world, meta, django_capture_on_commit_callbacks):
    reaction = meta_case("reaction", message_id="wamid.IN-R2")
    question = meta_case("text", message_id="wamid.IN-Q2")
    value = reaction["entry"][0]["changes"][0]["value"]
    value["messages"] += question["entry"][0]["changes"][0]["value"]["messages"]
    value["messages"][1]["from"] = value["messages"][0]["from"]  # the same customer
    with respx.mock(assert_all_called=False) as mock:
        graph = mock.post(f"{GRAPH}/{META_NUMBER}/messages").respond(
            200, json={"messaging_product": "whatsapp", "messages": [{"id": "wamid.OUT2"}]}
        )
        with django_capture_on_commit_callbacks(execute=True):
            meta_post(meta, encode(reaction))
        bodies = [json.loads(call.request.content) for call in graph.calls]

    assert any(body.get("type") == "text" for body in bodies)  # the reply
    assert Turn.objects.filter(outcome="replied").exists()
