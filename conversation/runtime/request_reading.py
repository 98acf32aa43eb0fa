"""The request-reading half of ``ConversationRuntime``: which items a turn asks for, and
how a qualified answer ("sim, mas só o VOD", "e também o Tamboro") amends a pending request
(DESIGN §10.1: a yes with a qualifier is a new request). A mixin, so ``runtime.py`` stays
one screenful per job; it uses the runtime's resolver, composer and confirmation manager.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .action_queue import item_from_dict, queue_items
from .amendments import amend_pending, narrow_by_line, pick_choices
from .consent import call_off, is_bare_affirmation, qualifier
from .intent_extractor import ExtractedIntent
from .invoice_resolver import ResolutionOutcome
from .line_choice import holder_line
from .result import RuntimeResult, reply
from .state import (
    ConversationState,
    ResolvedAction,
)
from .textnorm import words

# One shared "nothing resolved" value: the bookkeeping tells it apart by identity.
_NO_RESOLUTION = ResolutionOutcome(resolved=(), ambiguous=(), not_found=())


@dataclass
class _Turn:
    """Per-turn scratch data (never persisted)."""

    context: MutableMapping[str, Any]
    intent: ExtractedIntent
    executed: list[ResolvedAction] = field(default_factory=list)
    resolution: ResolutionOutcome = _NO_RESOLUTION


# Intents that are never the answer to a workflow's free-text question.
_NOT_AN_ANSWER = frozenset({"conceptual_question", "invoice_overview", "human_or_end"})


def asks_for_action(intent: ExtractedIntent) -> bool:
    """Only action requests are resolved against the invoice (the matcher may cost a call)."""
    return intent.kind == "action_request" or (intent.is_negation and bool(intent.action_verbs))


class RequestReading:
    """Mixed into ``ConversationRuntime``; see that class for the attributes used here."""

    _resolver: Any
    _composer: Any
    _confirmations: Any
    _finalization: Any

    def _resolve_request(
        self,
        state: ConversationState,
        turn: _Turn,
        callbacks: Sequence[Any] | None,
        mentions: Sequence[str] | None = None,
    ) -> ResolutionOutcome:
        """Mentions -> invoice items, with the line settled when the request names it."""
        invoice = turn.context.get("invoice_detail") or {}
        text = turn.intent.raw_text
        if mentions is None:
            mentions = turn.intent.mentioned_items
        if not mentions:
            # The classifier named nothing ("quero meu dinheiro de volta em dobro pelo VOD"):
            # the names the message itself carries, by a distinctive word.
            mentions = self._resolver.scan_text(text, invoice)
        outcome = self._resolver.resolve(mentions, invoice, callbacks=callbacks)
        return narrow_by_line(
            outcome,
            text,
            own_msisdn=state.msisdn,
            holder_msisdn=holder_line(invoice),
            listed_msisdn=state.invoice_snapshot_source_msisdn if state.invoice_snapshot else "",
        )

    def _amended_request(
        self, state: ConversationState, turn: _Turn, callbacks: Sequence[Any] | None
    ) -> ResolutionOutcome | RuntimeResult | None:
        """The new request an answer to the pending question makes, if it makes one.

        Returns the resolution of the new request (the policy then asks to confirm it, or
        which line), a reply asking the question again, or ``None`` when the message is
        not such an answer (it goes through the policy as it is).
        """
        pending = state.pending_confirmation
        if pending is None:
            return None
        intent = turn.intent
        text = intent.raw_text
        if not pending.asks_which_line and not intent.affirmation and qualifier(text) is None:
            if not words(text) or is_bare_affirmation(text):
                # Only an emoji ("👍"), or a yes the classifier did not read as one ("pode
                # cancelar" taken for a request naming nothing): ask for a clear answer.
                return self._ask_again(state, "unclear")
            return None  # the common case: a new request, a question, a no
        invoice = turn.context.get("invoice_detail") or {}
        held = queue_items(pending.authorized_queue)
        if pending.asks_which_line:
            choices = tuple(item_from_dict(c) for c in pending.choices)
            picked = pick_choices(
                text,
                intent.mentioned_items,
                choices,
                own_msisdn=state.msisdn,
                holder_msisdn=holder_line(invoice),
            )
            if picked:
                return ResolutionOutcome(resolved=(*held, *picked), ambiguous=(), not_found=())
            if intent.kind in {"confirmation_response", "unknown"}:
                return self._ask_again(state, "unclear")
            return None  # another request, a question, a goodbye: the policy reads it
        amendment = amend_pending(text, intent.mentioned_items, held, affirmed=intent.affirmation)
        if amendment is None:
            return None
        if amendment.kind == "reask":
            return self._ask_again(state, "unclear")
        if amendment.kind == "nothing_left":
            self._confirmations.withdraw(state)
            paused = state.pending_workflow
            if paused is not None:
                # A workflow still waits for the customer: it stays paused, and its question
                # is the open one again (asked on this turn, so the next answer resumes it).
                question = self._finalization.ask_workflow_again(state)
                return reply([self._composer.nothing_left(paused.subject), question])
            self._finalization.continue_turn(state)
            return reply([self._composer.nothing_left()])
        extra = amendment.extra_mentions
        if not extra and qualifier(text) == "also":
            pending_names = {i.canonical_name for i in held}
            extra = tuple(
                n for n in self._resolver.scan_text(text, invoice) if n not in pending_names
            )
        added = (
            self._resolve_request(state, turn, callbacks, mentions=extra)
            if extra
            else _NO_RESOLUTION
        )
        kept = tuple(amendment.items)
        resolved = (*kept, *(i for i in added.resolved if i not in kept))
        if not resolved and not added.ambiguous:
            return self._ask_again(state, "unclear")
        return ResolutionOutcome(
            resolved=resolved, ambiguous=added.ambiguous, not_found=added.not_found
        )

    def _request_instead_of_answer(
        self,
        state: ConversationState,
        intent: ExtractedIntent,
        context: MutableMapping[str, Any],
        callbacks: Sequence[Any] | None,
    ) -> ResolutionOutcome | None:
        """A free-text workflow question takes any words as its answer, so a message that
        reads as something else is not swallowed by it: a request that names something on
        the invoice other than what the workflow is about, a question about a concept or
        the invoice, a goodbye. Returns the request's resolution (nothing resolved for the
        others), or ``None`` when the message is the answer ("quero cancelar o HBO Max
        porque é caro" to the HBO Max's own question)."""
        if intent.kind in _NOT_AN_ANSWER:
            return _NO_RESOLUTION
        if not asks_for_action(intent):
            return None
        outcome = self._resolve_request(state, _Turn(context, intent), callbacks)
        paused = state.pending_workflow
        about = paused.subject if paused is not None else ""
        if outcome.has_ambiguity or any(i.canonical_name not in about for i in outcome.resolved):
            return outcome
        return None

    def _called_off(self, state: ConversationState, turn: _Turn) -> RuntimeResult | None:
        """A message that calls off what waits for the customer, naming nothing (review r31).

        "esquece", "deixa pra lá", "mudei de ideia" withdraw the open request — the pending
        confirmation if there is one (with a workflow paused behind it, its question is
        the open one again), else the paused workflow and what is queued behind it, which
        is then never resumed. A bare "cancela isso" or "não quero mais" may be the yes to a
        pending cancellation or calling it off: the pending question is asked again, never
        answered for the customer. ``None`` when nothing waits (today's reading: "cancela
        isso" names nothing on the invoice) or the message is something else. Nothing here
        ever acts: withdrawing runs nothing, asking again consumes nothing.
        """
        pending = state.pending_confirmation
        paused = state.pending_workflow
        if pending is None and paused is None:
            return None
        kind = call_off(turn.intent.raw_text)
        if kind is None:
            return None
        if pending is not None:
            if kind == "unclear":
                return self._ask_again(state, "unclear")
            subjects = [i.canonical_name for i in queue_items(pending.authorized_queue)]
            subjects += [str(c.get("canonical_name", "")) for c in pending.choices]
            names = list(dict.fromkeys(s for s in subjects if s))
            self._confirmations.withdraw(state)
            if paused is not None:
                question = self._finalization.ask_workflow_again(state)
                return reply([self._composer.withdrawn(names, paused.subject), question])
            self._finalization.continue_turn(state)
            return reply([self._composer.withdrawn(names)])
        assert paused is not None
        if kind == "unclear":
            question = self._finalization.ask_workflow_again(state)
            return reply([self._composer.call_off_unclear(paused.subject, question)])
        queued = [i.canonical_name for i in queue_items(state.action_queue)]
        self._finalization.continue_turn(state)  # drops the paused workflow and its queue
        return reply([self._composer.withdrawn(list(dict.fromkeys([paused.subject, *queued])))])

    def _ask_again(self, state: ConversationState, why: str) -> RuntimeResult:
        """The pending question again, saying why; only its next answer counts."""
        pending = self._confirmations.ask_again(state)
        if pending.asks_which_line and why == "unclear":
            why = "line"  # no "responda sim ou não" to "de qual linha?"
        return reply([self._composer.ask_again(pending.prompt_text, why)])

    # --- routing ------------------------------------------------------------------------
