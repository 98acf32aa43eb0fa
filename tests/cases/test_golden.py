"""The adversarial golden scenarios of human-cases §11.1, each a JSON file in tests/golden/,
run through the whole inbound turn (webhook → turn → orchestrator → gates → outbox) with a
scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cases.guardrail import detect_human_promise
from cases.models import Case, CaseEvent
from conversation.llm.base import ModelResponse, TextBlock, ToolUseBlock
from conversation.models import Conversation, Message, Turn
from tests import factories
from tests.cases.conftest import PHONE, Script, open_case, say

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
SCENARIOS = sorted(GOLDEN.glob("cases_*.json"))


def responses(script: list[dict[str, Any]]) -> list[ModelResponse]:
    out = []
    for n, step in enumerate(script):
        if step.get("end_turn"):
            out.append(ModelResponse(content=(TextBlock(""),), stop_reason="end_turn", model="g"))
            continue
        blocks = tuple(
            ToolUseBlock(id=f"toolu_golden_{n}_{i}", name=use["name"], input=use["input"])
            for i, use in enumerate(step["tool_use"])
        )
        out.append(ModelResponse(content=blocks, stop_reason="tool_use", model="golden"))
    return out


def test_there_are_golden_scenarios_for_each_kind_of_section_11_1():
    names = {json.loads(p.read_text())["name"] for p in SCENARIOS}
    assert {"must_open", "temptation_autofallback", "must_not_open"} <= names


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_golden_scenario(path, cases_world, django_capture_on_commit_callbacks):
    scenario = json.loads(path.read_text())
    expect = scenario["expect"]
    setup = scenario.get("setup", {})
    if "open_case" in setup:
        conversation = factories.make_conversation(cases_world.channel_a, phone=PHONE)
        open_case(conversation, **setup["open_case"])

    with Script(responses(scenario["model"])) as model:
        say(
            cases_world.channel_a,
            scenario["customer"],
            f"golden-{path.stem}",
            django_capture_on_commit_callbacks,
        )

    turn = Turn.objects.get(trigger_kind="inbound_message")
    # What the model called, in order, and which calls came back as errors.
    assert [c["tool"] for c in turn.trace["loop"]["calls"]] == expect["tools_called"]
    if "tool_errors" in expect:
        assert [c["error"] for c in turn.trace["loop"]["calls"]] == expect["tool_errors"]
    assert turn.trace.get("vetoes", []) == expect["vetoes"]
    if expect["vetoes"]:
        # Re-prompted: the model's next request carries the teaching error.
        retry = model.requests[1].messages[-1].content[0]
        assert retry.is_error
        assert expect.get("first_error_contains", "open_human_case") in retry.content

    cases = list(Case.objects.order_by("opened_at"))
    assert [
        {k: getattr(c, k) for k in expected}
        for c, expected in zip(cases, expect["cases"], strict=False)
    ] == expect["cases"]
    assert len(cases) == len(expect["cases"])
    if "opened_event_source" in expect:
        opened = CaseEvent.objects.get(case=cases[-1], kind="opened")
        assert opened.metadata["source"] == expect["opened_event_source"]
        assert opened.actor_kind == "system"

    sent = list(
        Message.objects.filter(direction="outbound", sender_kind="ai")
        .order_by("created_at")
        .values_list("body", "created_at")
    )
    assert [body for body, _ in sent] == expect["sent"]
    # The invariant: no promise of a human went out while the lead had no case.
    for body, created_at in sent:
        if detect_human_promise(body):
            assert Case.objects.filter(created_at__lte=created_at).exists(), body
    assert (
        Conversation.objects.get(channel=cases_world.channel_a).status
        == (expect["conversation_status"])
    )
