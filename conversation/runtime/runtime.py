"""``ConversationRuntime``: the single entry point of the dialogue layer.

``try_handle`` either answers the turn (``handled=True`` with the text to send) or
falls back to the LLM orchestrator (``handled=False`` with a reason, the state summary
and, for some reasons, a short directive to append to the customer's message).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .action_executor import ActionQueueExecutor, ToolAdapter, ToolBackend, ValueInterpreter
from .action_queue import ActionQueueBuilder
from .clock import Clock, SystemClock
from .confirmation_manager import ConfirmationManager
from .finalization_machine import FinalizationMachine
from .intent_extractor import (
    ExtractedIntent,
    HistoryTurn,
    IntentClassifierLLM,
    IntentExtractor,
)
from .invoice_resolver import InvoiceResolver, ResolutionOutcome
from .item_matcher import ItemMatcherLLM
from .mutations import (
    on_decision_traced,
    on_in_context_message,
    on_informative_answered,
    on_invoice_answer,
    on_invoice_snapshot_invalidated,
    on_invoice_snapshot_populated,
    on_msisdn_changed,
    on_off_context_detected,
    on_turn_started,
)
from .policy_engine import ConversationDecision, PolicyEngine
from .response_composer import ResponseComposer
from .result import Part, RuntimeResult, reply
from .script_catalog import SCRIPTS_DIR, ScriptCatalog
from .serialization import deserialize_state, serialize_state
from .state import (
    ActionQueue,
    Channel,
    ConversationState,
    ConversationStatus,
    FinalizationStatus,
    ResolvedAction,
    ToolKind,
    ToolOutcome,
)
from .store import ConversationStateStore, InMemoryStateStore

logger = logging.getLogger(__name__)

_NO_RESOLUTION = ResolutionOutcome(resolved=(), ambiguous=(), not_found=())


@dataclass
class _Turn:
    """Per-turn scratch data (never persisted)."""

    context: MutableMapping[str, Any]
    intent: ExtractedIntent
    executed: list[ResolvedAction] = field(default_factory=list)
    resolution: ResolutionOutcome = _NO_RESOLUTION


class ConversationRuntime:
    def __init__(
        self,
        *,
        intent_extractor: IntentExtractor,
        invoice_resolver: InvoiceResolver,
        queue_builder: ActionQueueBuilder,
        confirmation_manager: ConfirmationManager,
        policy_engine: PolicyEngine,
        action_executor: ActionQueueExecutor,
        finalization_machine: FinalizationMachine,
        response_composer: ResponseComposer,
        state_store: ConversationStateStore,
        clock: Clock | None = None,
        value_interpreter: ValueInterpreter | None = None,
    ) -> None:
        self._extractor = intent_extractor
        self._resolver = invoice_resolver
        self._builder = queue_builder
        self._confirmations = confirmation_manager
        self._policy = policy_engine
        self._executor = action_executor
        self._finalization = finalization_machine
        self._composer = response_composer
        self._store = state_store
        self._clock = clock or SystemClock()
        self._interpreter = value_interpreter or ValueInterpreter()
        self._session_id = ""

    # --- public API -------------------------------------------------------------------

    def try_handle(
        self,
        *,
        user_text: str,
        context: MutableMapping[str, Any],
        history: Sequence[HistoryTurn] = (),
        callbacks: Sequence[Any] | None = None,
    ) -> RuntimeResult:
        context.setdefault("session_id", self._session_id)
        self._session_id = str(context["session_id"])
        state = self._store.load(context)

        # A paused workflow is answered before any classification (the runtime owns resume).
        value = self._workflow_answer(state, user_text)
        if value is not None:
            intent = ExtractedIntent(kind="confirmation_response", raw_text=user_text)
            turn = self._start_turn(state, intent, context)
            result = self._drive(state, turn, self._executor.resume_current(state, value))
            return self._finish(state, turn, result, decision="resume_workflow", rule="resume")

        # Extract BEFORE on_turn_started: the classifier must see the previous turn's state.
        intent = self._extractor.extract(
            user_text, state=state, history=history, callbacks=callbacks
        )
        turn = self._start_turn(state, intent, context)
        self._record_turn_signals(state, intent)

        queue = self._confirmations.consume_if_confirmed(
            state, user_text, current_turn_index=state.turn_index
        )
        if queue is not None:
            result = self._drive(state, turn, self._executor.execute_next(state))
            return self._finish(
                state, turn, result, decision="execute_action_queue", rule="confirmation_manager"
            )

        if _asks_for_action(intent):
            invoice_detail = context.get("invoice_detail") or {}
            turn.resolution = self._resolver.resolve(
                intent.mentioned_items, invoice_detail, callbacks=callbacks
            )
        resolved = turn.resolution.resolved
        action_queue = self._builder.build(resolved) if resolved else ActionQueue()
        decision = self._policy.decide(
            state,
            intent=intent,
            resolved_items=resolved,
            action_queue=action_queue,
            has_ambiguity=turn.resolution.has_ambiguity,
        )
        result = self._route(state, turn, decision)
        return self._finish(state, turn, result, decision=decision.kind, rule=decision.rule)

    def export_state(self) -> dict[str, Any]:
        return serialize_state(self._store.load({"session_id": self._session_id}))

    def restore_state(self, snapshot: Mapping[str, Any]) -> None:
        state = deserialize_state(snapshot)
        self._session_id = state.session_id
        self._store.save({"session_id": state.session_id}, state)

    # --- routing ------------------------------------------------------------------------

    def _route(
        self, state: ConversationState, turn: _Turn, decision: ConversationDecision
    ) -> RuntimeResult:
        if decision.kind == "execute_action_queue":
            return self._execute_confirmed(state, turn)
        if decision.kind == "ask_confirmation":
            assert decision.action_queue is not None
            return self._ask_confirmation(state, turn, decision.action_queue)
        if decision.kind == "call_informative_tool":
            return self._explain_invoice(state, turn)
        if decision.kind == "rag":
            return self._answer_with_rag(state, turn, decision.queries)
        if decision.kind == "item_not_found":
            # Status stays as it was: the customer rephrases.
            return reply([self._composer.item_not_found(turn.intent.mentioned_items)])
        if decision.kind == "finalize":
            assert decision.status is not None
            return self._finalize(state, decision.status, [])
        return self._fallback(state, turn, decision.reason or "uncovered_intent")

    def _execute_confirmed(self, state: ConversationState, turn: _Turn) -> RuntimeResult:
        # Rule 1 with an affirmation only the classifier recognised ("ok, pode").
        queue = self._confirmations.consume_if_confirmed(
            state,
            turn.intent.raw_text,
            current_turn_index=state.turn_index,
            classifier_affirmed=True,
        )
        if queue is not None:
            return self._drive(state, turn, self._executor.execute_next(state))
        # Not the direct answer to the question: ask again rather than act on a stale yes.
        pending = state.pending_confirmation
        assert pending is not None
        self._confirmations.create_confirmation(
            state,
            pending.authorized_queue,
            prompt_text=pending.prompt_text,
            turn_index=state.turn_index,
        )
        return reply([pending.prompt_text])

    def _ask_confirmation(
        self, state: ConversationState, turn: _Turn, queue: ActionQueue
    ) -> RuntimeResult:
        preamble = self._composer.regulated_preamble(turn.intent.action_verbs)
        prompt = self._composer.confirmation(queue)
        self._confirmations.create_confirmation(
            state, queue, prompt_text=prompt, turn_index=state.turn_index
        )
        return reply([*preamble, prompt])

    def _explain_invoice(self, state: ConversationState, turn: _Turn) -> RuntimeResult:
        msisdn = state.msisdn or str(turn.context.get("msisdn") or "")
        result = self._executor.tool_adapter.explain_invoice(msisdn=msisdn)
        text = result.get("text")
        if not result.get("success") or not isinstance(text, str) or not text.strip():
            return self._fallback(state, turn, "invoice_explanation_failed")
        self._informative_answered(state, "invoice_explanation", ToolKind.EXPLANATION)
        self._populate_invoice_snapshot_if_needed(state, turn)
        return reply([text.strip(), self._composer.informative_followup()])

    def _answer_with_rag(
        self, state: ConversationState, turn: _Turn, queries: tuple[str, ...]
    ) -> RuntimeResult:
        if not queries:
            return self._fallback(state, turn, "rag_no_query")
        result = self._executor.tool_adapter.search_knowledge(queries)
        answer = result.get("answer")
        if not isinstance(answer, str) or not answer.strip():
            return self._fallback(state, turn, "rag_no_answer")
        self._informative_answered(state, "buscar_informacao", ToolKind.INFO)
        return reply([answer.strip(), self._composer.informative_followup()])

    def _fallback(self, state: ConversationState, turn: _Turn, reason: str) -> RuntimeResult:
        directive = None
        if reason == "ambiguous_item_match":
            directive = self._composer.disambiguation_directive(turn.resolution.ambiguous)
        elif reason == "confirmation_response_negation_pending":
            assert state.pending_confirmation is not None
            directive = self._composer.negation_with_pending_directive(state.pending_confirmation)
        summary = state.to_prompt_context()
        # The orchestrator reads the summary from the context (spec) or from the result.
        turn.context["conversation_state_summary"] = summary
        return RuntimeResult.fallback(
            reason, conversation_state_summary=summary, orchestrator_directive=directive
        )

    # --- actions ------------------------------------------------------------------------

    def _drive(
        self, state: ConversationState, turn: _Turn, result: Mapping[str, Any]
    ) -> RuntimeResult:
        """Report a step's result and keep going while the queue asks for the next action."""
        parts: list[Part] = []
        while True:
            action = state.last_completed_action
            if result.get("queue_empty") or action is None:
                parts.append(self._composer.anything_else())
                return reply(parts)
            turn.executed.append(action)
            transition = self._finalization.after_tool_result(state, result)
            message = result.get("message")
            parts.append(
                message.strip()
                if isinstance(message, str) and message.strip()
                else self._composer.action_outcome(action.subject, action.outcome)
            )
            if action.outcome is ToolOutcome.FAILURE:
                return reply([*parts, *self._offer_retry(state)])
            if transition == "ask_next_action":
                current = state.action_queue.current()
                assert current is not None
                parts.append(self._composer.next_action_transition(current.subject))
                result = self._executor.execute_next(state)
                continue
            if transition == "wait_workflow_input":
                assert state.pending_workflow is not None
                parts.append(state.pending_workflow.question)
                return reply(parts)
            if transition == "finalize":
                return self._finalize(state, "resolvido", parts)
            parts.append(self._composer.anything_else())
            return reply(parts)

    def _offer_retry(self, state: ConversationState) -> list[Part]:
        queue = state.action_queue
        retry = ActionQueue(steps=queue.steps[queue.cursor :])
        if retry.is_exhausted():
            return [self._composer.anything_else()]
        question = self._composer.retry_question(retry.steps[0].subject)
        self._confirmations.create_confirmation(
            state, retry, prompt_text=question, turn_index=state.turn_index
        )
        return [question]

    def _finalize(
        self, state: ConversationState, status: FinalizationStatus, parts: list[Part]
    ) -> RuntimeResult:
        self._finalization.mark_closed(state, status)
        payload = self._finalization.build_finalize_payload(status, state.to_prompt_context())
        return reply([*parts, self._composer.closing(status)], finalization=payload)

    def _workflow_answer(self, state: ConversationState, user_text: str) -> str | None:
        pending = state.pending_workflow
        if pending is None or state.status is not ConversationStatus.AWAITING_WORKFLOW_INPUT:
            return None
        # An unreadable answer falls through to normal classification ("tchau", a question).
        return self._interpreter.interpret(user_text, pending)

    # --- bookkeeping (each hook below has this single call site) ------------------------

    def _start_turn(
        self,
        state: ConversationState,
        intent: ExtractedIntent,
        context: MutableMapping[str, Any],
    ) -> _Turn:
        on_turn_started(state, intent)
        msisdn = context.get("msisdn")
        if isinstance(msisdn, str) and msisdn and msisdn != state.msisdn:
            on_msisdn_changed(state, msisdn)
        return _Turn(context, intent)

    def _record_turn_signals(self, state: ConversationState, intent: ExtractedIntent) -> None:
        if intent.kind == "off_context":
            on_off_context_detected(state)
        elif intent.kind != "unknown" and state.off_context_count:
            # "in a row": any classified in-context turn resets; an unknown one says nothing.
            on_in_context_message(state)
        answers_informative = state.pending_confirmation is None and (
            state.informative_answer_delivered
        )
        if answers_informative and (intent.is_affirmation or intent.is_negation):
            on_invoice_answer(state, "SIM" if intent.is_affirmation else "NAO")

    def _informative_answered(self, state: ConversationState, tool: str, kind: ToolKind) -> None:
        action = ResolvedAction(
            tool=tool,
            subject="fatura" if kind is ToolKind.EXPLANATION else "base de conhecimento",
            tool_kind=kind,
            outcome=ToolOutcome.SUCCESS,
            result_summary={"success": True},
        )
        on_informative_answered(state, action)

    def _populate_invoice_snapshot_if_needed(self, state: ConversationState, turn: _Turn) -> None:
        invoice_detail = turn.context.get("invoice_detail")
        if not invoice_detail:
            return
        snapshot = self._resolver.build_snapshot(invoice_detail, state.msisdn)
        on_invoice_snapshot_populated(state, snapshot, state.msisdn, state.turn_index)

    def _invalidate_stale_snapshot(self, state: ConversationState, turn: _Turn) -> None:
        if not state.invoice_snapshot:
            return
        line_changed = state.invoice_snapshot_source_msisdn != state.msisdn
        cancelled = any(
            a.tool == "cancelar_vas_avulso" and a.outcome is ToolOutcome.SUCCESS
            for a in turn.executed
        )
        if line_changed or cancelled:
            on_invoice_snapshot_invalidated(state)

    def _finish(
        self,
        state: ConversationState,
        turn: _Turn,
        result: RuntimeResult,
        *,
        decision: str,
        rule: str,
    ) -> RuntimeResult:
        self._invalidate_stale_snapshot(state, turn)
        entry: dict[str, Any] = {
            "turn": state.turn_index,
            "at": self._clock.now().isoformat(),
            "intent": turn.intent.kind,
            "source": turn.intent.source,
            "decision": decision,
            "rule": rule,
            "handled": result.handled,
        }
        if result.fallback_reason:
            entry["reason"] = result.fallback_reason
        if turn.resolution is not _NO_RESOLUTION:
            entry["items"] = [i.canonical_name for i in turn.resolution.resolved]
            entry["ambiguous"] = len(turn.resolution.ambiguous)
            entry["not_found"] = len(turn.resolution.not_found)
        on_decision_traced(state, entry)
        self._store.save(turn.context, state)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "conversation runtime turn",
                extra={
                    "session_id": state.session_id,
                    "turn_index": state.turn_index,
                    "decision": decision,
                    "rule": rule,
                },
            )
        return replace(result, decision=decision, rule=rule)


def _asks_for_action(intent: ExtractedIntent) -> bool:
    """Only action requests are resolved against the invoice (the matcher may cost a call)."""
    return intent.kind == "action_request" or (intent.is_negation and bool(intent.action_verbs))


def build_runtime(
    *,
    classifier: IntentClassifierLLM,
    backend: ToolBackend,
    channel: Channel = Channel.TEXT,
    matcher: ItemMatcherLLM | None = None,
    scripts_dir: Path = SCRIPTS_DIR,
    state_store: ConversationStateStore | None = None,
    clock: Clock | None = None,
    catalog: ScriptCatalog | None = None,
) -> ConversationRuntime:
    """Wire the default components (the turn pipeline's one-liner)."""
    return ConversationRuntime(
        intent_extractor=IntentExtractor(classifier),
        invoice_resolver=InvoiceResolver(matcher=matcher),
        queue_builder=ActionQueueBuilder(),
        confirmation_manager=ConfirmationManager(),
        policy_engine=PolicyEngine(),
        action_executor=ActionQueueExecutor(ToolAdapter(backend)),
        finalization_machine=FinalizationMachine(),
        response_composer=ResponseComposer(catalog or ScriptCatalog(scripts_dir), channel=channel),
        state_store=state_store or InMemoryStateStore(channel=channel),
        clock=clock,
    )
