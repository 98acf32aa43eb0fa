"""Create and consume confirmations, behind three guards (and DESIGN §10.1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .consent import AFFIRMATIONS, is_canonical_yes
from .mutations import on_confirmation_consumed, on_confirmation_requested
from .state import ActionQueue, ConversationState, ConversationStatus, PendingConfirmation


class ConfirmationManager:
    AFFIRMATIONS = AFFIRMATIONS

    def create_confirmation(
        self,
        state: ConversationState,
        action_queue: ActionQueue,
        *,
        prompt_text: str,
        turn_index: int,
        choices: Sequence[Mapping[str, Any]] = (),
        reasked: int = 0,
    ) -> PendingConfirmation:
        """Ask ``prompt_text`` about ``action_queue`` (or, with ``choices``, which line)."""
        if action_queue.is_exhausted() and not choices:
            raise ValueError("cannot ask to confirm an empty or exhausted queue")
        confirmation_id = f"{state.session_id}#{turn_index}"
        confirmation = PendingConfirmation(
            id=confirmation_id,
            authorized_queue=_with_action_ids(action_queue, confirmation_id),
            asked_turn_index=turn_index,
            prompt_text=prompt_text,
            choices=tuple(choices),
            reasked=reasked,
        )
        on_confirmation_requested(state, confirmation)
        return confirmation

    def ask_again(self, state: ConversationState) -> PendingConfirmation:
        """The pending question again, as asked on this turn (guard 2 restarts from here)."""
        pending = state.pending_confirmation
        if pending is None:
            raise ValueError("no pending confirmation to ask again")
        return self.create_confirmation(
            state,
            pending.authorized_queue,
            prompt_text=pending.prompt_text,
            turn_index=state.turn_index,
            choices=pending.choices,
            reasked=pending.reasked + 1,
        )

    def consume_if_confirmed(
        self,
        state: ConversationState,
        user_text: str,
        *,
        current_turn_index: int,
    ) -> ActionQueue | None:
        """The authorized queue when every guard passes, else ``None`` (state untouched).

        Guard 3 reads the text alone, as the spec means it (DESIGN §10.1, issue 11 item 2):
        a classifier's affirmation flag never stands for consent, so "ok, pode" or "claro"
        make the runtime ask again ("Responda *sim* para confirmar"), never act.
        """
        pending = state.pending_confirmation
        # 1. Status: another event (execution, workflow, closure) owns the conversation.
        if state.status is not ConversationStatus.AWAITING_CONFIRMATION or pending is None:
            return None
        # "Which line?" authorizes nothing: only the confirmation that follows a line answer.
        if pending.asks_which_line:
            return None
        # 2. Turn: only the direct answer to the question authorizes the action; turns the
        # runtime did not run count too (consent.note_unseen_turn).
        if current_turn_index != pending.asked_turn_index + 1:
            return None
        # 3. Affirmation: a canonical yes only (after normalisation: "Siiim!", "sim,
        # obrigado"); negations, qualifiers and vague answers never consume.
        if not is_canonical_yes(user_text):
            return None
        queue = pending.authorized_queue.copy()
        if state.pending_workflow is not None:
            # Consent given while a workflow waits for the customer's answer: the paused
            # queue is kept and the new steps join it behind the paused step (the runtime
            # asks the waiting question first: ``ConversationRuntime._run_confirmed``).
            self._consume(state, _behind_paused(state.action_queue, queue))
        else:
            self._consume(state, queue)
        return queue

    def withdraw(self, state: ConversationState) -> None:
        """The customer took every item out of the pending request ("menos o VOD" when only
        the VOD was asked): nothing new is pending and nothing new will run. A workflow
        that waits for the customer keeps its queue (the paused step and what follows it):
        withdrawing a request never confirmed takes nothing else away."""
        if state.pending_confirmation is None:
            raise ValueError("no pending confirmation to withdraw")
        paused = state.pending_workflow is not None
        self._consume(state, state.action_queue.copy() if paused else ActionQueue())

    @staticmethod
    def _consume(state: ConversationState, queue: ActionQueue) -> None:
        on_confirmation_consumed(state, queue)


def _behind_paused(paused: ActionQueue, confirmed: ActionQueue) -> ActionQueue:
    """``paused`` (its cursor just past the paused step) with the steps of ``confirmed``
    appended; a step the paused queue already holds from its paused step on is not
    added twice ("cancela o HBO Max" while the HBO Max's own question waits)."""
    held = [(s.tool, s.subject, s.items) for s in paused.steps[max(paused.cursor - 1, 0) :]]
    new = [
        s for s in confirmed.steps[confirmed.cursor :] if (s.tool, s.subject, s.items) not in held
    ]
    return ActionQueue(steps=[*paused.steps, *new], cursor=paused.cursor)


def _with_action_ids(queue: ActionQueue, confirmation_id: str) -> ActionQueue:
    """A copy of ``queue`` whose steps name the consent that covers them. A step that
    already has an id keeps it: a retry, or the same question asked again, authorises the
    same action (one idempotency key for all its attempts); new steps get this
    confirmation's id and their place in its queue."""
    steps = [
        step if step.action_id else replace(step, action_id=f"{confirmation_id}/{index}")
        for index, step in enumerate(queue.steps)
    ]
    return ActionQueue(steps=steps, cursor=queue.cursor)
