"""The model classifiers at the HTTP level: the official SDK talks to a local server that
answers with the recorded wire format (a tool_use of the closed schema). No database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conversation.llm import AnthropicClient, CallRecord
from conversation.runtime import INTENT_CLASSIFICATION_SCHEMA, ConversationState
from conversation.runtime.intent_extractor import (
    HistoryTurn,
    IntentClassifierContext,
    IntentClassifierError,
    IntentExtractor,
)
from conversation.runtime.item_matcher import ItemMatcherError
from conversation.runtime.state import ToolKind
from conversation.runtime_adapters.classifiers import (
    INTENT_PURPOSE,
    INTENT_TOOL,
    MATCHER_PURPOSE,
    MATCHER_TOOL,
    LlmIntentClassifier,
    LlmItemMatcher,
)
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

from .conftest import recorded, tool_use_response

IDS = {"organization_id": "org-1", "conversation_id": "conv-1", "turn_id": "turn-1"}
CONTEXT = IntentClassifierContext(
    has_pending_confirmation=True,
    pending_confirmation_prompt="Vamos seguir com o cancelamento do Tamboro?",
    last_tool_name="invoice_explanation",
    last_tool_kind=ToolKind.EXPLANATION,
    last_invoice_answer=None,
    turn_index=3,
    conversation_history=(
        HistoryTurn("customer", "me explica a fatura"),
        HistoryTurn("agent", "Sua fatura soma R$ 233,26."),
    ),
)
OVERLOADED = Reply(
    529,
    json.dumps(recorded("error_529_overloaded_error.json")).encode(),
    {"content-type": "application/json"},
)


class Records(list[CallRecord]):
    def __call__(self, record: CallRecord) -> None:
        self.append(record)


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as fake:
        yield fake


@pytest.fixture
def records() -> Records:
    return Records()


def client(server: FakeAnthropicServer, records: Records) -> AnthropicClient:
    return AnthropicClient(
        "sk-ant-test", base_url=server.base_url, recorder=records, max_retries=1, timeout_s=2
    )


def classifier(server: FakeAnthropicServer, records: Records) -> LlmIntentClassifier:
    return LlmIntentClassifier(client(server, records), model="claude-haiku-4-5", context=IDS)


def test_intent_classifier_forces_a_tool_call_with_the_closed_schema(server, records):
    server.enqueue_json(200, recorded("response_tool_use_intent_classifier.json"))
    result = classifier(server, records).classify(
        "quero cancelar o VOD e o HBO Max", context=CONTEXT
    )

    assert result == {
        "kind": "action_request",
        "requested_action": True,
        "action_verbs": ["cancelar"],
        "mentioned_items": ["VOD", "HBO Max"],
    }
    body = server.requests[0].json
    assert body["tool_choice"] == {"type": "tool", "name": INTENT_TOOL}
    (tool,) = body["tools"]
    assert tool["name"] == INTENT_TOOL
    assert tool["input_schema"] == INTENT_CLASSIFICATION_SCHEMA
    assert tool["cache_control"] == {"type": "ephemeral"}  # stable prefix: tools + system
    assert body["model"] == "claude-haiku-4-5"
    prompt = body["messages"][0]["content"]
    assert '"quero cancelar o VOD e o HBO Max"' in prompt
    assert "Há confirmação pendente: sim" in prompt
    assert "Vamos seguir com o cancelamento do Tamboro?" in prompt
    assert "Última ação executada: invoice_explanation (explanation)" in prompt
    assert "Cliente: me explica a fatura" in prompt and "Agente: Sua fatura" in prompt
    (record,) = records
    assert (record.purpose, record.error_code) == (INTENT_PURPOSE, "")
    assert (record.usage.input_tokens, record.usage.output_tokens) == (812, 58)
    assert record.context == IDS


def test_intent_classifier_drops_keys_outside_the_schema(server, records):
    server.enqueue_json(
        200,
        tool_use_response(INTENT_TOOL, {"kind": "value_question", "confidence": 0.9, "x": 1}),
    )
    assert classifier(server, records).classify("quanto custa?", context=CONTEXT) == {
        "kind": "value_question"
    }


@pytest.mark.parametrize(
    "tool_input",
    [{"kind": "start"}, {"kind": "cancelar"}, {"kind": None}, {"requested_action": True}],
    ids=["sentinel_start", "invented_kind", "null_kind", "no_kind"],
)
def test_intent_classifier_refuses_a_kind_outside_the_taxonomy(server, records, tool_input):
    server.enqueue_json(200, tool_use_response(INTENT_TOOL, tool_input))
    with pytest.raises(IntentClassifierError):
        classifier(server, records).classify("oi", context=CONTEXT)


def test_intent_classifier_reads_json_answered_as_text(server, records):
    body = recorded("response_tool_use_intent_classifier.json")
    body["content"] = [{"type": "text", "text": 'Classificação: {"kind": "off_context"}'}]
    body["stop_reason"] = "end_turn"
    server.enqueue_json(200, body)
    assert classifier(server, records).classify("e o jogo?", context=CONTEXT) == {
        "kind": "off_context"
    }


def test_intent_classifier_without_a_verdict_fails(server, records):
    body = recorded("response_tool_use_intent_classifier.json")
    body["content"] = [{"type": "text", "text": "Não sei."}]
    body["stop_reason"] = "end_turn"
    server.enqueue_json(200, body)
    with pytest.raises(IntentClassifierError):
        classifier(server, records).classify("hum", context=CONTEXT)


def test_provider_outage_degrades_the_extractor_to_its_fallback_intent(server, records):
    server.enqueue(OVERLOADED, OVERLOADED)  # first try + the SDK's one retry
    extractor = IntentExtractor(classifier(server, records))
    intent = extractor.extract("quero cancelar o VOD", state=ConversationState())
    assert (intent.kind, intent.source) == ("unknown", "fallback")
    (record,) = records
    assert (record.purpose, record.error_code) == (INTENT_PURPOSE, "llm_unavailable")


def matcher(server: FakeAnthropicServer, records: Records) -> LlmItemMatcher:
    return LlmItemMatcher(client(server, records), model="claude-haiku-4-5", context=IDS)


def test_item_matcher_offers_the_candidates_as_an_enum_and_drops_inventions(server, records):
    server.enqueue_json(
        200, tool_use_response(MATCHER_TOOL, {"matches": ["Aya Ensina", "Aya Premium Gold"]})
    )
    picked = matcher(server, records).match("aia", ["Tamboro", "Aya Ensina", "Aya Ensina"])
    assert picked == ["Aya Ensina"]
    body = server.requests[0].json
    assert body["tool_choice"] == {"type": "tool", "name": MATCHER_TOOL}
    schema: dict[str, Any] = body["tools"][0]["input_schema"]
    assert schema["properties"]["matches"]["items"]["enum"] == ["Tamboro", "Aya Ensina"]
    assert '"aia"' in body["messages"][0]["content"]
    assert records[0].purpose == MATCHER_PURPOSE


def test_item_matcher_failure_raises_the_matchers_error(server, records):
    server.enqueue(OVERLOADED, OVERLOADED)
    with pytest.raises(ItemMatcherError):
        matcher(server, records).match("aia", ["Aya Ensina"])
    assert records[0].error_code == "llm_unavailable"


def test_item_matcher_with_nothing_to_match_makes_no_call(server, records):
    assert matcher(server, records).match("aia", []) == []
    assert server.requests == [] and records == []
