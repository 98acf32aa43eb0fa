"""Review r30: what the Anthropic seam does with answers that are well-formed but cannot be
acted on, against a local HTTP server speaking the recorded wire format (nothing of the SDK
is mocked).

* ``stop_reason: "max_tokens"`` inside a tool call: the API documents that "the truncated
  response contains an incomplete tool use block" which must be asked for again — its input
  is what was generated before the cut. Run as is, a ``send_message`` would send the customer
  half a sentence.
* ``stop_reason: "refusal"``: the model declined; its content is often empty, and a tool loop
  that gets no tool call ends the turn without a word — DESIGN §10.4: "the customer is never
  left in silence".
* A blank text block beside tool calls: the API returns them but refuses them in a request
  (HTTP 400 "messages: text content blocks must be non-empty"), so replaying the assistant
  turn would break the next step of the tool loop.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from conversation.llm import (
    AnthropicClient,
    ChatMessage,
    LlmBadResponse,
    ModelRequest,
    ToolSpec,
    Usage,
)
from conversation.orchestrator import Tool, ToolOutcome, run_tool_loop
from tests.fakes.anthropic_bodies import recorded, tool_use_response
from tests.fakes.anthropic_server import FakeAnthropicServer

from .conftest import Records

SEND_MESSAGE = ToolSpec(
    name="send_message",
    description="Envia uma mensagem ao cliente.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1}},
        "required": ["text"],
        "additionalProperties": False,
    },
)
SEARCH = ToolSpec(
    name="search_knowledge",
    description="Busca na base de conhecimento.",
    input_schema={
        "type": "object",
        "properties": {"query": {"type": "string", "minLength": 1}},
        "required": ["query"],
        "additionalProperties": False,
    },
)
# The recorded answer's usage (tests/fixtures/anthropic/response_tool_use_haiku45_sdk.json).
RECORDED_USAGE = Usage(input_tokens=656, output_tokens=74)


@pytest.fixture
def client(fake_anthropic: FakeAnthropicServer, records: Records) -> Iterator[AnthropicClient]:
    made = AnthropicClient(
        "sk-ant-test", base_url=fake_anthropic.base_url, recorder=records, max_retries=0
    )
    yield made
    made.close()


def request(**overrides: Any) -> ModelRequest:
    fields: dict[str, Any] = {
        "purpose": "orchestrator",
        "model": "claude-haiku-4-5",
        "system": ["Você é Ana."],
        "messages": [ChatMessage(role="user", content="Quero saber do meu pedido")],
        "tools": [SEND_MESSAGE, SEARCH],
        "timeout_s": 5.0,
        "context": {"organization_id": "o-1", "turn_id": "t-1"},
    }
    fields.update(overrides)
    return ModelRequest(**fields)


def cut_short_send(text: str = "Olá! O seu pedido") -> dict[str, Any]:
    body = tool_use_response("send_message", {"text": text})
    body["stop_reason"] = "max_tokens"
    return body


def refusal() -> dict[str, Any]:
    body = copy.deepcopy(recorded("response_tool_use_haiku45_sdk.json"))
    body["content"], body["stop_reason"] = [], "refusal"
    return body


class Sent(list[str]):
    def handler(self, data: Mapping[str, Any]) -> ToolOutcome:
        self.append(str(data["text"]))
        return ToolOutcome("Mensagem enviada.", terminal=True)


def loop(client: AnthropicClient, sent: Sent) -> Any:
    return run_tool_loop(
        client=client,
        base_request=request(),
        history=[ChatMessage(role="user", content="Quero saber do meu pedido")],
        tools=[
            Tool(SEND_MESSAGE, sent.handler),
            Tool(SEARCH, lambda data: ToolOutcome("Nenhum resultado encontrado.")),
        ],
        max_steps=4,
    )


def test_a_tool_call_cut_by_max_tokens_is_a_bad_response_with_its_tokens_on_the_ledger(
    fake_anthropic: FakeAnthropicServer, client: AnthropicClient, records: Records
) -> None:
    fake_anthropic.enqueue_json(200, cut_short_send())

    with pytest.raises(LlmBadResponse):
        client.complete(request())

    # One record, under the error, with the tokens the provider billed for the cut answer.
    [record] = records
    assert (record.error_code, record.usage) == ("llm_bad_response", RECORDED_USAGE)


def test_a_truncated_send_message_never_reaches_the_tool_and_the_loop_fails(
    fake_anthropic: FakeAnthropicServer, client: AnthropicClient
) -> None:
    fake_anthropic.enqueue_json(200, cut_short_send())
    sent = Sent()

    result = loop(client, sent)

    assert sent == []  # half a sentence is never sent to the customer
    # The turn's model-down path (DESIGN §10.4) answers instead of silence.
    assert (result.stop, result.error_code) == ("llm_error", "llm_bad_response")


def test_a_refusal_fails_the_loop_instead_of_ending_it_in_silence(
    fake_anthropic: FakeAnthropicServer, client: AnthropicClient, records: Records
) -> None:
    fake_anthropic.enqueue_json(200, refusal())

    result = loop(client, Sent())

    assert (result.stop, result.error_code) == ("llm_error", "llm_bad_response")
    assert [(r.error_code, r.usage) for r in records] == [("llm_bad_response", RECORDED_USAGE)]


def test_a_text_answer_cut_by_max_tokens_is_still_returned(
    fake_anthropic: FakeAnthropicServer, client: AnthropicClient
) -> None:
    # Only a cut tool call is unusable: a classifier may still read a cut text tolerantly.
    body = copy.deepcopy(recorded("response_tool_use_haiku45_sdk.json"))
    body["content"], body["stop_reason"] = [{"type": "text", "text": "Vou"}], "max_tokens"
    fake_anthropic.enqueue_json(200, body)

    response = client.complete(request())

    assert (response.text(), response.stop_reason) == ("Vou", "max_tokens")


@pytest.mark.parametrize("blank", ["", "\n\n", "  "])
def test_a_blank_text_block_beside_a_tool_call_is_not_replayed_to_the_api(
    fake_anthropic: FakeAnthropicServer, client: AnthropicClient, blank: str
) -> None:
    first = tool_use_response("search_knowledge", {"query": "prazo de entrega"})
    first["content"].insert(0, {"type": "text", "text": blank})
    fake_anthropic.enqueue_json(200, first)
    fake_anthropic.enqueue_json(200, tool_use_response("send_message", {"text": "Chega amanhã."}))
    sent = Sent()

    result = loop(client, sent)

    assert sent == ["Chega amanhã."] and result.stop == "terminal_tool"
    replayed = fake_anthropic.requests[1].json["messages"]
    texts = [
        block["text"]
        for message in replayed
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "text"
    ]
    # The API's rule: "text content blocks must contain non-whitespace text".
    assert all(t.strip() for t in texts)
    assert [b["type"] for b in replayed[1]["content"]] == ["tool_use"]
