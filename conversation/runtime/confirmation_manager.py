"""Create and consume confirmations, behind three guards."""

from __future__ import annotations

from .mutations import on_confirmation_consumed, on_confirmation_requested
from .state import ActionQueue, ConversationState, ConversationStatus, PendingConfirmation
from .textnorm import normalize_utterance


class ConfirmationManager:
    AFFIRMATIONS = frozenset({"sim", "isso", "isso mesmo", "pode seguir", "correto", "confirmo"})

    def create_confirmation(
        self,
        state: ConversationState,
        action_queue: ActionQueue,
        *,
        prompt_text: str,
        turn_index: int,
    ) -> PendingConfirmation:
        if action_queue.is_exhausted():
            raise ValueError("cannot ask to confirm an empty or exhausted queue")
        confirmation = PendingConfirmation(
            id=f"{state.session_id}#{turn_index}",
            authorized_queue=action_queue.copy(),
            asked_turn_index=turn_index,
            prompt_text=prompt_text,
        )
        on_confirmation_requested(state, confirmation)
        return confirmation

    def consume_if_confirmed(
        self,
        state: ConversationState,
        user_text: str,
        *,
        current_turn_index: int,
        classifier_affirmed: bool = False,
    ) -> ActionQueue | None:
        """The authorized queue when every guard passes, else ``None`` (state untouched).

        ``classifier_affirmed`` lets the policy's rule 1 accept an affirmation the LLM
        recognised in context ("ok, pode"); the status and turn guards still apply.
        """
        pending = state.pending_confirmation
        # 1. Status: another event (execution, workflow, closure) owns the conversation.
        if state.status is not ConversationStatus.AWAITING_CONFIRMATION or pending is None:
            return None
        # 2. Turn: only the direct answer to the question authorizes the action.
        if current_turn_index != pending.asked_turn_index + 1:
            return None
        # 3. Affirmation: canonical yes only; negations and vague answers never consume.
        if not classifier_affirmed and normalize_utterance(user_text) not in self.AFFIRMATIONS:
            return None
        queue = pending.authorized_queue.copy()
        on_confirmation_consumed(state, queue)
        return queue
