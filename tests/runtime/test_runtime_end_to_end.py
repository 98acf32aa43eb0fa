"""Whole turns through ``ConversationRuntime.try_handle``, built with the spec's constructor."""

from __future__ import annotations

from typing import Any

import pytest

from conversation.runtime import DemoBackend
from conversation.runtime.action_executor import ActionQueueExecutor, ToolAdapter
from conversation.runtime.action_queue import ActionQueueBuilder
from conversation.runtime.confirmation_manager import ConfirmationManager
from conversation.runtime.finalization_machine import FinalizationMachine
from conversation.runtime.intent_extractor import (
    HistoryTurn,
    IntentClassifierError,
    IntentExtractor,
)
from conversation.runtime.invoice_resolver import InvoiceResolver
from conversation.runtime.policy_engine import PolicyEngine
from conversation.runtime.response_composer import ResponseComposer
from conversation.runtime.result import RuntimeResult
from conversation.runtime.runtime import ConversationRuntime
from conversation.runtime.script_catalog import ScriptCatalog
from conversation.runtime.state import Channel, ConversationState, ConversationStatus
from conversation.runtime.store import InMemoryStateStore

from .conftest import LINE_A, LINE_B, FixedClock, ScriptedClassifier, ScriptedMatcher

CATALOG = ScriptCatalog()


class Conversation:
    """A customer talking to one runtime over several turns."""

    def __init__(
        self,
        backend: DemoBackend,
        classifier: ScriptedClassifier | None = None,
        matcher: ScriptedMatcher | None = None,
    ) -> None:
        self.backend = backend
        self.classifier = classifier or ScriptedClassifier()
        self.store = InMemoryStateStore(channel=Channel.TEXT)
        self.runtime = ConversationRuntime(
            intent_extractor=IntentExtractor(self.classifier),
            invoice_resolver=InvoiceResolver(matcher=matcher),
            queue_builder=ActionQueueBuilder(),
            confirmation_manager=ConfirmationManager(),
            policy_engine=PolicyEngine(),
            action_executor=ActionQueueExecutor(ToolAdapter(backend)),
            finalization_machine=FinalizationMachine(),
            response_composer=ResponseComposer(CATALOG, channel=Channel.TEXT),
            state_store=self.store,
            clock=FixedClock(),
        )
        self.context: dict[str, Any] = {}
        self.msisdn = LINE_A

    def say(self, text: str, **extra: Any) -> RuntimeResult:
        self.context = {
            "session_id": "conv-1",
            "msisdn": self.msisdn,
            "invoice_detail": self.backend.invoice_detail,
            **extra,
        }
        return self.runtime.try_handle(
            user_text=text, context=self.context, history=[], callbacks=[]
        )

    @property
    def state(self) -> ConversationState:
        return self.store.load({"session_id": "conv-1"})


@pytest.fixture
def talk(backend: DemoBackend) -> Conversation:
    return Conversation(backend)


# --- the five scenarios -------------------------------------------------------------------


def test_scenario_1_cancel_two_vas_confirm_and_execute_in_order(talk: Conversation) -> None:
    asked = talk.say("quero cancelar o VOD e o HBO Max")
    assert asked.handled and asked.decision == "ask_confirmation"
    assert talk.state.status is ConversationStatus.AWAITING_CONFIRMATION
    done = talk.say("sim")
    assert done.handled and done.decision == "execute_action_queue"
    assert [a.tool for a in talk.backend.executed] == ["cancelar_vas_single", "vas_strategic"]
    assert [a.items for a in talk.backend.executed] == [("Vivo Play VOD",), ("HBO Max",)]
    assert done.content is not None
    assert done.content.index("Cancelei o Vivo Play VOD") < done.content.index("HBO Max junto")
    assert "Agora, vamos falar sobre HBO Max." in done.content
    assert talk.state.action_queue.is_exhausted() and talk.state.pending_confirmation is None
    assert talk.state.status is ConversationStatus.OPEN


def test_scenario_2_invoice_explanation_then_yes_finalizes_resolved(talk: Conversation) -> None:
    explained = talk.say("me explica essa fatura")
    assert explained.handled and explained.content is not None
    assert explained.content.startswith("Sua fatura com vencimento em 10 de março de 2025")
    assert explained.content.endswith("Consegui esclarecer sua dúvida?")
    assert talk.state.last_completed_action is not None
    assert talk.state.last_completed_action.tool == "invoice_explanation"
    closed = talk.say("SIM")
    assert closed.handled and closed.rule == "1.5"
    assert closed.finalization is not None and closed.finalization["status"] == "resolvido"
    assert closed.content == CATALOG.render("encerramento_resolvido", channel=Channel.TEXT).text
    assert closed.scripts[0].script_id == "encerramento_resolvido"
    assert closed.scripts[0].catalog_version == CATALOG.version
    assert talk.state.status is ConversationStatus.CLOSED
    assert talk.state.last_invoice_answer == "SIM"
    assert talk.state.last_finalization_reason == "resolvido"


def test_scenario_3_no_thats_all_thanks_finalizes_not_resolved(talk: Conversation) -> None:
    result = talk.say("não, só isso obrigada")
    assert result.handled and result.rule == "2"
    assert result.finalization is not None and result.finalization["status"] == "nao_resolvido"
    assert result.scripts[0].script_id == "encerramento_nao_resolvido"
    assert talk.state.status is ConversationStatus.CLOSED and talk.state.client_requested_end
    assert talk.classifier.calls == []  # fast path: no model call


def test_scenario_4_three_off_context_turns_finalize_other_subjects(talk: Conversation) -> None:
    first = talk.say("e o jogo do Corinthians ontem?")
    second = talk.say("e o jogo do Corinthians ontem?")
    assert not first.handled and not second.handled
    assert talk.state.off_context_count == 2
    third = talk.say("e o jogo do Corinthians ontem?")
    assert third.handled and third.rule == "7"
    assert third.finalization is not None and third.finalization["status"] == "outros_assuntos"
    assert talk.state.status is ConversationStatus.CLOSED


def test_scenario_5_double_refund_gets_the_canonical_script_and_awaits(talk: Conversation) -> None:
    result = talk.say("quero ressarcimento em dobro do VOD")
    refusal = CATALOG.render("recusa_ressarcimento_dobro", channel=Channel.TEXT)
    assert result.handled and result.content is not None
    assert result.content.startswith(refusal.text)
    assert result.content.endswith("Você confirma?")
    assert [s.script_id for s in result.scripts] == ["recusa_ressarcimento_dobro"]
    assert talk.state.status is ConversationStatus.AWAITING_CONFIRMATION
    assert talk.backend.executed == []


# --- fallback, state, ordering --------------------------------------------------------------


def test_uncovered_intent_falls_back_with_state_summary_in_context(talk: Conversation) -> None:
    result = talk.say("quanto está a fatura?")
    assert not result.handled and result.fallback_reason == "uncovered_intent"
    assert result.payload is None
    assert talk.context["conversation_state_summary"] == talk.state.to_prompt_context()
    assert result.conversation_state_summary == talk.context["conversation_state_summary"]
    assert "Turno atual: 1" in result.conversation_state_summary


def test_classifier_failure_degrades_to_the_orchestrator(backend: DemoBackend) -> None:
    talk = Conversation(backend, ScriptedClassifier({}, IntentClassifierError("timeout")))
    result = talk.say("mensagem que o classificador não entende")
    assert not result.handled and result.fallback_reason == "uncovered_intent"
    assert talk.state.decision_trace[-1]["source"] == "fallback"


def test_export_and_restore_preserve_the_state_between_runtimes(
    talk: Conversation, backend: DemoBackend
) -> None:
    talk.say("quero cancelar o VOD e o HBO Max")
    snapshot = talk.runtime.export_state()
    fresh = Conversation(backend)
    fresh.runtime.restore_state(snapshot)
    assert fresh.state == talk.state
    result = fresh.say("sim")
    assert result.decision == "execute_action_queue"
    assert [a.tool for a in backend.executed] == ["cancelar_vas_single", "vas_strategic"]


def test_extract_runs_before_the_turn_starts(talk: Conversation) -> None:
    talk.say("quero cancelar o VOD e o HBO Max")
    talk.say("ok, pode")
    (_, first), (_, second) = talk.classifier.calls
    assert first.turn_index == 0 and not first.has_pending_confirmation
    assert second.turn_index == 1 and second.has_pending_confirmation
    assert second.pending_confirmation_prompt is not None
    assert second.pending_confirmation_prompt.startswith("Entendi que você deseja cancelar")


def test_history_window_reaches_the_classifier(talk: Conversation) -> None:
    history = [HistoryTurn("agent", "Olá!"), HistoryTurn("customer", "oi")]
    talk.runtime.try_handle(
        user_text="quanto está a fatura?", context={"session_id": "conv-1"}, history=history
    )
    assert talk.classifier.calls[0][1].conversation_history == tuple(history)


def test_a_yes_only_the_classifier_recognised_asks_how_to_confirm(talk: Conversation) -> None:
    # Rule 1 routes it; guard 3 (canonical yes only) refuses it: ask again, then "sim" acts.
    asked = talk.say("quero cancelar o VOD e o HBO Max")
    result = talk.say("ok, pode")
    assert result.rule == "1" and talk.backend.executed == []
    assert result.content is not None and asked.content is not None
    assert asked.content in result.content and "Responda *sim* para confirmar" in result.content
    talk.say("sim")
    assert len(talk.backend.executed) == 2


def test_stale_yes_asks_the_confirmation_again(talk: Conversation) -> None:
    asked = talk.say("quero cancelar o VOD e o HBO Max")
    talk.say("quanto está a fatura?")  # another turn in between
    again = talk.say("ok, pode")
    assert again.rule == "1" and again.content == asked.content
    assert talk.backend.executed == []
    pending = talk.state.pending_confirmation
    assert pending is not None and pending.asked_turn_index == 3
    talk.say("sim")
    assert len(talk.backend.executed) == 2


def test_ambiguous_mention_asks_which_line(talk: Conversation) -> None:
    # Issue 11 item 4 replaced the orchestrator's question (a dead end) with the runtime's.
    result = talk.say("cancela o aya")
    assert result.handled and (result.decision, result.rule) == ("ask_which_line", "3.5")
    assert result.content is not None
    assert "final 4321 (titular, Maria Souza) e final 5678" in result.content
    pending = talk.state.pending_confirmation
    assert pending is not None and pending.asks_which_line and len(pending.choices) == 2
    assert talk.state.decision_trace[-1]["ambiguous"] == 1


def test_negation_with_pending_falls_back_with_the_composer_directive(talk: Conversation) -> None:
    talk.say("quero cancelar o VOD e o HBO Max")
    result = talk.say("não contratei isso")
    assert result.fallback_reason == "confirmation_response_negation_pending"
    assert result.orchestrator_directive is not None
    assert "Vivo Play VOD (linha final 4321) e HBO Max (linha final 4321)" in (
        result.orchestrator_directive
    )
    assert talk.backend.executed == []


def test_negation_with_verb_and_pending_asks_a_new_confirmation(talk: Conversation) -> None:
    talk.say("quero cancelar o VOD e o HBO Max")
    result = talk.say("não, cancela o tamboro")
    assert result.rule == "5" and result.content is not None and "Tamboro" in result.content
    pending = talk.state.pending_confirmation
    assert pending is not None and pending.authorized_queue.steps[0].subject == "Tamboro"


def test_orphan_negation_falls_back(talk: Conversation) -> None:
    result = talk.say("não")
    assert result.fallback_reason == "negation_without_pending"
    assert result.orchestrator_directive is None


def test_no_after_an_explanation_records_the_answer_and_falls_back(talk: Conversation) -> None:
    talk.say("me explica essa fatura")
    result = talk.say("não")
    assert result.fallback_reason == "negation_without_pending"
    assert talk.state.last_invoice_answer == "NAO"


def test_item_not_found_answers_and_keeps_the_conversation_open(talk: Conversation) -> None:
    result = talk.say("cancela o xyzflix")
    assert result.handled and result.rule == "6" and result.content is not None
    assert result.content.startswith("Não localizei o serviço xyzflix na sua fatura.")
    assert result.payload is not None
    assert result.payload["scripts"] == [
        {"script_id": "item_not_found", "catalog_version": CATALOG.version}
    ]
    assert talk.state.status is ConversationStatus.OPEN


def test_matcher_is_called_only_when_substring_misses(backend: DemoBackend) -> None:
    matcher = ScriptedMatcher({"xyzflix": ["Deezer Premium"]})
    talk = Conversation(backend, matcher=matcher)
    talk.say("quero cancelar o VOD e o HBO Max")
    assert matcher.calls == []
    result = talk.say("cancela o xyzflix")
    assert result.rule == "5" and result.content is not None and "Deezer Premium" in result.content


def test_conceptual_question_answers_inline_with_rag(talk: Conversation) -> None:
    result = talk.say("o que é esse tal de tamboro?")
    assert result.handled and result.rule == "3" and result.content is not None
    assert result.content.startswith("Tamboro é uma plataforma")
    assert talk.state.informative_answer_delivered


def test_rag_without_query_or_answer_falls_back(backend: DemoBackend) -> None:
    outputs: dict[str, dict[str, Any]] = {
        "   ": {"kind": "conceptual_question"},
        "o que é o fulano?": {"kind": "conceptual_question", "rag_query": ["fulano o que é"]},
    }
    talk = Conversation(backend, ScriptedClassifier(outputs))
    assert talk.say("   ").fallback_reason == "rag_no_query"
    assert talk.say("o que é o fulano?").fallback_reason == "rag_no_answer"


def test_failed_explanation_falls_back(backend: DemoBackend) -> None:
    talk = Conversation(DemoBackend({}))
    assert talk.say("me explica essa fatura").fallback_reason == "invoice_explanation_failed"


def test_paused_workflow_is_resumed_before_classification(invoice: dict[str, Any]) -> None:
    backend = DemoBackend(invoice, strategic_retention_offer=True)
    talk = Conversation(backend)
    talk.say("quero cancelar o VOD e o HBO Max")
    paused = talk.say("sim")
    assert paused.content is not None and paused.content.endswith("Quer manter com o desconto?")
    assert talk.state.status is ConversationStatus.AWAITING_WORKFLOW_INPUT
    calls_before = len(talk.classifier.calls)
    resumed = talk.say("não")
    assert len(talk.classifier.calls) == calls_before  # the answer was never classified
    assert resumed.decision == "resume_workflow" and resumed.finalization is not None
    assert resumed.finalization["status"] == "resolvido"
    assert backend.executed[-1].tool == "resume_workflow" and backend.executed[-1].value == "nao"
    assert talk.state.status is ConversationStatus.CLOSED and talk.state.pending_workflow is None


def test_unreadable_workflow_answer_goes_through_normal_classification(
    invoice: dict[str, Any],
) -> None:
    talk = Conversation(DemoBackend(invoice, strategic_retention_offer=True))
    talk.say("quero cancelar o VOD e o HBO Max")
    talk.say("sim")
    result = talk.say("tchau")
    assert result.rule == "2" and talk.state.status is ConversationStatus.CLOSED


def test_failed_action_offers_a_retry_that_a_yes_executes(invoice: dict[str, Any]) -> None:
    backend = DemoBackend(invoice, unavailable_tools={"cancelar_vas_single"})
    talk = Conversation(backend)
    talk.say("quero cancelar o VOD e o HBO Max")
    failed = talk.say("sim")
    assert failed.content is not None
    assert failed.content.endswith("Quer que eu tente de novo a solicitação sobre Vivo Play VOD?")
    assert backend.executed == []
    backend.unavailable_tools.clear()
    talk.say("sim")
    assert [a.tool for a in backend.executed] == ["cancelar_vas_single", "vas_strategic"]


def test_snapshot_is_populated_by_the_explanation_and_reaches_the_classifier(
    talk: Conversation,
) -> None:
    talk.say("me explica essa fatura")
    assert len(talk.state.invoice_snapshot) == 10
    assert talk.state.invoice_snapshot_source_turn == 1
    assert talk.state.invoice_snapshot_source_msisdn == LINE_A
    talk.say("quanto está a fatura?")
    context = talk.classifier.calls[-1][1]
    assert "Tamboro (linha final 4321)" in context.invoice_snapshot_items
    assert "Revista Digital Moda" not in context.invoice_snapshot_items


def test_snapshot_is_invalidated_when_the_line_changes(talk: Conversation) -> None:
    talk.say("me explica essa fatura")
    talk.msisdn = LINE_B
    talk.say("quanto está a fatura?")
    assert talk.state.msisdn == LINE_B and talk.state.invoice_snapshot == ()


def test_snapshot_is_invalidated_by_a_successful_avulso_cancellation(talk: Conversation) -> None:
    talk.say("me explica essa fatura")
    talk.say("cancela o deezer")  # strategic only: keeps the snapshot
    talk.say("sim")
    assert talk.state.invoice_snapshot != ()
    talk.say("quero cancelar o VOD e o HBO Max")
    talk.say("sim")
    assert talk.state.invoice_snapshot == ()


def test_a_message_after_closing_reopens_the_conversation(talk: Conversation) -> None:
    talk.say("tchau")
    assert talk.state.status is ConversationStatus.CLOSED
    result = talk.say("quero cancelar o VOD e o HBO Max")
    assert result.rule == "5" and talk.state.status is ConversationStatus.AWAITING_CONFIRMATION


def test_decision_trace_records_ids_not_customer_text(talk: Conversation) -> None:
    talk.say("cancela o xyzflix")
    entry = talk.state.decision_trace[-1]
    assert entry["at"] == "2025-03-01T12:00:00+00:00" and entry["rule"] == "6"
    assert "xyzflix" not in repr(entry)


def test_session_id_defaults_to_the_runtime_session(talk: Conversation) -> None:
    talk.runtime.restore_state({"schema_version": 7, "session_id": "conv-7", "turn_index": 2})
    context: dict[str, Any] = {}
    talk.runtime.try_handle(user_text="tchau", context=context)
    assert context["session_id"] == "conv-7"
    assert talk.runtime.export_state()["turn_index"] == 3
