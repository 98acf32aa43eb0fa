"""The budget gate of a turn (analytics budgets), run before the turn decides.

Past the organization's monthly spend limit, or past the contact's turn rate, the turn
does not call the model: on the ``offline`` path every model call of the turn goes to the
offline (deterministic) model (``model_calls.spend_stopped``) — routing, the runtime's
classifiers and the orchestrator alike; on the ``handoff`` path the customer gets the
handoff notice and the conversation goes to the team, with no model call at all. Either
way the customer is never left without an answer, and the switch is on the turn's trace
(``trace["budget"]``). An organization with no budget pays no query here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from analytics import budgets
from analytics import services as analytics_services
from conversation import model_calls
from conversation.handoff import perform_human_handoff
from conversation.models import HandoffReason, TurnOutcome

from .context import TurnContext
from .guards import HANDOFF_NOTICE, send_system

BUDGET_HANDOFF_REASON = "Limite de gasto com IA atingido: a equipe continua o atendimento."


@contextlib.contextmanager
def budget_gate(ctx: TurnContext) -> Iterator[str | None]:
    """Yields the turn's outcome when the budget ends the turn (the handoff path), else
    None with the model calls of the block gated as the budget says."""
    verdict = budgets.evaluate(conversation=ctx.conversation, turn=ctx.turn)
    if verdict.crossed is not None and verdict.limit_usd is not None:
        analytics_services.budget_switch_record(
            organization=ctx.conversation.organization,
            level=verdict.crossed,
            limit_usd=verdict.limit_usd,
            spend_usd=verdict.spend_usd or budgets.ZERO,
        )
    stop = verdict.stop
    if stop is None:
        yield None
        return
    ctx.trace["budget"] = stop.trace()
    if stop.path == "handoff":
        send_system(ctx, HANDOFF_NOTICE)
        ctx.handed_off = True
        ctx.defer(
            lambda: perform_human_handoff(
                conversation=ctx.conversation,
                # No reason code of its own (a closed set in the conversation app): to the
                # customer and the team the model is unavailable; the trace says why.
                reason_code=HandoffReason.LLM_UNAVAILABLE,
                reason=BUDGET_HANDOFF_REASON,
            )
        )
        yield TurnOutcome.HANDOFF
        return
    with model_calls.spend_stopped(stop.reason):
        yield None
