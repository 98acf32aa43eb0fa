from __future__ import annotations

import copy

import pytest

from conversation.runtime.intent_extractor import (
    INTENT_CLASSIFICATION_SCHEMA,
    LLM_INTENT_KINDS,
    HistoryTurn,
    IntentClassifierError,
    IntentExtractor,
    render_snapshot,
)
from conversation.runtime.state import (
    ActionQueue,
    ConversationState,
    PendingConfirmation,
    ResolvedAction,
    ToolKind,
    ToolOutcome,
)

from .conftest import ScriptedClassifier
from .test_state import make_item


def extractor(
    outputs: dict | None = None, default: object = None
) -> tuple[IntentExtractor, ScriptedClassifier]:
    fake = ScriptedClassifier(outputs or {}, default)  # type: ignore[arg-type]
    return IntentExtractor(fake), fake


@pytest.mark.parametrize("text", ["tchau", "Obrigada!", "é só isso", "so isso"])
def test_fast_path_ending_phrases_are_human_or_end(text: str) -> None:
    ex, fake = extractor()
    intent = ex._try_rules(text.lower().strip("!"), text)
    assert intent is not None and intent.kind == "human_or_end" and intent.source == "rules"
    assert ex.extract(text, state=ConversationState()).kind == "human_or_end"
    assert fake.calls == []


@pytest.mark.parametrize("text", ["sim", "Sim!", "isso mesmo", "pode seguir", "confirmo"])
def test_fast_path_canonical_affirmation(text: str) -> None:
    ex, fake = extractor()
    intent = ex.extract(text, state=ConversationState())
    assert intent.kind == "confirmation_response" and intent.affirmation and not intent.negation
    assert intent.source == "rules" and intent.raw_text == text and fake.calls == []


@pytest.mark.parametrize("text", ["não", "nao", "Negativo.", "não quero"])
def test_fast_path_canonical_negation(text: str) -> None:
    ex, _ = extractor()
    intent = ex.extract(text, state=ConversationState())
    assert intent.kind == "confirmation_response" and intent.negation and not intent.affirmation
    assert intent.source == "rules"


def test_fast_path_ending_wins_over_other_words() -> None:
    ex, _ = extractor()
    assert ex.extract("cancelar, obrigada", state=ConversationState()).kind == "human_or_end"


def test_fast_path_does_not_classify_action_words() -> None:
    ex, _ = extractor()
    assert ex._try_rules("quero cancelar o netflix", "quero cancelar o netflix") is None


@pytest.mark.parametrize("kind", LLM_INTENT_KINDS)
def test_llm_path_maps_every_schema_kind(kind: str) -> None:
    payload = {
        "kind": kind,
        "requested_action": kind == "action_request",
        "action_verbs": ["cancelar"],
        "mentioned_items": ["HBO Max"],
        "affirmation": False,
        "negation": True,
        "rag_query": ["hbo o que é"],
    }
    ex, _ = extractor(default=payload)
    intent = ex.extract("uma frase longa que nenhuma regra cobre", state=ConversationState())
    assert intent.kind == kind and intent.source == "llm"
    assert intent.action_verbs == ("cancelar",) and intent.mentioned_items == ("HBO Max",)
    assert intent.negation and intent.rag_query == ("hbo o que é",)
    assert intent.raw_text == "uma frase longa que nenhuma regra cobre"


def test_schema_is_closed_and_excludes_start() -> None:
    assert INTENT_CLASSIFICATION_SCHEMA["additionalProperties"] is False
    assert INTENT_CLASSIFICATION_SCHEMA["required"] == ["kind"]
    kinds = INTENT_CLASSIFICATION_SCHEMA["properties"]["kind"]["enum"]
    assert "start" not in kinds and len(kinds) == 9


def test_llm_path_tolerates_a_single_string_rag_query() -> None:
    ex, _ = extractor(default={"kind": "conceptual_question", "rag_query": "tamboro o que é"})
    intent = ex.extract("um tal de tamboro, o que é?", state=ConversationState())
    assert intent.rag_query == ("tamboro o que é",)


def test_long_message_goes_to_llm_not_unknown() -> None:
    ex, fake = extractor(default={"kind": "broad_invoice_complaint"})
    intent = ex.extract(
        "vou querer entender essa cobrança que apareceu agora", state=ConversationState()
    )
    assert intent.kind == "broad_invoice_complaint" and intent.source == "llm"
    assert len(fake.calls) == 1


def test_classifier_error_falls_back_to_unknown() -> None:
    ex, _ = extractor(default=IntentClassifierError("timeout"))
    intent = ex.extract("mensagem qualquer", state=ConversationState())
    assert intent.kind == "unknown" and intent.source == "fallback"
    assert intent.raw_text == "mensagem qualquer"


@pytest.mark.parametrize("payload", [{"kind": "start"}, {"kind": "nonsense"}, {}, ["kind"]])
def test_classifier_output_outside_schema_falls_back(payload: object) -> None:
    ex, _ = extractor(default=payload)
    assert ex.extract("mensagem qualquer", state=ConversationState()).source == "fallback"


def test_source_marks_each_path() -> None:
    ex, _ = extractor({"frase": {"kind": "value_question"}}, IntentClassifierError("x"))
    state = ConversationState()
    assert ex.extract("sim", state=state).source == "rules"
    assert ex.extract("frase", state=state).source == "llm"
    assert ex.extract("outra", state=state).source == "fallback"


def test_build_context_on_empty_state_has_no_optional_signal() -> None:
    ex, _ = extractor()
    ctx = ex._build_classifier_context(ConversationState())
    assert ctx.has_pending_confirmation is False and ctx.pending_confirmation_prompt is None
    assert ctx.last_tool_name is None and ctx.last_tool_kind is None
    assert ctx.last_invoice_answer is None and ctx.turn_index == 0
    assert ctx.invoice_snapshot_items == "nenhum" and ctx.conversation_history == ()


def test_build_context_with_pending_last_action_and_invoice_answer() -> None:
    ex, _ = extractor()
    state = ConversationState(
        turn_index=4,
        pending_confirmation=PendingConfirmation("s#3", ActionQueue(), 3, "Você confirma?"),
        last_completed_action=ResolvedAction(
            "invoice_explanation", "fatura", ToolKind.EXPLANATION, ToolOutcome.SUCCESS
        ),
        last_invoice_answer="NAO",
    )
    ctx = ex._build_classifier_context(state)
    assert ctx.has_pending_confirmation and ctx.pending_confirmation_prompt == "Você confirma?"
    assert ctx.last_tool_name == "invoice_explanation"
    assert ctx.last_tool_kind is ToolKind.EXPLANATION
    assert ctx.last_invoice_answer == "NAO" and ctx.turn_index == 4


def test_extract_never_mutates_state() -> None:
    ex, _ = extractor(default={"kind": "action_request", "mentioned_items": ["VOD"]})
    state = ConversationState(
        turn_index=2,
        pending_confirmation=PendingConfirmation("s#2", ActionQueue(), 2, "Confirma?"),
        invoice_snapshot=(make_item(),),
    )
    before = copy.deepcopy(state)
    for text in ["sim", "não", "tchau", "quero cancelar o VOD"]:
        ex.extract(text, state=state)
    assert state == before


def test_classifier_receives_context_derived_from_state_and_history() -> None:
    ex, fake = extractor(default={"kind": "confirmation_response", "affirmation": True})
    state = ConversationState(
        turn_index=7,
        msisdn="11987654321",
        pending_confirmation=PendingConfirmation("s#7", ActionQueue(), 7, "Posso seguir?"),
        invoice_snapshot=(make_item("Aya Ensina"), make_item("Outra linha", "11912345678")),
    )
    history = [HistoryTurn("customer", f"m{i}") for i in range(10)]
    ex.extract("ok, tá bom", state=state, history=history)
    ((text, ctx),) = fake.calls
    assert text == "ok, tá bom" and ctx.turn_index == 7
    assert ctx.has_pending_confirmation and ctx.pending_confirmation_prompt == "Posso seguir?"
    assert "Aya Ensina (linha final 4321)" in ctx.invoice_snapshot_items
    assert "Outra linha" not in ctx.invoice_snapshot_items  # filtered by the active line
    assert [h.text for h in ctx.conversation_history] == ["m4", "m5", "m6", "m7", "m8", "m9"]


def test_render_snapshot_groups_by_section_and_caps_lines() -> None:
    items = tuple(make_item(f"Item {i}") for i in range(30))
    text = render_snapshot(items, "")
    lines = text.splitlines()
    assert lines[0] == "SVA Detalhe Total:" and len(lines) == 20
    assert render_snapshot((), "") == "nenhum"
