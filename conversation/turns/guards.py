"""The guards a turn passes before any agent speaks: a reaction asks nothing, a member
answers a case from a staff number, opt-out (and back in), a human owns the conversation,
the agent's handoff keywords.

Each guard returns the turn's outcome when it ends the turn, None to let it go on, and
records its code under ``trace["guard"]``. Opt-out and "a human owns it" run in the claim's
transaction (they need no network), so they write directly; the keyword guard runs in the
decide step, after routing, so its handoff is an effect the finish applies
(``TurnContext.defer``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings

from cases import staff_replies as case_staff
from conversation.agents import AgentConfig
from conversation.handoff import handoff_touch, perform_human_handoff
from conversation.hooks import cancel_pending_for_conversation
from conversation.models import (
    Conversation,
    ConversationStatus,
    HandoffReason,
    SenderKind,
    TurnOutcome,
)
from conversation.text import contains_keyword, normalize

from .context import Reply, TurnContext

log = logging.getLogger(__name__)

OPT_OUT_KEYWORDS = ("parar", "sair", "stop", "descadastrar")
OPT_IN_KEYWORDS = ("voltar",)
OPT_OUT_CONFIRMATION = (
    "Pronto! Você não vai mais receber mensagens nossas por aqui. "
    "Se mudar de ideia, é só mandar VOLTAR."
)
OPT_IN_CONFIRMATION = "Que bom ter você de volta! Como posso ajudar?"
HANDOFF_NOTICE = (
    "Certo! Vou chamar uma pessoa da nossa equipe para continuar o seu atendimento por aqui."
)


# Lines that ask nothing: a reaction (or its removal) to one of our messages.
NO_ASK_KINDS = frozenset(("reaction",))


def reaction_only_guard(ctx: TurnContext) -> str | None:
    """A customer reacting 👍 to a reply (or taking the reaction back) asks nothing: the turn
    takes the lines (the inbox shows them, the sweeper leaves them) and no agent speaks."""
    if not ctx.batch or any(line.kind not in NO_ASK_KINDS for line in ctx.batch):
        return None
    ctx.trace["guard"] = "reaction_only"
    return TurnOutcome.NO_REPLY


def staff_case_answer_guard(ctx: TurnContext) -> str | None:
    """A member's staff number answering a case from WhatsApp (human-cases §9): the case
    service acts, the member gets a confirmation, and no AI turn runs."""
    reply = case_staff.staff_whatsapp_answer(
        conversation=ctx.conversation,
        text=ctx.customer_text(),
        # A reply to a notice answers that notice's case (§9: "comando preso àquela resposta").
        quoted=[m.reply_to for m in ctx.batch if m.reply_to],
    )
    if reply is None:
        return None
    send_system(ctx, reply)
    ctx.trace["guard"] = "staff_case_answer"
    return TurnOutcome.NO_REPLY


def opt_out_guard(ctx: TurnContext, text: str, now: datetime) -> str | None:
    """Guard 1: opt-out keywords (and opting back in); an opted-out contact gets nothing."""
    contact = ctx.conversation.contact
    if normalize(text) in OPT_OUT_KEYWORDS:
        return _opt_out(ctx, now)
    if contact.opted_out_at is not None:
        if normalize(text) in OPT_IN_KEYWORDS:
            contact.opted_out_at = None
            contact.save(update_fields=["opted_out_at"])
            send_system(ctx, OPT_IN_CONFIRMATION)
            ctx.trace["guard"] = "opt_in"
            return TurnOutcome.REPLIED
        ctx.trace["guard"] = "opted_out"
        return TurnOutcome.NO_REPLY
    return None


def opted_out_guard(ctx: TurnContext) -> str | None:
    """An opted-out contact gets nothing (turns with no customer text: no keywords)."""
    if ctx.conversation.contact.opted_out_at is not None:
        ctx.trace["guard"] = "opted_out"
        return TurnOutcome.NO_REPLY
    return None


def human_owned_guard(
    ctx: TurnContext, now: datetime | None = None, *, touch_handoff: bool
) -> str | None:
    """Guard 2: a human owns the conversation — never classified, never answered by AI.

    ``touch_handoff``: a customer wrote, so the handoff inbox item is inserted or bumped
    (``handoff_touch``); a case reply brings no customer message to bump it with."""
    if not ctx.conversation.is_human_owned(now):
        return None
    if touch_handoff:
        handoff_touch(ctx.conversation)
    ctx.trace["guard"] = "human_owned"
    return TurnOutcome.HUMAN_OWNED


def handoff_keyword_guard(ctx: TurnContext, text: str, agent: AgentConfig) -> str | None:
    """Guard 3: the customer asks for a human in the agent's own words."""
    if contains_keyword(text, agent.handoff_keywords) is None:
        return None
    send_system(ctx, HANDOFF_NOTICE)
    ctx.defer(
        lambda: perform_human_handoff(
            conversation=ctx.conversation,
            reason_code=HandoffReason.REQUESTED_HUMAN,
            reason="Palavra de transbordo do agente.",
        )
    )
    ctx.handed_off = True
    ctx.trace["guard"] = "handoff_keyword"
    return TurnOutcome.HANDOFF


def send_system(ctx: TurnContext, text: str) -> None:
    """A fixed system line (confirmations, the handoff notice): no gate applies."""
    ctx.send(Reply(text, SenderKind.SYSTEM))


def _opt_out(ctx: TurnContext, now: datetime) -> str:
    contact = ctx.conversation.contact
    ctx.trace["guard"] = "opt_out"
    if contact.opted_out_at is not None:
        return TurnOutcome.OPTED_OUT  # already out: one confirmation only
    contact.opted_out_at = now
    contact.save(update_fields=["opted_out_at"])
    ctx.trace["followups_cancelled"] = cancel_pending_for_conversation(ctx.conversation, "opt_out")
    send_system(ctx, OPT_OUT_CONFIRMATION)
    return TurnOutcome.OPTED_OUT


def attempts_exhausted(ctx: TurnContext) -> str:
    """Every attempt of this turn failed before finishing (a poison message, a crashing
    dependency): the conversation goes to the team rather than being tried again — the
    turn's outcome (it ends ``failed``)."""
    attempts = ctx.turn.attempts
    log.error("turn gave up after its attempts", extra={**ctx.ids, "attempts": attempts})
    ctx.trace["gave_up"] = {"attempts": attempts}
    if not ctx.conversation.is_human_owned():
        send_system(ctx, HANDOFF_NOTICE)
    ctx.defer(lambda: to_the_team(ctx.conversation, GAVE_UP_REASON))
    ctx.turn.error_code = "attempts_exhausted"
    return TurnOutcome.HANDOFF


GAVE_UP_REASON = "A IA não conseguiu processar esta mensagem."
PAST_WINDOW_REASON = "Mensagem do cliente ficou sem resposta por mais de 24 horas."


def past_service_window_guard(ctx: TurnContext, now: datetime) -> str | None:
    """A burst no turn took for ``TURN_SWEEP_MAX_AGE_S`` (its task was lost and nothing
    re-drove it: a broker down for a day, the sweeper stopped), from a customer who has not
    written since: past WhatsApp's 24-hour window a late AI answer is refused anyway. The
    line must not vanish: the conversation goes to the team — once, as this turn is the
    line's — and the customer gets no notice the closed window would refuse. A customer who
    wrote again since gets the late answer instead (the window is open)."""
    limit = now - timedelta(seconds=settings.TURN_SWEEP_MAX_AGE_S)
    newest = max((m.created_at for m in ctx.batch), default=None)
    last_inbound = ctx.conversation.last_inbound_at
    if newest is None or newest > limit or (last_inbound is not None and last_inbound > limit):
        return None
    ctx.trace["guard"] = "past_service_window"
    if ctx.conversation.status == ConversationStatus.CLOSED:
        # Staff resolved the conversation with the line in it (a later line would have
        # reopened it): they have seen it, and nothing is reopened behind their back.
        log.warning("customer line past the service window, conversation resolved", extra=ctx.ids)
        return TurnOutcome.NO_REPLY
    log.error(
        "customer line past the service window: handed to the team",
        extra={**ctx.ids, "lines": len(ctx.batch)},
    )
    ctx.trace["handoff"] = "past_service_window"
    ctx.defer(lambda: to_the_team(ctx.conversation, PAST_WINDOW_REASON))
    return TurnOutcome.HANDOFF


def to_the_team(conversation: Conversation, reason: str) -> None:
    """A turn gives up on the conversation: the team gets it in the handoff inbox — a
    handoff (the code of a turn that gave up: ``low_confidence``), or, when a person owns
    the conversation already, its inbox item inserted or bumped. Call it in the finish's
    transaction: fenced by the claim, so once per turn."""
    if conversation.is_human_owned():
        handoff_touch(conversation)
        return
    perform_human_handoff(
        conversation=conversation, reason_code=HandoffReason.LOW_CONFIDENCE, reason=reason
    )
