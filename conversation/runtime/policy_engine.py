"""The pure decision: state + intent (+ pre-computed resolution) -> next event.

No side effects, no IO, no logging. Rules are evaluated in order and the first match
wins, but their predicates are written to be disjoint (governance §2, proved by
tests/runtime/test_policy_disjointness.py), so the order is documentation, not logic.
Each rule has at most three conditions (§3): the intent extractor and the resolver
settle the rest before the policy runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .intent_extractor import ExtractedIntent
from .state import (
    ActionQueue,
    ConversationState,
    FinalizationStatus,
    ResolvedInvoiceItem,
    ToolKind,
    ToolOutcome,
)

DecisionKind = Literal[
    "ask_confirmation",
    "ask_which_line",
    "reask_confirmation",
    "execute_action_queue",
    "call_informative_tool",
    "rag",
    "item_not_found",
    "finalize",
    "fallback_to_orchestrator",
]
InformativeTool = Literal["invoice_explanation"]
# Off-context turns in a row before the conversation is closed as "outros_assuntos".
OFF_CONTEXT_LIMIT = 3


@dataclass(frozen=True)
class ConversationDecision:
    kind: DecisionKind
    rule: str  # rule id, for the decision trace
    reason: str | None = None  # fallback_to_orchestrator
    status: FinalizationStatus | None = None  # finalize
    tool: InformativeTool | None = None  # call_informative_tool
    queries: tuple[str, ...] = ()  # rag
    action_queue: ActionQueue | None = field(default=None, hash=False)  # ask/execute


@dataclass(frozen=True)
class PolicyFacts:
    """Everything a rule may read, gathered once per decision."""

    state: ConversationState
    intent: ExtractedIntent
    resolved_items: tuple[ResolvedInvoiceItem, ...]
    action_queue: ActionQueue
    has_ambiguity: bool

    @property
    def has_pending(self) -> bool:
        return self.state.pending_confirmation is not None

    @property
    def answers_pending(self) -> bool:
        """The pending confirmation is the question this message answers: it was asked on
        the previous turn (DESIGN §10.1; a turn in between — the runtime's own informative
        question, the orchestrator's, or one the runtime never saw — makes it stale)."""
        pending = self.state.pending_confirmation
        return pending is not None and pending.asked_turn_index >= self.state.turn_index - 1

    @property
    def goodbye_check_owed(self) -> bool:
        """A confirmation waits, the customer was not yet asked again, and the goodbye
        does not decline it ("não, só isso" does)."""
        pending = self.state.pending_confirmation
        return pending is not None and pending.reasked == 0 and not self.intent.negation

    @property
    def just_acted(self) -> bool:
        """The latest tool was an action that succeeded: a goodbye now is "resolvido"."""
        last = self.state.last_completed_action
        return (
            last is not None
            and last.tool_kind is ToolKind.ACTION
            and last.outcome is ToolOutcome.SUCCESS
        )

    @property
    def wants_action(self) -> bool:
        """An action request, or "não, cancela esses" answering a pending question (1.6)."""
        intent = self.intent
        if intent.kind == "action_request":
            return True
        return intent.is_negation and bool(intent.action_verbs) and self.answers_pending


Rule = Callable[[PolicyFacts], "ConversationDecision | None"]


def rule_1_confirmation_consumed(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 1 — the customer says yes to the pending confirmation (VOD + HBO Max case).
    # Routing only: the confirmation guards decide whether this text consumes it; a stale,
    # qualified or contradictory yes makes the runtime ask again (DESIGN §10.1).
    if f.intent.is_affirmation and f.has_pending:
        assert f.state.pending_confirmation is not None
        queue = f.state.pending_confirmation.authorized_queue
        return ConversationDecision("execute_action_queue", "1", action_queue=queue)
    return None


def rule_1_5_informative_confirmed(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 1.5 — "SIM" after an invoice explanation/answer: the doubt is solved (e2e case 2).
    if f.intent.is_affirmation and not f.has_pending and f.state.informative_answer_delivered:
        return ConversationDecision("finalize", "1.5", status="resolvido")
    return None


def rule_1_5b_orphan_negation(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 1.5b — a "no" with no confirmation being answered (none pending, or it was asked
    # before the runtime's own question, issue 11 item 5): the orchestrator interprets it.
    if f.intent.is_negation and not f.answers_pending:
        return ConversationDecision(
            "fallback_to_orchestrator", "1.5b", reason="negation_without_pending"
        )
    return None


def rule_1_6_negation_with_pending(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 1.6 — "não contratei isso" while a confirmation is pending (CY0006 runs
    # 230207/230336/230436): explain, never push a cancellation. With an action verb the
    # intent falls to the action family instead ("não, cancela esses").
    if f.intent.is_negation and f.answers_pending and not f.intent.action_verbs:
        return ConversationDecision(
            "fallback_to_orchestrator", "1.6", reason="confirmation_response_negation_pending"
        )
    return None


def rule_2_end_requested(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 2 — "não, só isso obrigada": the customer ends the conversation (e2e case 3);
    # "tchau" right after a successful action is "resolvido" (issue 11 item 7).
    if f.intent.kind == "human_or_end" and not f.goodbye_check_owed:
        status: FinalizationStatus = "resolvido" if f.just_acted else "nao_resolvido"
        return ConversationDecision("finalize", "2", status=status)
    return None


def rule_2_5_end_with_pending(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 2.5 — "obrigado" while a confirmation waits (issue 11 item 3): never close on a
    # pending request unannounced; say it was not done and ask once more.
    if f.intent.kind == "human_or_end" and f.goodbye_check_owed:
        return ConversationDecision("reask_confirmation", "2.5", reason="goodbye_with_pending")
    return None


def rule_3_conceptual_question(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 3 — "o que é tamboro?": inline RAG with the classifier's refined queries
    # (raw speech retrieved badly: "um tal de tamboro"); literal text as a fallback.
    if f.intent.kind == "conceptual_question":
        refined = tuple(q.strip() for q in f.intent.rag_query if q.strip())
        raw = f.intent.raw_text.strip()
        queries = refined or ((raw,) if raw else ())
        return ConversationDecision("rag", "3", queries=queries)
    return None


def rule_3_5_ambiguous_item(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 3.5 — "cancela o Aya" with two Ayas (incident "dois-ayas"; issue 11 item 4): the
    # runtime asks which line itself, naming the lines, so that the answer can resolve it
    # (the orchestrator's question left it a dead end). One ambiguous mention is enough.
    if f.wants_action and f.has_ambiguity:
        return ConversationDecision("ask_which_line", "3.5", reason="ambiguous_item_match")
    return None


def rule_4_invoice_overview(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 4 — "me explica essa fatura": the invoice explanation tool answers.
    if f.intent.kind == "invoice_overview":
        return ConversationDecision("call_informative_tool", "4", tool="invoice_explanation")
    return None


def rule_5_action_with_items(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 5 — "quero cancelar o VOD e o HBO Max": confirm the pre-built queue first.
    if f.wants_action and not f.has_ambiguity and f.resolved_items:
        return ConversationDecision("ask_confirmation", "5", action_queue=f.action_queue)
    return None


def rule_6_item_not_found(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 6 — the named service is not on the invoice: say so, ask to rephrase.
    if f.wants_action and not f.has_ambiguity and not f.resolved_items:
        return ConversationDecision("item_not_found", "6")
    return None


def rule_7_off_context_terminal(f: PolicyFacts) -> ConversationDecision | None:
    # Rule 7 — third off-context turn in a row (e2e case 4): close as "outros_assuntos".
    if f.intent.kind == "off_context" and f.state.off_context_count >= OFF_CONTEXT_LIMIT:
        return ConversationDecision("finalize", "7", status="outros_assuntos")
    return None


RULES: tuple[tuple[str, Rule], ...] = (
    ("1", rule_1_confirmation_consumed),
    ("1.5", rule_1_5_informative_confirmed),
    ("1.5b", rule_1_5b_orphan_negation),
    ("1.6", rule_1_6_negation_with_pending),
    ("2", rule_2_end_requested),
    ("2.5", rule_2_5_end_with_pending),
    ("3", rule_3_conceptual_question),
    ("3.5", rule_3_5_ambiguous_item),
    ("4", rule_4_invoice_overview),
    ("5", rule_5_action_with_items),
    ("6", rule_6_item_not_found),
    ("7", rule_7_off_context_terminal),
)


class PolicyEngine:
    def decide(
        self,
        state: ConversationState,
        *,
        intent: ExtractedIntent,
        resolved_items: Sequence[ResolvedInvoiceItem],
        action_queue: ActionQueue,
        has_ambiguity: bool = False,
    ) -> ConversationDecision:
        facts = PolicyFacts(state, intent, tuple(resolved_items), action_queue, has_ambiguity)
        for _rule_id, rule in RULES:
            decision = rule(facts)
            if decision is not None:
                return decision
        # Default — in doubt, the orchestrator answers with the state as context (§4);
        # off-context turns below the limit land here too.
        return ConversationDecision(
            "fallback_to_orchestrator", "default", reason="uncovered_intent"
        )
