from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversation.llm import (
    RELAY_MARKER,
    ChatMessage,
    ModelRequest,
    ModelResponse,
    OfflineModel,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from conversation.llm.offline import (
    GENERIC_REPLY,
    HANDOFF_REASON_CODE,
    NOT_FOUND_REPLY,
    agent_name,
)

from .conftest import Records


def object_schema(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


STRING = {"type": "string"}
SEND_MESSAGE = ToolSpec("send_message", "Envia uma mensagem.", object_schema(text=STRING))
HANDOFF = ToolSpec(
    "request_human_handoff",
    "Passa a conversa para um humano.",
    object_schema(
        motivo_codigo={"type": "string", "enum": ["requested_human", "critical_stage"]},
        motivo=STRING,
    ),
)
SEARCH = ToolSpec("search_knowledge", "Busca na base.", object_schema(query=STRING))
OPEN_CASE = ToolSpec(
    "open_human_case",
    "Abre um caso.",
    object_schema(titulo=STRING, resumo=STRING, bloqueio=STRING),
)
PRODUCT_TOOLS = (SEND_MESSAGE, HANDOFF, SEARCH, OPEN_CASE)
SYSTEM = ("Você é Ana, assistente da Loja Sol.\nResponda em português.", "Regras: ...")


def ask(
    *messages: ChatMessage | str,
    tools: Sequence[ToolSpec] = PRODUCT_TOOLS,
    system: Sequence[str] = SYSTEM,
    model: OfflineModel | None = None,
) -> ModelResponse:
    request = ModelRequest(
        purpose="orchestrator",
        model="offline",
        system=system,
        messages=[m if isinstance(m, ChatMessage) else ChatMessage("user", m) for m in messages],
        tools=tools,
    )
    return (model or OfflineModel()).complete(request)


def only_call(response: ModelResponse) -> ToolUseBlock:
    assert response.stop_reason == "tool_use"
    [call] = response.tool_uses()
    return call


def sent_text(response: ModelResponse) -> str:
    call = only_call(response)
    assert call.name == "send_message"
    return str(call.input["text"])


def after_tool(name: str, tool_input: dict[str, Any], result: str, **kw: Any) -> ModelResponse:
    """Ask again after the model called ``name`` and the tool answered ``result``."""
    call = ToolUseBlock(id="toolu_offline_prev", name=name, input=tool_input)
    return ask(
        "qual o horário?",
        ChatMessage("assistant", [call]),
        ChatMessage("user", [ToolResultBlock(tool_use_id=call.id, content=result, **kw)]),
    )


# --- greeting --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["oi", "Olá!", "Bom dia", "boa tarde!!", "BOA NOITE", "e aí"])
def test_greeting_only_is_answered_with_agent_name(text: str) -> None:
    assert sent_text(ask(text)) == "Olá! Sou Ana. Como posso ajudar?"


def test_greeting_burst_of_several_lines_is_still_a_greeting() -> None:
    assert sent_text(ask("oiii\ntudo bem? 😊")) == "Olá! Sou Ana. Como posso ajudar?"


def test_greeting_without_agent_name_in_system_omits_the_name() -> None:
    assert sent_text(ask("oi", system=["Atenda bem os clientes."])) == "Olá! Como posso ajudar?"


@pytest.mark.parametrize(
    ("system", "name"),
    [
        (["Você é a Ana, assistente da Loja Sol."], "a Ana"),
        (["você é Márcia. Seja breve."], "Márcia"),
        (["Nome: João Pedro\nVocê atende a loja."], "João Pedro"),
        (["Voce e Bia (atendente virtual)"], "Bia"),
        (["Regras gerais", "Você é Ana"], ""),
        ([], ""),
    ],
)
def test_agent_name_comes_from_first_line_of_first_system_block(
    system: list[str], name: str
) -> None:
    assert agent_name(system) == name


def test_greeting_followed_by_a_question_is_not_only_a_greeting() -> None:
    call = only_call(ask("oi, bom dia! vocês abrem sábado?"))

    assert call.name == "search_knowledge"


# --- handoff ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "quero falar com um atendente",
        "ATENDENTE",
        "tem algum humano aí?",
        "quero falar com alguém",
        "Quero falar com ALGUEM por favor",
        "preciso falar com uma pessoa de verdade",
        "oi\nme passa pra um atendimento humano",
    ],
)
def test_request_for_a_person_calls_handoff_with_spec_reason_code(text: str) -> None:
    call = only_call(ask(text))

    assert call.name == "request_human_handoff"
    assert call.input["motivo_codigo"] == HANDOFF_REASON_CODE == "requested_human"
    jsonschema.validate(dict(call.input), HANDOFF.input_schema)


def test_price_per_person_is_not_a_request_for_a_person() -> None:
    assert only_call(ask("qual o preço por pessoa?")).name == "search_knowledge"


def test_request_for_a_person_without_handoff_tool_searches_instead() -> None:
    call = only_call(ask("quero um atendente", tools=[SEND_MESSAGE, SEARCH]))

    assert call.name == "search_knowledge"


def test_handoff_input_follows_schema_that_names_reason_por_que() -> None:
    spec = ToolSpec(
        "request_human_handoff",
        "",
        object_schema(motivo_codigo=STRING, por_que=STRING),
    )

    call = only_call(ask("quero falar com um humano", tools=[SEND_MESSAGE, spec]))

    assert call.input["motivo_codigo"] == "requested_human"
    assert call.input["por_que"]
    jsonschema.validate(dict(call.input), spec.input_schema)


# --- relay -----------------------------------------------------------------------------


def test_relay_directive_in_system_sends_the_humans_text() -> None:
    system = [*SYSTEM, f"{RELAY_MARKER} Seu acesso ao painel foi liberado."]

    assert sent_text(ask("oi", system=system)) == "Seu acesso ao painel foi liberado."


def test_relay_directive_in_last_message_wins_over_words_that_ask_for_a_person() -> None:
    message = f"Contexto do caso #12\n{RELAY_MARKER} O atendente liberou seu acesso."

    assert sent_text(ask(message)) == "O atendente liberou seu acesso."


def test_relay_is_not_repeated_after_send_message_result() -> None:
    call = ToolUseBlock(id="toolu_offline_x", name="send_message", input={"text": "ok"})
    response = ask(
        f"{RELAY_MARKER} Resolvido.",
        ChatMessage("assistant", [call]),
        ChatMessage("user", [ToolResultBlock(tool_use_id=call.id, content="enviado")]),
    )

    assert response.stop_reason == "end_turn"
    assert response.tool_uses() == []


# --- knowledge search ------------------------------------------------------------------


def test_question_searches_knowledge_with_the_whole_burst() -> None:
    call = only_call(ask("qual o horário\nde vocês no sábado?"))

    assert call.name == "search_knowledge"
    assert call.input == {"query": "qual o horário\nde vocês no sábado?"}


def test_question_without_search_tool_gets_generic_reply() -> None:
    assert sent_text(ask("qual o horário?", tools=[SEND_MESSAGE, HANDOFF])) == GENERIC_REPLY


def test_search_result_is_answered_with_first_passage() -> None:
    result = (
        "[Horário de atendimento]\n1. Funcionamos de segunda a sexta, das 9h às 18h.\n\n"
        "[Sábados]\nAos sábados, até 12h."
    )

    text = sent_text(after_tool("search_knowledge", {"query": "horário"}, result))

    # The title tells the model which document it is; the customer hears the passage only.
    assert text == "Encontrei isto: Funcionamos de segunda a sexta, das 9h às 18h."


def test_long_passage_is_trimmed_to_about_400_characters() -> None:
    result = "Política de trocas: " + "o produto pode ser trocado em até 30 dias. " * 30

    text = sent_text(after_tool("search_knowledge", {"query": "troca"}, result))

    assert text.startswith("Encontrei isto: Política de trocas: o produto")
    assert text.endswith("…")
    assert len(text) <= len("Encontrei isto: ") + 400


@pytest.mark.parametrize(
    ("result", "is_error"),
    [
        ("Nenhum resultado encontrado.", False),
        ("Não encontrei nada sobre isso.", False),
        ("", False),
        ("timeout na busca", True),
    ],
)
def test_search_without_results_says_it_did_not_find(result: str, is_error: bool) -> None:
    response = after_tool("search_knowledge", {"query": "x"}, result, is_error=is_error)

    assert sent_text(response) == NOT_FOUND_REPLY


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("send_message", {"text": "Olá!"}),
        ("request_human_handoff", {"motivo_codigo": "requested_human", "motivo": "pediu"}),
        ("open_human_case", {"titulo": "t", "resumo": "r", "bloqueio": "b"}),
    ],
)
def test_result_of_other_tools_ends_the_turn(name: str, tool_input: dict[str, Any]) -> None:
    response = after_tool(name, tool_input, '{"ok": true}')

    assert response.stop_reason == "end_turn"
    assert response.content == ()


def test_answer_without_send_message_tool_is_plain_text() -> None:
    response = ask("oi", tools=[SEARCH])

    assert response.stop_reason == "end_turn"
    assert response.content == (TextBlock("Olá! Sou Ana. Como posso ajudar?"),)


# --- determinism, ids, recording -------------------------------------------------------


def test_same_request_gives_the_same_response() -> None:
    first = ask("qual o horário?", model=OfflineModel())
    second = ask("qual o horário?", model=OfflineModel())

    assert first == second


def test_tool_use_ids_are_unique_across_a_conversation() -> None:
    """Drive a whole conversation through the offline tool loop and collect every id."""
    model = OfflineModel()
    history: list[ChatMessage] = []
    ids: list[str] = []
    for text in ["oi", "qual o horário?", "qual o horário?", "e aí", "quero um atendente"]:
        history.append(ChatMessage("user", text))
        for _ in range(4):
            response = ask(*history, model=model)
            if not response.tool_uses():
                break
            history.append(ChatMessage("assistant", list(response.content)))
            results = [
                ToolResultBlock(
                    tool_use_id=u.id,
                    content="Abrimos às 9h." if u.name == "search_knowledge" else "ok",
                )
                for u in response.tool_uses()
            ]
            ids.extend(u.id for u in response.tool_uses())
            history.append(ChatMessage("user", list(results)))

    assert len(ids) >= 7
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("toolu_") for i in ids)


def test_every_call_is_recorded_as_offline_with_zero_tokens(records: Records) -> None:
    request = ModelRequest(
        purpose="orchestrator",
        model="claude-haiku-4-5",
        system=SYSTEM,
        messages=[ChatMessage("user", "oi")],
        tools=PRODUCT_TOOLS,
        context={"organization_id": 1, "turn_id": 5},
    )

    OfflineModel(recorder=records).complete(request)

    assert len(records) == 1
    assert records[0].model == "offline"
    assert records[0].purpose == "orchestrator"
    assert records[0].usage == Usage()
    assert records[0].error_code == ""
    assert records[0].context == {"organization_id": 1, "turn_id": 5}


# --- classifiers -----------------------------------------------------------------------

CLASSIFY = ToolSpec(
    "classify_intent",
    "Classifica a intenção.",
    {
        "type": "object",
        "properties": {
            "intent": {"type": "string", "enum": ["vendas", "suporte", "none"]},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string"},
            "signals": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["intent", "confidence", "signals"],
        "additionalProperties": False,
    },
)


def classify(choice: ToolChoice | None, tools: Sequence[ToolSpec] = (CLASSIFY,)) -> ModelResponse:
    return OfflineModel().complete(
        ModelRequest(
            purpose="intent_router",
            model="offline",
            system=["Classifique."],
            messages=[ChatMessage("user", "quero comprar")],
            tools=tools,
            tool_choice=choice,
        )
    )


def test_forced_classifier_tool_gets_minimal_valid_no_opinion_input() -> None:
    call = only_call(classify(ToolChoice(type="tool", name="classify_intent")))

    assert call.name == "classify_intent"
    assert call.input == {"intent": "none", "confidence": 0, "signals": []}
    jsonschema.validate(dict(call.input), CLASSIFY.input_schema)


def test_classifier_enum_without_none_takes_first_value() -> None:
    spec = ToolSpec("pick", "", object_schema(label={"type": "string", "enum": ["a", "b"]}))

    call = only_call(classify(ToolChoice(type="any"), tools=[spec]))

    assert call.input == {"label": "a"}


def test_classifier_without_forced_tool_answers_nothing() -> None:
    response = classify(ToolChoice(type="auto"))

    assert response.stop_reason == "end_turn"
    assert response.content == ()


# --- properties ------------------------------------------------------------------------


PHRASES = [
    "oi",
    "Bom dia!",
    "atendente",
    "quero falar com alguém",
    "qual o preço?",
    "",
    " ",
    RELAY_MARKER,
    f"{RELAY_MARKER} Pronto, liberado.",
    "por pessoa",
    "😊",
    "?",
]
USER_TEXT = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(PHRASES), max_size=4).map("\n".join),
)


@settings(max_examples=200, deadline=None)
@given(
    text=USER_TEXT,
    tools=st.lists(st.sampled_from(PRODUCT_TOOLS), unique_by=lambda t: t.name),
)
def test_any_user_text_gets_a_valid_response_using_only_offered_tools(
    text: str, tools: list[ToolSpec]
) -> None:
    response = ask(text, tools=tools)

    offered = {t.name: t for t in tools}
    assert response.stop_reason in {"tool_use", "end_turn"}
    assert (response.stop_reason == "tool_use") == bool(response.tool_uses())
    for call in response.tool_uses():
        assert call.name in offered
        jsonschema.validate(dict(call.input), offered[call.name].input_schema)
    assert response == ask(text, tools=tools)


@settings(max_examples=100, deadline=None)
@given(result=st.text(max_size=600), is_error=st.booleans())
def test_any_search_result_gets_a_short_valid_answer(result: str, is_error: bool) -> None:
    text = sent_text(after_tool("search_knowledge", {"query": "x"}, result, is_error=is_error))

    assert text
    assert len(text) <= len("Encontrei isto: ") + 400


def test_handoff_input_stays_valid_for_a_closed_schema_without_reason_fields() -> None:
    spec = ToolSpec("request_human_handoff", "", object_schema(resumo=STRING))

    call = only_call(ask("quero um atendente", tools=[spec]))

    assert call.input == {"resumo": ""}
    jsonschema.validate(dict(call.input), spec.input_schema)
