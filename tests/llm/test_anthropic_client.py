"""AnthropicClient against a real local HTTP server speaking the recorded wire format.

Nothing of the SDK is mocked: requests go through its HTTP client, retries and timeouts to
``tests/fakes/anthropic_server.py``; answers are the recordings in tests/fixtures/anthropic.
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conversation.llm import (
    AnthropicClient,
    ChatMessage,
    LlmBadResponse,
    LlmError,
    LlmInvalidRequest,
    LlmRateLimited,
    LlmTimeout,
    LlmUnavailable,
    ModelRequest,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

from .conftest import Records, load_fixture

API_KEY = "sk-ant-test-key"
EPHEMERAL = {"type": "ephemeral"}

WEATHER_TOOL = ToolSpec(
    name="get_weather",
    description="Lookup the weather for a given city in either celsius or fahrenheit",
    input_schema=load_fixture("request_tool_result_followup_haiku45.json")["tools"][0][
        "input_schema"
    ],
)
SEND_MESSAGE = ToolSpec(
    name="send_message",
    description="Envia uma mensagem ao cliente.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
)
CONTEXT = {"organization_id": 7, "conversation_id": 42, "turn_id": 99}


MakeClient = Callable[..., AnthropicClient]


@pytest.fixture
def make_client() -> Iterator[MakeClient]:
    clients: list[AnthropicClient] = []

    def make(server: FakeAnthropicServer, records: Records, **kwargs: Any) -> AnthropicClient:
        client = AnthropicClient(API_KEY, base_url=server.base_url, recorder=records, **kwargs)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def make_request(**overrides: Any) -> ModelRequest:
    fields: dict[str, Any] = {
        "purpose": "orchestrator",
        "model": "claude-haiku-4-5",
        "system": ["Você é Ana, assistente da Loja Sol.", "Base de conhecimento: ..."],
        "messages": [ChatMessage(role="user", content="What is the weather in SF?")],
        "tools": [SEND_MESSAGE, WEATHER_TOOL],
        "tool_choice": ToolChoice(type="auto"),
        "max_tokens": 512,
        "timeout_s": 5.0,
        "context": CONTEXT,
    }
    fields.update(overrides)
    return ModelRequest(**fields)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# --- success ---------------------------------------------------------------------------


def test_tool_use_response_is_parsed_with_exact_ids_input_and_cache_usage(
    fake_anthropic: FakeAnthropicServer, records: Records, make_client: MakeClient
) -> None:
    fake_anthropic.enqueue_json(200, load_fixture("response_tool_use_cached_haiku45.json"))

    response = make_client(fake_anthropic, records).complete(make_request())

    assert response.content == (
        ToolUseBlock(
            id="toolu_01A9HHF5Ezy3oBrKmSgfASm9",
            name="get_weather",
            input={"location": "San Francisco, CA", "units": "f"},
        ),
    )
    assert response.stop_reason == "tool_use"
    assert response.model == "claude-haiku-4-5-20251001"
    assert response.usage == Usage(
        input_tokens=656,
        output_tokens=74,
        cache_read_input_tokens=1843,
        cache_creation_input_tokens=215,
    )
    assert len(records) == 1
    record = records[0]
    assert record.purpose == "orchestrator"
    assert record.model == "claude-haiku-4-5"
    assert record.usage == response.usage
    assert record.error_code == ""
    assert record.context == CONTEXT
    assert record.latency_ms >= 0


def test_request_uses_real_wire_format_with_cache_breakpoints_on_stable_prefix(
    fake_anthropic: FakeAnthropicServer, records: Records, make_client: MakeClient
) -> None:
    fake_anthropic.enqueue_json(200, load_fixture("response_tool_use_haiku45_sdk.json"))

    make_client(fake_anthropic, records).complete(make_request())

    [received] = fake_anthropic.requests
    assert received.method == "POST"
    assert received.path == "/v1/messages"
    # SDK 2.x: bearer auth and a dated API version on every request.
    assert received.headers["authorization"] == f"Bearer {API_KEY}"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", received.headers["anthropic-version"])
    assert received.headers["content-type"] == "application/json"
    body = received.json
    assert body["model"] == "claude-haiku-4-5"
    assert body["max_tokens"] == 512
    assert body["system"] == [
        {"type": "text", "text": "Você é Ana, assistente da Loja Sol."},
        {"type": "text", "text": "Base de conhecimento: ...", "cache_control": EPHEMERAL},
    ]
    assert [t["name"] for t in body["tools"]] == ["send_message", "get_weather"]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1] == {
        "name": "get_weather",
        "description": WEATHER_TOOL.description,
        "input_schema": WEATHER_TOOL.input_schema,
        "cache_control": EPHEMERAL,
    }
    assert body["tool_choice"] == {"type": "auto"}
    assert body["messages"] == [{"role": "user", "content": "What is the weather in SF?"}]
    assert not body.get("stream")


def test_tool_result_followup_is_sent_exactly_as_the_recorded_request(
    fake_anthropic: FakeAnthropicServer, records: Records, make_client: MakeClient
) -> None:
    recorded = load_fixture("request_tool_result_followup_haiku45.json")
    fake_anthropic.enqueue_json(200, load_fixture("response_tool_use_parallel_haiku45.json"))
    [tool] = recorded["tools"]
    messages = [
        ChatMessage(
            role=m["role"],
            content=[
                TextBlock(text=b["text"])
                if b["type"] == "text"
                else ToolUseBlock(id=b["id"], name=b["name"], input=b["input"])
                if b["type"] == "tool_use"
                else ToolResultBlock(
                    tool_use_id=b["tool_use_id"], content=b["content"], is_error=b["is_error"]
                )
                for b in m["content"]
            ],
        )
        for m in recorded["messages"]
    ]
    request = make_request(
        model=recorded["model"],
        max_tokens=recorded["max_tokens"],
        system=[recorded["system"]],
        tools=[ToolSpec(tool["name"], tool["description"], tool["input_schema"])],
        messages=messages,
    )

    response = make_client(fake_anthropic, records).complete(request)

    body = fake_anthropic.requests[0].json
    assert body["messages"] == recorded["messages"]
    assert body["tools"] == [{**tool, "cache_control": EPHEMERAL}]
    assert body["tool_choice"] == recorded["tool_choice"]
    assert body["system"] == [
        {"type": "text", "text": recorded["system"], "cache_control": EPHEMERAL}
    ]
    # The recorded answer: one text block then four parallel tool calls.
    assert response.text().startswith("I'll help you find out who is the youngest")
    assert [(u.id, u.input["name"]) for u in response.tool_uses()] == [
        ("toolu_0167cfEnoQaPviGdVXA95zcu", "Alice"),
        ("toolu_01EEe2V5HD1Ac4rKiUR4HD2T", "Bob"),
        ("toolu_01XFyAjstT3966qvRynZyVPo", "Charlie"),
        ("toolu_013mnQZbgtK2oe3Mo3XKJsx3", "Daisy"),
    ]
    assert response.usage == Usage(input_tokens=423, output_tokens=202)


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (ToolChoice(type="tool", name="get_weather"), {"type": "tool", "name": "get_weather"}),
        (ToolChoice(type="any"), {"type": "any"}),
        (None, None),
    ],
)
def test_tool_choice_is_mapped_to_the_wire_form(
    fake_anthropic: FakeAnthropicServer,
    records: Records,
    make_client: MakeClient,
    choice: ToolChoice | None,
    wire: dict[str, str] | None,
) -> None:
    fake_anthropic.enqueue_json(200, load_fixture("response_tool_use_haiku45_sdk.json"))

    make_client(fake_anthropic, records).complete(make_request(tool_choice=choice))

    assert fake_anthropic.requests[0].json.get("tool_choice") == wire


def test_temperature_is_not_sent_because_the_api_version_rejects_it(
    fake_anthropic: FakeAnthropicServer, records: Records, make_client: MakeClient
) -> None:
    fake_anthropic.enqueue_json(200, load_fixture("response_tool_use_haiku45_sdk.json"))

    make_client(fake_anthropic, records).complete(make_request(temperature=0.2))

    assert "temperature" not in fake_anthropic.requests[0].json


def test_empty_system_and_no_tools_are_left_out_of_the_body(
    fake_anthropic: FakeAnthropicServer, records: Records, make_client: MakeClient
) -> None:
    fake_anthropic.enqueue_json(200, load_fixture("response_tool_use_haiku45_sdk.json"))

    make_client(fake_anthropic, records).complete(
        make_request(system=["", "  "], tools=(), tool_choice=None)
    )

    body = fake_anthropic.requests[0].json
    assert "system" not in body
    assert "tools" not in body


def test_ignored_thinking_blocks_do_not_break_a_usable_answer(
    fake_anthropic: FakeAnthropicServer, records: Records, make_client: MakeClient
) -> None:
    body = load_fixture("response_tool_use_haiku45_sdk.json")
    body["content"].insert(0, {"type": "thinking", "thinking": "...", "signature": "x"})
    fake_anthropic.enqueue_json(200, body)

    response = make_client(fake_anthropic, records).complete(make_request())

    assert [u.name for u in response.tool_uses()] == ["get_weather"]
    assert len(response.content) == 1


def test_rate_limited_twice_then_answered_succeeds_through_sdk_retries(
    fake_anthropic: FakeAnthropicServer, records: Records, make_client: MakeClient
) -> None:
    # The recorded exchange: 429, 429, 200. The 429s carry x-should-retry: true but no
    # retry-after; a small retry-after-ms keeps the SDK's back-off short in tests.
    for exchange in load_fixture("exchange_429_429_200_sonnet45_responses.json"):
        headers = {**exchange["headers"], "retry-after-ms": "10"}
        fake_anthropic.enqueue_json(exchange["status_code"], exchange["body"], headers=headers)

    response = make_client(fake_anthropic, records, max_retries=2).complete(make_request())

    assert len(fake_anthropic.requests) == 3
    assert [r.headers["x-stainless-retry-count"] for r in fake_anthropic.requests] == [
        "0",
        "1",
        "2",
    ]
    assert response.stop_reason == "end_turn"
    assert response.text().startswith('{"items"')
    assert response.usage == Usage(input_tokens=406, output_tokens=50)
    assert len(records) == 1
    assert records[0].error_code == ""


# --- failures --------------------------------------------------------------------------


def error_reply(status: int, fixture_body: Any, **headers: str) -> Reply:
    return Reply(
        status=status,
        body=json.dumps(fixture_body).encode(),
        headers={"content-type": "application/json", **headers},
    )


OVERLOADED = error_reply(
    529, load_fixture("error_529_overloaded_error.json"), **{"retry-after-ms": "10"}
)
RATE_LIMITED = error_reply(
    429, load_fixture("error_429_rate_limit_error.json"), **{"x-should-retry": "true"}
)
API_ERROR = error_reply(
    500,
    {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
    **{"retry-after-ms": "10"},
)
INVALID_REQUEST = error_reply(400, load_fixture("error_400_invalid_request_error.json"))
NOT_FOUND = error_reply(404, load_fixture("error_404_not_found_error.json"))
UNAUTHORIZED = error_reply(
    401,
    {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
)
JSON = {"content-type": "application/json"}


def ok_body(*, drop: str = "", **changes: Any) -> bytes:
    """The recorded tool_use answer with some fields replaced or dropped."""
    body = {**load_fixture("response_tool_use_haiku45_sdk.json"), **changes}
    body.pop(drop, None)
    return json.dumps(body).encode()


def ok_reply(*, drop: str = "", **changes: Any) -> Reply:
    return Reply(200, ok_body(drop=drop, **changes), JSON)


STRING_INPUT = [{"type": "tool_use", "id": "toolu_1", "name": "x", "input": '{"a": 1}'}]
HTML = Reply(200, b"<html>oops</html>", {"content-type": "text/html"})

# name: (replies queued, max_retries, error raised, HTTP attempts the server saw)
FAILURES = {
    "529 overloaded, retried once": ([OVERLOADED, OVERLOADED], 1, LlmUnavailable, 2),
    "500 api_error": ([API_ERROR], 0, LlmUnavailable, 1),
    "429 rate limited, no retries left": ([RATE_LIMITED], 0, LlmRateLimited, 1),
    "400 invalid request is not retried": ([INVALID_REQUEST], 2, LlmInvalidRequest, 1),
    "404 model not enabled": ([NOT_FOUND], 2, LlmInvalidRequest, 1),
    "401 bad key": ([UNAUTHORIZED], 2, LlmInvalidRequest, 1),
    "200 malformed json": ([Reply(200, b'{"content": [', JSON)], 0, LlmBadResponse, 1),
    "200 html body": ([HTML], 0, LlmBadResponse, 1),
    "200 missing content": ([ok_reply(drop="content")], 0, LlmBadResponse, 1),
    "200 tool_use input not an object": ([ok_reply(content=STRING_INPUT)], 0, LlmBadResponse, 1),
    "200 unexpected block type": ([ok_reply(content=[{"type": "image"}])], 0, LlmBadResponse, 1),
    "200 missing usage": ([ok_reply(drop="usage")], 0, LlmBadResponse, 1),
}


@pytest.mark.parametrize(
    ("replies", "max_retries", "expected", "attempts"),
    list(FAILURES.values()),
    ids=list(FAILURES),
)
def test_failure_raises_mapped_error_and_records_one_call(
    fake_anthropic: FakeAnthropicServer,
    records: Records,
    make_client: MakeClient,
    replies: list[Reply],
    max_retries: int,
    expected: type[LlmError],
    attempts: int,
) -> None:
    fake_anthropic.enqueue(*replies)
    client = make_client(fake_anthropic, records, max_retries=max_retries)

    with pytest.raises(expected):
        client.complete(make_request())

    assert len(fake_anthropic.requests) == attempts
    assert len(records) == 1
    assert records[0].error_code == expected.code
    assert records[0].usage == Usage()
    assert records[0].context == CONTEXT


def test_answer_slower_than_request_timeout_raises_timeout(
    fake_anthropic: FakeAnthropicServer, records: Records, make_client: MakeClient
) -> None:
    fake_anthropic.enqueue(Reply(200, ok_body(), JSON, delay_s=2.0))
    client = make_client(fake_anthropic, records, max_retries=0, timeout_s=30)

    started = time.monotonic()
    with pytest.raises(LlmTimeout):
        client.complete(make_request(timeout_s=0.3))

    # request.timeout_s, not the client default, bounded the wait.
    assert time.monotonic() - started < 1.5
    assert [r.error_code for r in records] == ["llm_timeout"]
    assert 250 <= records[0].latency_ms < 1500


def test_unreachable_provider_raises_unavailable(records: Records) -> None:
    client = AnthropicClient(API_KEY, base_url=closed_port_url(), recorder=records, max_retries=0)

    with pytest.raises(LlmUnavailable):
        client.complete(make_request(timeout_s=1.0))
    client.close()

    assert [r.error_code for r in records] == ["llm_unavailable"]


def test_forced_tool_choice_without_name_fails_before_any_http_call(
    fake_anthropic: FakeAnthropicServer, records: Records, make_client: MakeClient
) -> None:
    with pytest.raises(LlmInvalidRequest):
        make_client(fake_anthropic, records).complete(
            make_request(tool_choice=ToolChoice(type="tool"))
        )

    assert fake_anthropic.requests == []
    assert [r.error_code for r in records] == ["llm_invalid_request"]


def test_failing_recorder_does_not_fail_an_answered_call(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    def broken_recorder(record: object) -> None:
        raise RuntimeError("ledger down")

    fake_anthropic.enqueue_json(200, load_fixture("response_tool_use_haiku45_sdk.json"))
    client = AnthropicClient(API_KEY, base_url=fake_anthropic.base_url, recorder=broken_recorder)

    response = client.complete(make_request())
    client.close()

    assert response.stop_reason == "tool_use"


def test_unexpected_exception_is_wrapped_as_llm_error_and_recorded(
    fake_anthropic: FakeAnthropicServer, records: Records, make_client: MakeClient
) -> None:
    # A tool schema that cannot be serialised to JSON fails inside the SDK with a
    # non-SDK exception; the seam still raises only LlmError.
    broken = ToolSpec("broken", "", {"type": "object", "default": object()})

    with pytest.raises(LlmError) as caught:
        make_client(fake_anthropic, records).complete(make_request(tools=[broken]))

    assert type(caught.value) is LlmError
    assert fake_anthropic.requests == []
    assert [r.error_code for r in records] == ["llm_error"]
