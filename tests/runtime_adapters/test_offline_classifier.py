"""The offline intent classifier: pt-BR paraphrases to the closed schema, no model."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversation.runtime import ConversationState
from conversation.runtime.intent_extractor import (
    LLM_INTENT_KINDS,
    IntentClassifierContext,
    IntentExtractor,
)
from conversation.runtime_adapters.offline import (
    OfflineIntentClassifier,
    action_verbs,
    mentioned_items,
    rag_queries,
)

EMPTY = IntentClassifierContext(
    has_pending_confirmation=False,
    pending_confirmation_prompt=None,
    last_tool_name=None,
    last_tool_kind=None,
    last_invoice_answer=None,
    turn_index=1,
)
CLASSIFIER = OfflineIntentClassifier()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # paraphrases that are not among the examples
        ("pode cancelar a revista digital moda por favor", "action_request"),
        ("nao quero mais o deezer", "action_request"),
        ("pode tirar o tamboro e o aya da minha conta", "action_request"),
        ("quero entender a cobrança do vod", "invoice_overview"),
        ("quero tirar uma dúvida sobre a fatura", "invoice_overview"),
        ("minha conta veio cara demais", "broad_invoice_complaint"),
        ("quanto custa o paramount?", "value_question"),
        ("o que é o jogo premium ilimitado", "conceptual_question"),
        ("tá certo, pode fazer", "confirmation_response"),
        ("não, deixa", "confirmation_response"),
        ("e o jogo do Corinthians ontem?", "off_context"),
        # the orchestrator's business: greetings, a person, nonsense
        ("bom dia", "unknown"),
        ("oi, tudo bem?", "unknown"),
        ("quero falar com uma pessoa", "unknown"),
        ("asdkjh qwe", "unknown"),
    ],
)
def test_paraphrases_get_their_kind(text, expected):
    assert CLASSIFIER.classify(text, context=EMPTY)["kind"] == expected


def test_an_action_request_carries_its_verbs_and_items():
    assert CLASSIFIER.classify("quero cancelar o VOD e o HBO Max", context=EMPTY) == {
        "kind": "action_request",
        "requested_action": True,
        "action_verbs": ["cancelar"],
        "mentioned_items": ["VOD", "HBO Max"],
    }


def test_yes_and_no_set_the_answer_flags():
    assert CLASSIFIER.classify("ok, pode", context=EMPTY) == {
        "kind": "confirmation_response",
        "affirmation": True,
    }
    assert CLASSIFIER.classify("não contratei isso", context=EMPTY) == {
        "kind": "confirmation_response",
        "negation": True,
    }


def test_a_double_refund_request_names_the_regulated_verb():
    out = CLASSIFIER.classify("quero ressarcimento em dobro do VOD", context=EMPTY)
    assert out["action_verbs"] == ["ressarcimento em dobro"]
    assert out["mentioned_items"] == ["VOD"]


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("cancela o VOD que eu nunca pedi", ["VOD"]),
        ("tira o HBO Max da minha conta por favor", ["HBO Max"]),
        ("quero cancelar o tamboro, o aya e também o deezer", ["tamboro", "aya", "deezer"]),
        ("não quero mais esse serviço", []),
        ("cancela tudo isso", []),
        ("quero a devolução do valor do Paramount+", ["Paramount+"]),
    ],
)
def test_items_are_the_names_after_the_verb(text, items):
    assert mentioned_items(text, EMPTY) == items


def test_plural_anaphora_names_every_item_listed_before():
    listed = IntentClassifierContext(
        has_pending_confirmation=False,
        pending_confirmation_prompt=None,
        last_tool_name="invoice_explanation",
        last_tool_kind=None,
        last_invoice_answer=None,
        turn_index=3,
        invoice_snapshot_items=(
            "SVA Detalhe Total:\n- Vivo Play VOD (linha final 4321)\n- Tamboro (linha final 4321)"
        ),
    )
    assert mentioned_items("quero cancelar, não contratei nenhum deles", listed) == [
        "Vivo Play VOD",
        "Tamboro",
    ]


def test_tirar_uma_duvida_is_not_an_action():
    assert action_verbs("quero tirar uma dúvida") == []
    assert action_verbs("tira o deezer") == ["cancelar"]


@pytest.mark.parametrize(
    ("text", "queries"),
    [
        ("o que é esse tal de tamboro?", ["tamboro o que é"]),
        ("tamboro e tim fashion o que é", ["tamboro o que é", "tim fashion o que é"]),
        ("tem youtube também, o que é", ["youtube o que é"]),
        ("o que é isso?", []),
    ],
)
def test_rag_queries_are_one_per_concept(text, queries):
    assert rag_queries(text) == queries


def test_through_the_extractor_the_offline_answer_is_a_classified_intent():
    intent = IntentExtractor(CLASSIFIER).extract("cancela o aya", state=ConversationState())
    assert (intent.kind, intent.source, intent.mentioned_items) == (
        "action_request",
        "llm",
        ("aya",),
    )


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=120))
def test_any_text_gets_a_kind_of_the_closed_schema(text):
    out = CLASSIFIER.classify(text, context=EMPTY)
    assert out["kind"] in LLM_INTENT_KINDS
    for key in ("mentioned_items", "action_verbs", "rag_query"):
        assert all(isinstance(v, str) and v for v in out.get(key, []))


def test_an_action_without_a_verb_the_rules_know_is_left_to_the_orchestrator():
    tiny = OfflineIntentClassifier(
        {"action_request": ("quero o netflix fora",), "invoice_overview": ("me explica a fatura",)}
    )
    assert tiny.classify("quero o netflix fora", context=EMPTY) == {"kind": "unknown"}
    assert tiny.classify("quero o netflix fora, cancela", context=EMPTY)["kind"] == (
        "action_request"
    )
