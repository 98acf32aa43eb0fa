"""The offline model's knowledge answers (issue 16 item 11): no bracketed document title,
and "não encontrei" rather than an unrelated passage when retrieval is weak — judged on a
labelled handful of customer questions against a small knowledge base, through the same
search and tool-result format the product uses on SQLite."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversation import knowledge
from conversation.llm import ChatMessage, ModelRequest, OfflineModel, ToolResultBlock, ToolUseBlock
from conversation.llm.offline import NOT_FOUND_REPLY
from conversation.llm.offline.reading import relevance, search_passages
from conversation.models import KnowledgeDocument

DOCS = [
    ("Prazo de entrega", "Entregamos em 3 a 5 dias úteis para todo o Brasil."),
    ("Formas de pagamento", "Aceitamos Pix, boleto e cartão de crédito em até 12 vezes."),
    ("Trocas e devoluções", "Você pode trocar o produto em até 30 dias após o recebimento."),
    ("Horário de atendimento", "Atendemos de segunda a sexta, das 9h às 18h."),
]

# (question, the passage the answer must carry — None: it must say it found nothing)
LABELLED = [
    ("qual o prazo de entrega?", "3 a 5 dias úteis"),
    ("vocês aceitam pix?", "Pix, boleto"),
    ("como faço para pagar no cartão?", "cartão de crédito"),
    ("posso trocar um produto?", "trocar o produto"),
    ("qual o horário de atendimento de vocês?", "segunda a sexta"),
    ("e aí, tudo certo com aquilo de ontem?", None),
    ("vocês vendem carros usados?", None),
    ("qual a previsão do tempo para amanhã?", None),
    ("meu cachorro comeu o produto, e agora?", None),
]


def _docs() -> list[KnowledgeDocument]:
    return [KnowledgeDocument(id=uuid.uuid4(), title=t, body=b) for t, b in DOCS]


def _answer(question: str) -> str:
    hits = knowledge._token_overlap(_docs(), question, knowledge.MAX_RESULTS)
    call = ToolUseBlock(id="toolu_1", name="search_knowledge", input={"query": question})
    request = ModelRequest(
        purpose="orchestrator",
        model="offline",
        system=("Você é Ana, da Loja Sol.",),
        messages=[
            ChatMessage("user", question),
            ChatMessage("assistant", [call]),
            ChatMessage(
                "user",
                [ToolResultBlock(tool_use_id=call.id, content=knowledge.format_hits(hits))],
            ),
        ],
        tools=(),
    )
    response = OfflineModel().complete(request)
    return "".join(getattr(b, "text", "") for b in response.content)


@pytest.mark.parametrize(("question", "expected"), LABELLED, ids=[q for q, _ in LABELLED])
def test_the_offline_answer_matches_the_label(question, expected):
    answer = _answer(question)
    if expected is None:
        assert answer == NOT_FOUND_REPLY
    else:
        assert expected in answer
        assert answer.startswith("Encontrei isto: ")
        assert "[" not in answer  # never the bracketed document title
        assert not any(title in answer for title, _ in DOCS)


def test_a_hit_spanning_blank_lines_stays_one_passage_with_its_title_apart():
    text = "[Trocas]\nPrimeiro parágrafo.\n\nSegundo parágrafo.\n\n[Pix]\nAceitamos Pix."
    assert search_passages(text) == [
        ("Trocas", "Primeiro parágrafo. Segundo parágrafo."),
        ("Pix", "Aceitamos Pix."),
    ]


@given(st.text(max_size=80), st.text(max_size=80), st.text(max_size=200))
def test_relevance_is_a_share_between_zero_and_one(query, title, passage):
    assert 0.0 <= relevance(query, title, passage) <= 1.0
