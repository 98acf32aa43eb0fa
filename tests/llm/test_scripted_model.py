from __future__ import annotations

import pytest

from conversation.llm import (
    ChatMessage,
    LlmBadResponse,
    LlmRateLimited,
    ModelRequest,
    ModelResponse,
    ScriptedModel,
    TextBlock,
    ToolUseBlock,
    Usage,
)

from .conftest import Records


def request(text: str) -> ModelRequest:
    return ModelRequest(
        purpose="orchestrator",
        model="claude-haiku-4-5",
        system=["Você é Ana."],
        messages=[ChatMessage("user", text)],
        context={"turn_id": 3},
    )


SEND = ModelResponse(
    content=(ToolUseBlock(id="toolu_1", name="send_message", input={"text": "Olá!"}),),
    stop_reason="tool_use",
    model="claude-haiku-4-5",
    usage=Usage(input_tokens=10, output_tokens=5, cache_read_input_tokens=100),
)
DONE = ModelResponse(content=(TextBlock("fim"),), stop_reason="end_turn", model="claude-haiku-4-5")


def test_scripted_items_are_returned_and_raised_in_order(records: Records) -> None:
    model = ScriptedModel([SEND, LlmRateLimited("busy"), DONE], recorder=records)

    assert model.complete(request("a")) is SEND
    with pytest.raises(LlmRateLimited):
        model.complete(request("b"))
    assert model.complete(request("c")) is DONE

    assert [r.messages[0].text() for r in model.requests] == ["a", "b", "c"]
    assert model.remaining == 0
    assert [(r.error_code, r.usage) for r in records] == [
        ("", SEND.usage),
        ("llm_rate_limited", Usage()),
        ("", Usage()),
    ]
    assert all(r.context == {"turn_id": 3} for r in records)


def test_running_out_of_script_raises_bad_response_and_records_it(records: Records) -> None:
    model = ScriptedModel([DONE], recorder=records)
    model.complete(request("a"))

    with pytest.raises(LlmBadResponse):
        model.complete(request("b"))

    assert len(model.requests) == 2
    assert [r.error_code for r in records] == ["", "llm_bad_response"]
