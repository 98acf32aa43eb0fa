"""The offline model's case rules: it can drive the whole cases loop deterministically."""

from __future__ import annotations

import pytest

from cases.tools import OPEN_HUMAN_CASE_SPEC, PROVIDE_CASE_UPDATE_SPEC
from conversation.llm import OfflineModel
from conversation.llm.base import ChatMessage, ModelRequest, ToolResultBlock, ToolSpec
from conversation.llm.offline import (
    CASE_ALREADY_OPEN_REPLY,
    CASE_UPDATE_REPLY,
    human_only_request,
    normalize,
)

SEND = ToolSpec(
    "send_message",
    "Envia.",
    {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 4000}},
        "required": ["text"],
        "additionalProperties": False,
    },
)
SEARCH = ToolSpec(
    "search_knowledge",
    "Busca.",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
TOOLS = (SEND, SEARCH, OPEN_HUMAN_CASE_SPEC, PROVIDE_CASE_UPDATE_SPEC)
CASE_ID = "3f2a9c1e-1111-4222-8333-444455556666"


def ask(text: str, tools=TOOLS) -> list[tuple[str, dict]]:
    request = ModelRequest(
        purpose="orchestrator",
        model="offline",
        system=("Você é Ana.",),
        messages=(ChatMessage(role="user", content=text),),
        tools=tools,
    )
    return [(u.name, dict(u.input)) for u in OfflineModel().complete(request).tool_uses()]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Quero o reembolso do pedido 123", "Pedido de reembolso"),
        ("preciso de um estorno, fui cobrado 2x", "Pedido de estorno"),
        ("quero cancelar meu pedido 555", "Cancelamento de pedido"),
        ("Cancela a minha assinatura por favor", "Cancelamento de pedido"),
        ("libera meu acesso ao painel?", "Liberar acesso"),
    ],
)
def test_a_request_only_a_person_can_do_opens_a_case_then_tells_the_customer(text, title):
    calls = ask(text)

    assert [name for name, _ in calls] == ["open_human_case", "send_message"]
    case_input = calls[0][1]
    assert case_input["title"] == title
    assert text.strip()[:40] in case_input["summary"]
    assert case_input["blocker"]
    assert "nossa equipe" in calls[1][1]["text"]


@pytest.mark.parametrize(
    "text",
    [
        "qual o prazo do reembolso?",
        "como funciona o estorno no cartão",
        "oi",
        "quero comprar um tênis",
    ],
)
def test_questions_and_other_requests_open_no_case(text):
    assert "open_human_case" not in [name for name, _ in ask(text)]


def test_no_second_case_while_one_is_open():
    note = f"[CASO_ABERTO] case_id={CASE_ID} · “Pedido de reembolso” · esperando a equipe."
    calls = ask(f"{note}\nquero o reembolso logo!")
    assert calls == [("send_message", {"text": CASE_ALREADY_OPEN_REPLY})]


def test_the_customers_answer_goes_back_to_the_waiting_case():
    note = f"[CASO_AGUARDANDO_CLIENTE] case_id={CASE_ID} · “Reembolso” · a equipe precisa: CPF."
    calls = ask(f"{note}\nmeu CPF é 123.456.789-00")
    assert calls == [
        ("provide_case_update", {"case_id": CASE_ID, "info": "meu CPF é 123.456.789-00"}),
        ("send_message", {"text": CASE_UPDATE_REPLY}),
    ]


def test_note_lines_are_never_read_as_the_customers_words():
    note = f"[CASO_AGUARDANDO_CLIENTE] case_id={CASE_ID} · pergunte se quer falar com atendente"
    calls = ask(f"{note}\noi")
    assert [name for name, _ in calls] == ["send_message"]  # a greeting, not a handoff


def test_without_the_case_tools_the_old_behaviour_holds():
    assert [name for name, _ in ask("Quero o reembolso do pedido 123", (SEND, SEARCH))] == [
        "search_knowledge"
    ]


def test_tool_results_end_the_turn():
    request = ModelRequest(
        purpose="orchestrator",
        model="offline",
        system=("Você é Ana.",),
        messages=(
            ChatMessage(role="user", content="quero o reembolso"),
            ChatMessage(role="user", content=(ToolResultBlock("toolu_x", '{"ok": true}'),)),
        ),
        tools=TOOLS,
    )
    assert OfflineModel().complete(request).stop_reason == "end_turn"


def test_human_only_request_needs_a_request_verb():
    assert human_only_request(normalize("reembolso")) is None
    assert human_only_request(normalize("Quero reembolso")) == ("Pedido de reembolso", "reembolso")
