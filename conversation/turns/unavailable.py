"""The model is down: the customer is never left in silence (DESIGN §10.4).

When the orchestrator's model call failed after the SDK's own retries and the turn said
nothing, the agent version decides (``AgentVersion.llm_unavailable_action``):

- ``handoff`` (the default): a short notice that a person takes over, and the canonical
  handoff with reason ``llm_unavailable`` — the notice promises a person because the
  handoff really happens in the same commit.
- ``retry``: a short notice that promises nothing but an answer here (sent once), and the
  turn stays active (status ``retry``) with its lines; the sweeper re-drives it after
  ``TURN_LLM_RETRY_DELAY_S`` (doubling per attempt). Errors a retry cannot fix (a request
  the provider refuses) and the last of ``TURN_MAX_ATTEMPTS`` hand off instead.

The outcome is on the turn: ``llm_unavailable`` (handed off), or status ``retry``; the
trace says which (``model_down``) and the model's error code is ``error_code``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from conversation.handoff import perform_human_handoff
from conversation.models import HandoffReason, LlmUnavailableAction, TriggerKind, TurnOutcome

from .context import TurnContext
from .guards import send_system

UNAVAILABLE_HANDOFF_NOTICE = (
    "Desculpe, estou com uma instabilidade técnica e não consigo responder agora. "
    "Vou chamar uma pessoa da nossa equipe para continuar o seu atendimento por aqui."
)
UNAVAILABLE_RETRY_NOTICE = (
    "Desculpe, estou com uma instabilidade técnica neste momento. "
    "Recebi sua mensagem e já volto a responder por aqui."
)
# The model's errors a later attempt may not hit again (conversation.llm.base).
RETRYABLE_CODES = frozenset({"llm_timeout", "llm_unavailable", "llm_rate_limited"})


def model_unavailable(ctx: TurnContext, error_code: str, now: datetime) -> str:
    """The turn's outcome when the model stayed down and nothing was said yet."""
    turn = ctx.turn
    turn.error_code = error_code
    agent = ctx.agent
    retries = agent is not None and agent.llm_unavailable_action == LlmUnavailableAction.RETRY
    if retries and error_code in RETRYABLE_CODES and turn.attempts < settings.TURN_MAX_ATTEMPTS:
        delay = settings.TURN_LLM_RETRY_DELAY_S * 2 ** max(turn.attempts - 1, 0)
        ctx.retry_at = now + timedelta(seconds=delay)
        notified = bool((turn.trace or {}).get("model_down"))  # an earlier attempt's trace
        # "Recebi sua mensagem" only to a customer who wrote one: a case reply or a
        # follow-up is the team's turn, and it simply comes a little later.
        if not notified and turn.trigger_kind == TriggerKind.INBOUND:
            send_system(ctx, UNAVAILABLE_RETRY_NOTICE)
        ctx.trace["model_down"] = {
            "action": "retry",
            "attempt": turn.attempts,
            "retry_in_s": delay,
            "error": error_code,
        }
        return TurnOutcome.PENDING
    send_system(ctx, UNAVAILABLE_HANDOFF_NOTICE)
    conversation = ctx.conversation
    # A case answer the AI could not relay goes to the person in the briefing: the member
    # was told the AI would tell the customer, and now a person must.
    untold = f"Ainda não repassado ao cliente: {ctx.reentry}" if ctx.reentry else ""
    ctx.defer(
        lambda: perform_human_handoff(
            conversation=conversation,
            reason_code=HandoffReason.LLM_UNAVAILABLE,
            reason=f"O modelo ficou indisponível ({error_code}).",
            briefing_extra=untold,
        )
    )
    ctx.handed_off = True
    ctx.trace["model_down"] = {"action": "handoff", "attempt": turn.attempts, "error": error_code}
    return TurnOutcome.LLM_UNAVAILABLE
