"""``ConversationRuntime``: the single entry point of the dialogue layer.

``try_handle`` either answers the turn (``handled=True`` with the text to send) or
falls back to the LLM orchestrator (``handled=False`` with a reason, the state summary
and, for some reasons, a short directive to append to the customer's message).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .action_executor import ActionQueueExecutor, ToolAdapter, ToolBackend, ValueInterpreter
from .action_queue import ActionQueueBuilder, item_to_dict, queue_items
from .clock import Clock, SystemClock
from .confirmation_manager import ConfirmationManager
from .consent import call_off
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
    on_msisdn_changed,
    on_turn_started,
)
from .policy_engine import ConversationDecision, PolicyEngine
from .request_reading import RequestReading, _Turn, asks_for_action
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
    ToolKind,
    ToolOutcome,
)
from .store import ConversationStateStore, InMemoryStateStore
from .textnorm import fold, normalize_utterance
from .turn_bookkeeping import TurnBookkeeping

logger = logging.getLogger(__name__)


class ConversationRuntime(RequestReading, TurnBookkeeping):
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

        # A paused workflow is answered before any classification (the runtime owns resume),
        # unless an answer read loosely (any free text) is clearly something else.
        value = self._workflow_answer(state, user_text)
        intent: ExtractedIntent | None = None
        early: ResolutionOutcome | None = None
        if value is not None and _read_loosely(state, user_text, value):
            intent = self._extractor.extract(
                user_text, state=state, history=history, callbacks=callbacks
            )
            early = self._request_instead_of_answer(state, intent, context, callbacks)
            value = None if early is not None else value
        if value is not None:
            # Only the turn right after the question answers it (DESIGN §10.1).
            current = state.pending_workflow is not None and (
                state.pending_workflow.asked_turn_index == state.turn_index
            )
            intent = ExtractedIntent(kind="confirmation_response", raw_text=user_text)
            turn = self._start_turn(state, intent, context)
            if not current:
                question = self._finalization.ask_workflow_again(state)
                result = reply([self._composer.ask_again(question, "stale")])
                return self._finish(state, turn, result, decision="ask_again", rule="consent")
            result = self._drive(state, turn, self._executor.resume_current(state, value))
            return self._finish(state, turn, result, decision="resume_workflow", rule="resume")

        # Extract BEFORE on_turn_started: the classifier must see the previous turn's state.
        if intent is None:
            intent = self._extractor.extract(
                user_text, state=state, history=history, callbacks=callbacks
            )
        turn = self._start_turn(state, intent, context)
        self._record_turn_signals(state, intent)

        # Guards 1-3 with the text alone: a canonical yes to the question just asked.
        queue = self._confirmations.consume_if_confirmed(
            state, user_text, current_turn_index=state.turn_index
        )
        if queue is not None:
            result = self._run_confirmed(state, turn, queue)
            return self._finish(
                state, turn, result, decision="execute_action_queue", rule="confirmation_manager"
            )

        # "esquece", "cancela isso": about what waits for the customer, not a new request.
        called_off = self._called_off(state, turn)
        if called_off is not None:
            kind = "withdraw" if call_off(user_text) == "withdraw" else "ask_again"
            return self._finish(state, turn, called_off, decision=kind, rule="consent")

        # An answer that changes the pending request (a qualified yes, a line) is a new one.
        request = self._amended_request(state, turn, callbacks)
        if isinstance(request, RuntimeResult):
            return self._finish(state, turn, request, decision="ask_again", rule="consent")
        if request is not None:
            turn.resolution = request
            intent = replace(intent, kind="action_request", requested_action=True)
            turn.intent = intent
        elif asks_for_action(intent):
            turn.resolution = early or self._resolve_request(state, turn, callbacks)
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

    # --- requests and the answers that amend them ------------------------------------

    def _route(
        self, state: ConversationState, turn: _Turn, decision: ConversationDecision
    ) -> RuntimeResult:
        if decision.kind == "execute_action_queue":
            return self._execute_confirmed(state, turn)
        if decision.kind == "ask_confirmation":
            assert decision.action_queue is not None
            return self._ask_confirmation(state, turn, decision.action_queue)
        if decision.kind == "ask_which_line":
            return self._ask_which_line(state, turn)
        if decision.kind == "reask_confirmation":
            return self._ask_again(state, "goodbye")
        if decision.kind == "call_informative_tool":
            return self._explain_invoice(state, turn)
        if decision.kind == "rag":
            return self._answer_with_rag(state, turn, decision.queries)
        if decision.kind == "item_not_found":
            # Status stays as it was: the customer rephrases. A regulated refusal is owed
            # whatever was named ("reembolso em dobro de um serviço que não está aqui").
            intent = turn.intent
            preamble = self._composer.regulated_preamble(intent.action_verbs, intent.raw_text)
            return reply([*preamble, self._composer.item_not_found(intent.mentioned_items)])
        if decision.kind == "finalize":
            assert decision.status is not None
            return self._finalize(state, decision.status, [])
        return self._fallback(state, turn, decision.reason or "uncovered_intent")

    def _execute_confirmed(self, state: ConversationState, turn: _Turn) -> RuntimeResult:
        # Rule 1 routes every affirmation here, but only the confirmation guards decide: an
        # affirmation only the classifier recognised ("ok, pode") is asked again, with how
        # to confirm — guard 3 accepts a canonical yes alone (DESIGN §10.1).
        queue = self._confirmations.consume_if_confirmed(
            state, turn.intent.raw_text, current_turn_index=state.turn_index
        )
        if queue is not None:
            return self._run_confirmed(state, turn, queue)
        # Not a consent to the question just asked: ask it again rather than act.
        pending = state.pending_confirmation
        assert pending is not None
        stale = pending.asked_turn_index != state.turn_index - 1
        return self._ask_again(state, "stale" if stale else "unclear")

    def _ask_which_line(self, state: ConversationState, turn: _Turn) -> RuntimeResult:
        """Rule 3.5: name the candidates as the customer sees them; hold the rest."""
        outcome = turn.resolution
        invoice = turn.context.get("invoice_detail") or {}
        choices = [m for r in outcome.ambiguous for m in r.matches]
        held = self._builder.build(outcome.resolved) if outcome.resolved else ActionQueue()
        question = self._composer.which_line(outcome.ambiguous, invoice)
        self._confirmations.create_confirmation(
            state,
            held,
            prompt_text=question,
            turn_index=state.turn_index,
            choices=[item_to_dict(c) for c in dict.fromkeys(choices)],
        )
        return reply([question])

    def _ask_confirmation(
        self, state: ConversationState, turn: _Turn, queue: ActionQueue
    ) -> RuntimeResult:
        intent = turn.intent
        preamble = self._composer.regulated_preamble(intent.action_verbs, intent.raw_text)
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

    def _run_confirmed(
        self, state: ConversationState, turn: _Turn, confirmed: ActionQueue
    ) -> RuntimeResult:
        """Run the queue the customer just confirmed, unless a workflow waits for them.

        A confirmation may be given while a workflow is paused: the customer asked for
        something else instead of answering its question, then said yes to that. Running
        the new request and forgetting the old one would leave the paused work undone
        without a word (the customer believes it done); dropping the new one would ignore a
        yes. The paused work comes first, as the customer would expect of a person: the new
        steps wait in the queue behind the paused step (``ConfirmationManager``), the
        waiting question is asked again saying the new request follows, and its answer
        resumes the workflow, after which the queue goes on with the new steps. Nothing is
        executed on this turn.
        """
        paused = state.pending_workflow
        if paused is None:
            return self._drive(state, turn, self._executor.execute_next(state))
        question = self._finalization.ask_workflow_again(state)
        subjects = [s.subject for s in confirmed.steps[confirmed.cursor :]]
        return reply([self._composer.paused_work_first(subjects, paused.subject), question])

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
            paused = result.get("aguardando_resposta") is True
            transition = self._finalization.after_tool_result(state, result)
            message = result.get("message")
            if isinstance(message, str) and message.strip():
                parts.append(message.strip())
            elif not paused:
                # A paused step did nothing yet: no "concluí apenas parte" (issue 11 item 6).
                parts.append(self._composer.action_outcome(action.subject, action.outcome))
            if action.outcome is ToolOutcome.FAILURE:
                return reply([*parts, *self._offer_retry(state)])
            if paused and transition == "ask_next_action":
                # Paused mid-queue: its question first; the queue goes on after the answer.
                self._finalization.pause_mid_queue(state, result)
                transition = "wait_workflow_input"
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
        subjects: list[str] = []
        paused = state.pending_workflow
        if paused is not None:
            # A workflow still waits for an answer: closing leaves it undone, and whatever
            # the queue holds behind it (a request confirmed meanwhile): say so.
            subjects += [
                paused.subject,
                *(i.canonical_name for i in queue_items(state.action_queue)),
            ]
        pending = state.pending_confirmation
        if pending is not None:
            # Closing drops a request never confirmed: say so (issue 11 item 3).
            subjects += [i.canonical_name for i in queue_items(pending.authorized_queue)]
            subjects += [str(c.get("canonical_name", "")) for c in pending.choices]
        if subjects:
            parts = [*parts, self._composer.request_dropped(list(dict.fromkeys(subjects)))]
        self._finalization.mark_closed(state, status)
        payload = self._finalization.build_finalize_payload(status, state.to_prompt_context())
        return reply([*parts, self._composer.closing(status)], finalization=payload)

    def _workflow_answer(self, state: ConversationState, user_text: str) -> str | None:
        pending = state.pending_workflow
        if pending is None:
            return None
        if state.status is not ConversationStatus.AWAITING_WORKFLOW_INPUT:
            # A confirmation asked while the workflow waits has the floor only while it is
            # the open question; once declined or left behind, the paused question is back
            # (asked again first: its own turn is long gone).
            asked = state.pending_confirmation
            if asked is None or asked.asked_turn_index >= state.turn_index:
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


def _read_loosely(state: ConversationState, user_text: str, value: str) -> bool:
    """Whether a workflow answer was read from words beyond an allowed value: any free
    text, or a choice named inside a longer message ("quero cancelar o Tamboro")."""
    pending = state.pending_workflow
    assert pending is not None
    if pending.normalize == "free_text":
        return True
    return pending.normalize == "choice" and fold(value) != fold(normalize_utterance(user_text))


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
