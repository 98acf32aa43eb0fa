"""Router classification: the spec's Task 3 tests, the forced tool and the cascade."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversation.llm.base import (
    LlmBadResponse,
    LlmError,
    LlmInvalidRequest,
    LlmRateLimited,
    LlmTimeout,
    LlmUnavailable,
    ModelRequest,
    ModelResponse,
    TextBlock,
    ToolUseBlock,
)
from conversation.llm.local_classifier import LocalClassifier
from routers.classification import (
    IntentOption,
    IntentVerdict,
    build_classifier_prompt,
    classify,
    classify_with_llm,
    intent_tool,
    local_classifier_for,
    parse_intent_verdict,
)
from routers.classification.prompt import TOOL_NAME

INTENTS = (
    IntentOption("vendas", "Quer comprar ou saber preço", ("quanto custa",)),
    IntentOption("suporte", "Problema técnico", ()),
)
NAMES = [o.name for o in INTENTS]
MODEL = "claude-haiku-4-5"
IDS = {"organization_id": "o1", "conversation_id": "c1", "turn_id": "t1"}


class FakeModel:
    """A ModelClient that answers from a queue and keeps every request it got."""

    name = "fake"

    def __init__(self, answers: Sequence[ModelResponse | Exception]) -> None:
        self.answers = list(answers)
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def tool_answer(payload: dict[str, object]) -> ModelResponse:
    return ModelResponse(
        content=[ToolUseBlock(id="toolu_1", name=TOOL_NAME, input=payload)],
        stop_reason="tool_use",
        model=MODEL,
    )


def text_answer(text: str) -> ModelResponse:
    return ModelResponse(content=[TextBlock(text)], stop_reason="end_turn", model=MODEL)


# --- spec Task 3: buildClassifierPrompt -------------------------------------------------


def test_prompt_lists_intents_with_description_and_none_option() -> None:
    prompt = build_classifier_prompt(INTENTS, "quanto custa o plano?")
    assert "vendas" in prompt
    assert "Quer comprar ou saber preço" in prompt
    assert "suporte" in prompt
    assert "none" in prompt
    assert "quanto custa o plano?" in prompt


# --- spec Task 3: parseIntentVerdict ----------------------------------------------------


def test_parse_extracts_intent_and_confidence_from_json() -> None:
    verdict = parse_intent_verdict('{"intent":"vendas","confidence":0.9}', NAMES)
    assert verdict == IntentVerdict(intent="vendas", confidence=0.9)


def test_parse_accepts_json_surrounded_by_text() -> None:
    verdict = parse_intent_verdict('Claro!\n{"intent":"suporte","confidence":0.7}\n', NAMES)
    assert verdict == IntentVerdict(intent="suporte", confidence=0.7)


def test_parse_none_becomes_null_intent_keeping_confidence() -> None:
    verdict = parse_intent_verdict('{"intent":"none","confidence":0.2}', NAMES)
    assert verdict == IntentVerdict(intent=None, confidence=0.2)


def test_parse_refuses_intent_not_in_router_when_model_hallucinates() -> None:
    verdict = parse_intent_verdict('{"intent":"financeiro","confidence":0.95}', NAMES)
    assert verdict == IntentVerdict(intent=None, confidence=0.0)


def test_parse_invalid_json_gives_null_verdict_without_raising() -> None:
    assert parse_intent_verdict("desculpe, não sei", NAMES) == IntentVerdict(None, 0.0)
    assert parse_intent_verdict('{"intent": "vendas",', NAMES) == IntentVerdict(None, 0.0)


def test_parse_clamps_confidence_out_of_range() -> None:
    assert parse_intent_verdict('{"intent":"vendas","confidence":7}', NAMES).confidence == 1
    assert parse_intent_verdict('{"intent":"vendas","confidence":-3}', NAMES).confidence == 0


@pytest.mark.parametrize("raw", ['"alta"', "true", "null", "[0.9]", "NaN"])
def test_parse_non_numeric_confidence_becomes_zero(raw: str) -> None:
    verdict = parse_intent_verdict(f'{{"intent":"vendas","confidence":{raw}}}', NAMES)
    assert verdict == IntentVerdict(intent="vendas", confidence=0.0)


@given(st.text())
def test_parse_never_raises_and_stays_closed_for_any_text(text: str) -> None:
    verdict = parse_intent_verdict(text, NAMES)
    assert verdict.intent in (None, *NAMES)
    assert 0.0 <= verdict.confidence <= 1.0


# --- spec Task 3: classifyIntent --------------------------------------------------------


def test_classify_uses_router_model_and_intent_router_purpose() -> None:
    model = FakeModel([tool_answer({"intent": "vendas", "confidence": 0.88})])
    result = classify_with_llm(
        model, model=MODEL, intents=INTENTS, message="quanto custa", context=IDS
    )
    assert (result.intent, result.confidence, result.status) == ("vendas", 0.88, "ok")
    request = model.requests[0]
    assert request.model == MODEL
    assert request.purpose == "intent_router"
    assert request.context == IDS


def test_classify_model_failure_returns_failed_and_warns_without_raising(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = FakeModel([LlmInvalidRequest("model not enabled")])
    with caplog.at_level(logging.WARNING, logger="routers.classification.llm"):
        result = classify_with_llm(model, model=MODEL, intents=INTENTS, message="oi", context=IDS)
    assert result.status == "failed"
    assert (result.intent, result.confidence) == (None, 0.0)
    assert result.error_code == "llm_invalid_request"
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "oi" not in caplog.records[0].getMessage()  # ids in logs, never message text


# --- the forced tool and tolerant reading of the answer ---------------------------------


def test_request_forces_the_closed_intent_tool() -> None:
    model = FakeModel([tool_answer({"intent": "suporte", "confidence": 0.5})])
    classify_with_llm(model, model=MODEL, intents=INTENTS, message="não entra", context=IDS)
    request = model.requests[0]
    assert request.tool_choice is not None
    assert (request.tool_choice.type, request.tool_choice.name) == ("tool", TOOL_NAME)
    assert [t.name for t in request.tools] == [TOOL_NAME]
    assert request.max_tokens <= 256
    assert "não entra" in request.messages[0].text()
    assert "não entra" not in "".join(request.system)  # system stays cacheable per router


def test_tool_schema_closes_intent_to_router_names_plus_none() -> None:
    schema = intent_tool(INTENTS).input_schema
    assert schema["properties"]["intent"]["enum"] == ["vendas", "suporte", "none"]
    assert schema["properties"]["confidence"]["minimum"] == 0
    assert schema["properties"]["confidence"]["maximum"] == 1
    assert set(schema["required"]) == {"intent", "confidence"}
    assert schema["additionalProperties"] is False


def test_classify_reads_json_text_when_model_skips_the_tool() -> None:
    model = FakeModel([text_answer('Segue: {"intent": "suporte", "confidence": 0.64}')])
    result = classify_with_llm(model, model=MODEL, intents=INTENTS, message="x", context=IDS)
    assert (result.intent, result.confidence, result.status) == ("suporte", 0.64, "ok")


def test_classify_without_tool_call_or_json_is_a_failure() -> None:
    model = FakeModel([text_answer("Acho que é vendas.")])
    result = classify_with_llm(model, model=MODEL, intents=INTENTS, message="x", context=IDS)
    assert (result.status, result.error_code, result.intent) == ("failed", "no_verdict", None)


def test_classify_hallucinated_intent_is_a_verdict_of_no_match() -> None:
    model = FakeModel([tool_answer({"intent": "financeiro", "confidence": 0.99})])
    result = classify_with_llm(model, model=MODEL, intents=INTENTS, message="x", context=IDS)
    assert (result.intent, result.confidence, result.status) == (None, 0.0, "ok")


@pytest.mark.parametrize(
    "error",
    [LlmTimeout(), LlmUnavailable(), LlmRateLimited(), LlmInvalidRequest(), LlmBadResponse()],
)
def test_classify_any_llm_error_is_a_failure_with_its_code(error: LlmError) -> None:
    model = FakeModel([error])
    result = classify_with_llm(model, model=MODEL, intents=INTENTS, message="x", context=IDS)
    assert (result.status, result.error_code) == ("failed", error.code)


def test_classify_survives_a_client_that_breaks_its_contract() -> None:
    model = FakeModel([RuntimeError("bug in a client")])
    result = classify_with_llm(model, model=MODEL, intents=INTENTS, message="x", context=IDS)
    assert (result.status, result.error_code) == ("failed", "unexpected_error")


# --- cascade: local first, LLM when unsure ----------------------------------------------

ROUTER = (
    IntentOption(
        "vendas",
        "Quer comprar, contratar um plano ou saber preço",
        ("quanto custa o plano", "quero contratar", "qual o valor da mensalidade"),
    ),
    IntentOption(
        "suporte",
        "Problema técnico com o serviço",
        ("minha internet caiu", "não consigo acessar o aplicativo", "a conexão está lenta"),
    ),
    IntentOption(
        "financeiro",
        "Boletos, faturas e pagamentos",
        ("segunda via do boleto", "quero pagar minha fatura", "meu pagamento não caiu"),
    ),
)


@pytest.fixture
def local() -> LocalClassifier:
    return local_classifier_for(ROUTER)


def run(message: str, local: LocalClassifier, llm: FakeModel | None, threshold: float):
    return classify(
        message,
        intents=ROUTER,
        local=local,
        llm=llm,
        model=MODEL,
        local_accept_threshold=threshold,
        context=IDS,
    )


def test_cascade_confident_local_verdict_stands_without_llm_call(local: LocalClassifier) -> None:
    llm = FakeModel([])
    result = run("quanto custa o plano?", local, llm, threshold=0.5)
    assert (result.stage, result.status, result.intent) == ("local", "ok", "vendas")
    assert result.confidence >= 0.5
    assert llm.requests == []


def test_cascade_unsure_local_asks_the_llm(local: LocalClassifier) -> None:
    llm = FakeModel([tool_answer({"intent": "financeiro", "confidence": 0.91})])
    result = run("quanto custa o plano?", local, llm, threshold=1.01)
    assert (result.stage, result.status, result.intent, result.confidence) == (
        "llm",
        "ok",
        "financeiro",
        0.91,
    )
    assert result.local_intent == "vendas"  # kept for telemetry
    assert len(llm.requests) == 1


def test_cascade_llm_failure_is_reported_failed_not_replaced_by_local_guess(
    local: LocalClassifier,
) -> None:
    llm = FakeModel([LlmTimeout()])
    result = run("quanto custa o plano?", local, llm, threshold=1.01)
    assert (result.stage, result.status, result.intent) == ("llm", "failed", None)
    assert result.error_code == "llm_timeout"
    assert result.local_intent == "vendas"


def test_cascade_without_llm_keeps_the_local_verdict_below_threshold(
    local: LocalClassifier,
) -> None:
    result = run("minha internet caiu de novo", local, None, threshold=1.01)
    assert (result.stage, result.status, result.intent) == ("local", "ok", "suporte")


def test_cascade_empty_message_classifies_nothing(local: LocalClassifier) -> None:
    llm = FakeModel([])
    result = run("  ?! ", local, llm, threshold=0.5)
    assert (result.stage, result.status, result.intent, result.confidence) == (
        "none",
        "ok",
        None,
        0.0,
    )
    assert llm.requests == []


def test_cascade_ignores_local_label_the_router_no_longer_has() -> None:
    stale = LocalClassifier.train({"cancelamento": ["quero cancelar meu plano"]})
    result = run("quero cancelar meu plano", stale, None, threshold=0.0)
    assert (result.stage, result.intent) == ("local", None)


def test_cascade_local_none_label_means_no_intent() -> None:
    with_none = LocalClassifier.train(
        {"vendas": ["quanto custa o plano"], "none": ["bom dia", "oi tudo bem"]}
    )
    result = run("oi, bom dia", with_none, None, threshold=0.0)
    assert result.intent is None
