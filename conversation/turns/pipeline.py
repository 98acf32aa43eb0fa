"""The three turns, each read top to bottom: claim, decide, finish.

    inbound:    guards (opt-out · human owns) → route (the turn's agent) → guard (handoff
                keywords) → runtime, else orchestrator → the before-send gates → outbox
    case reply: guards → the case's agent relays a person's answer (orchestrator)
    follow-up:  the case services nudge the customer or flag the case (``follow_up``)

A turn is keyed by its trigger (unique kind + key); its trace holds ids and codes, never the
customer's text. No database lock is held across the network (DESIGN §5). Three steps:

1. **Claim** — one short transaction (``claim``): lock the conversation row
   (``FOR NO KEY UPDATE``), refuse while another turn of the conversation is active, insert
   the turn with a lease (``lease_token``, ``lease_expires_at``), take its lines (the burst:
   ``burst``) and commit. The guards that need no network (opt-out, a human owns the
   conversation, a line left past the service window) decide here and finish the turn in
   the same transaction.
2. **Decide** — no transaction open; each read is a short transaction of its own with the
   organization's walls (``tenancy``): routing, the runtime and the orchestrator's model
   calls, each of which renews the lease (``_LeaseKeeper``). Nothing the turn says or does
   is written yet: texts, the handoff and the runtime's state are effects on the context
   (``TurnContext.defer``), so a webhook never waits for a running turn, and an attempt that
   dies here leaves nothing behind. (A case the model opens through the case tools is
   written when the tool runs; a re-driven turn sees it among the open cases.)
3. **Finish** — one short transaction: the outcome by a conditional UPDATE on the turn's
   own ``lease_token`` (``claim.finish``; a claim taken over writes nothing), then the
   effects in order (outbox rows, handoff, runtime state), the model-call ledger and the
   conversation's ``last_message_at``.

Turns of one conversation never interleave (one active turn per conversation, checked under
the row lock) and never answer twice (the unique trigger; the lease fence). A turn whose
worker died or hangs is re-driven by the sweeper one lease after its last sign of life; an
attempt failing in its claim counts too (``claim.count_failed_claim``); after
``TURN_MAX_ATTEMPTS`` the conversation goes to the team.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from cases import reentry as case_reentry
from cases import services as case_services
from conversation import model_calls
from conversation.agents import AgentConfig, generic_agent_config
from conversation.llm.base import CallRecord
from conversation.models import (
    Conversation,
    Direction,
    Message,
    TriggerKind,
    Turn,
    TurnOutcome,
    TurnStatus,
)
from conversation.outbox.presence import turn_presence
from routers.turn_routing import route_turn

from . import claim as claims
from .budget import budget_gate
from .burst import Burst, split_bursts
from .claim import Claim, LeaseLost
from .context import TurnContext, new_context
from .guards import (
    attempts_exhausted,
    handoff_keyword_guard,
    human_owned_guard,
    opt_out_guard,
    opted_out_guard,
    past_service_window_guard,
    reaction_only_guard,
    staff_case_answer_guard,
)
from .orchestration import loop_outcome, loop_trace, run_orchestrator
from .runtime_step import runtime_step
from .tools import Vetoed, send_through_gates

log = logging.getLogger(__name__)

# A burst's re-check is scheduled this much after it closes, so it finds it closed.
DUE_SLACK_S = 0.05


def run_inbound_turn(message_id: str) -> Turn | None:
    """Answer the customer's message (and the lines typed with it). Idempotent."""
    now = timezone.now()
    claimed: tuple[Claim, list[Message]] | Turn | None = None
    try:
        with transaction.atomic():
            claimed = _claim_inbound(message_id, now)
            if not isinstance(claimed, tuple):
                return claimed  # nothing to do now, or a line another turn answered (merged)
            claim, batch = claimed
            ctx = new_context(claim.conversation, claim.turn, batch, trace={"batch": len(batch)})
            if claim.exhausted:
                return _finish(ctx, claim, attempts_exhausted(ctx), status=TurnStatus.FAILED)
            guarded = (
                reaction_only_guard(ctx)
                or staff_case_answer_guard(ctx)
                or opt_out_guard(ctx, ctx.customer_text(), now)
                or human_owned_guard(ctx, now, touch_handoff=True)
                or past_service_window_guard(ctx, now)
            )
            if guarded is not None:
                return _finish(ctx, claim, guarded)
    except claims.ClaimRefused as refused:
        refused.follow_up()
        return None
    except Exception as error:
        if isinstance(claimed, tuple):
            claims.count_failed_claim(error, lambda: _claim_inbound(message_id, now))
        raise
    # Read receipt and "digitando..." while the turn thinks: best effort, never blocks it.
    with turn_presence(claim.conversation, batch):
        return _decide_and_finish(ctx, claim, _decide_inbound)


def _claim_inbound(message_id: str, now: datetime) -> tuple[Claim, list[Message]] | Turn | None:
    """The claim of an inbound turn (see ``burst``): the oldest burst of unanswered lines,
    once it has closed, by the task of one of its lines. A line whose burst is still open
    schedules a re-check for when it closes (its last line does); a line answered by
    another turn is recorded ``merged``; a line behind an older closed burst answers that
    burst first (keyed by its last line) and comes back for its own."""
    kind = TriggerKind.INBOUND
    locked = claims.lock_conversation(kind, message_id, messages__pk=message_id)
    if locked is None:
        return None  # the message vanished
    conversation = locked.conversation
    if locked.already_turned:
        claim = claims.reclaim(conversation, kind, message_id, now)
        if claim is None:
            return None  # a redelivered task: it had its turn, or its turn is running
        batch = list(claim.turn.messages.filter(direction=Direction.INBOUND).order_by("created_at"))
        return claim, batch + _absorb_closed_lines(claim, now)
    if locked.busy:
        claims.wait_for_active_turn(conversation, kind, message_id, now)
        return None
    unanswered = _unanswered(conversation)
    mine = next((m for m in unanswered if str(m.pk) == message_id), None)
    if mine is None and len(unanswered) < claims.MAX_UNANSWERED:
        return claims.create_turn(conversation, kind, message_id, now, merged=True).turn
    first = _bursts(unanswered)[0]
    key = message_id
    if mine is not None and mine in first.lines:
        if not first.closed(now):
            if mine is first.last:
                wait = max((first.due_at - now).total_seconds(), 0.0) + DUE_SLACK_S
                claims.redrive(kind, message_id, countdown=wait)
            return None
    else:
        key = str(first.last.pk)
        claims.redrive(kind, message_id)  # its own burst, after this one
    claim = claims.create_turn(conversation, kind, key, now)
    batch = list(first.lines)
    Message.objects.filter(pk__in=[m.pk for m in batch]).update(turn=claim.turn)
    return claim, batch


def _unanswered(conversation: Conversation) -> list[Message]:
    return claims.unanswered_lines(conversation.pk)


def _bursts(lines: list[Message]) -> list[Burst[Message]]:
    return split_bursts(
        lines,
        window=timedelta(seconds=settings.TURN_BURST_WINDOW_S),
        max_span=timedelta(seconds=settings.TURN_BURST_MAX_S),
    )


def _absorb_closed_lines(claim: Claim, now: datetime) -> list[Message]:
    """A re-driven turn also answers the lines that came (and closed) while it waited."""
    lines = [m for b in _bursts(_unanswered(claim.conversation)) if b.closed(now) for m in b.lines]
    if lines:
        Message.objects.filter(pk__in=[m.pk for m in lines]).update(turn=claim.turn)
    return lines


def _decide_inbound(ctx: TurnContext) -> str:
    text = ctx.customer_text()
    # Route: the turn's agent.
    agent = resolve_turn_agent(ctx)
    _use_agent(ctx, agent)

    guarded = handoff_keyword_guard(ctx, text, agent)
    if guarded is not None:
        return guarded

    # Agent: the conversation runtime answers the turns it covers; else the orchestrator.
    if _run_runtime(ctx, agent):
        return TurnOutcome.RUNTIME
    if ctx.handed_off:  # the runtime's reply was a promise the agent cannot back: handed off
        return TurnOutcome.HANDOFF
    loop = run_orchestrator(ctx, agent)
    ctx.trace["loop"] = loop_trace(loop)
    return loop_outcome(ctx, loop)


def resolve_turn_agent(ctx: TurnContext) -> AgentConfig:
    """The agent that answers this turn: the channel's router when it has an active one
    (stickiness, classification, fallback; one RouterDecision per routed turn), else the
    channel's published agent; with neither, the generic assistant. Never raises."""
    conversation = ctx.conversation
    routed = route_turn(
        conversation=conversation,
        turn=ctx.turn,
        signal=ctx.customer_text() or None,  # no customer text (a case reply): no classifying
        recorder=ctx.ledger,
    )
    ctx.trace["route"] = routed.trace()
    return routed.config or generic_agent_config(
        conversation.organization.name, conversation.organization.settings
    )


def _use_agent(ctx: TurnContext, agent: AgentConfig) -> None:
    ctx.agent = agent
    ctx.trace["agent_id"] = str(agent.agent_id) if agent.agent_id else None
    ctx.trace["agent_version_id"] = str(agent.version_id) if agent.version_id else None


def _run_runtime(ctx: TurnContext, agent: AgentConfig) -> bool:
    """The deterministic dialogue layer (``runtime_step``); True when it answered. Shadow
    mode and fallbacks return False: the orchestrator answers (with the runtime's note only
    on a live fallback). A vetoed reply is not an answer either. What the runtime made real
    (its state, its action log) is written by the finish."""
    step = runtime_step(
        conversation=ctx.conversation,
        turn=ctx.turn,
        agent=agent,
        text=ctx.customer_text(),
        batch_ids=[m.pk for m in ctx.batch],
        ledger=ctx.ledger,
    )
    if step is None:
        return False
    ctx.trace["runtime"] = step.trace
    answered = False
    if step.reply is not None:
        sent = send_through_gates(
            ctx,
            step.reply.text,
            script_id=step.reply.script_id,
            script_version=step.reply.script_version,
        )
        answered = not isinstance(sent, Vetoed)
    ctx.defer(step.commit(answered=answered))
    if not answered:
        ctx.runtime_note = step.orchestrator_note
    return answered


# --- cases re-entering the conversation (human-cases §4.3, §3) ----------------------------


def run_case_reply_turn(event_id: str) -> Turn | None:
    """Relay a person's case answer to the customer. Keyed by the ``human_replied`` event:
    a redelivered task never sends twice."""
    now, kind = timezone.now(), TriggerKind.CASE_REPLY
    claim: Claim | None = None
    try:
        with transaction.atomic():
            reply = case_reentry.load_reply(event_id)
            if reply is None:
                return None
            claim = claims.claim_trigger(kind, event_id, now, pk=reply.conversation_id)
            if claim is None:
                return None
            trace = {"case_id": str(reply.case.pk), "human_action": reply.event.human_action}
            ctx = new_context(claim.conversation, claim.turn, [], trace=trace)

            def record_relay() -> None:
                case_services.case_record_relay(
                    case=reply.case, event=reply.event, sent=ctx.messages, turn=claim.turn
                )

            if claim.exhausted:
                return _finish(ctx, claim, attempts_exhausted(ctx), status=TurnStatus.FAILED)
            guarded = opted_out_guard(ctx) or human_owned_guard(ctx, touch_handoff=False)
            if guarded is not None:
                return _finish(ctx, claim, guarded, after=record_relay)
    except claims.ClaimRefused as refused:
        refused.follow_up()
        return None
    except Exception as error:
        claims.count_failed_trigger_claim(error, claim, kind, event_id, now)  # as inbound
        raise
    return _decide_and_finish(
        ctx, claim, lambda c: _decide_case_reply(c, reply), after=record_relay
    )


def _decide_case_reply(ctx: TurnContext, reply: case_reentry.CaseReply) -> str:
    agent = case_reentry.turn_agent(reply, ctx.conversation)
    _use_agent(ctx, agent)
    # The offline model relays deterministically ([RELAY] lines); a real model composes.
    relay = model_calls.provider_name(agent.provider) == "offline"
    ctx.reentry = case_reentry.reentry_block(reply, relay=relay)
    loop = run_orchestrator(ctx, agent)
    ctx.trace["loop"] = loop_trace(loop, detail=False)
    return loop_outcome(ctx, loop)


# --- the lease and the finish, shared by the turns ------------------------------------------


class _LeaseKeeper(model_calls.Ledger):
    """The turn's model-call ledger, and its heartbeat: the decide step's time goes to model
    calls, each reported here; after one, once a third of the lease is spent, the lease is
    extended (a conditional UPDATE on the claim's token). A live turn slower in all than
    ``TURN_LEASE_S`` (many steps, a slow model; thread pools enforce no Celery time limit)
    is never presumed dead and decided again by another worker."""

    def __init__(self, ledger: model_calls.Ledger, claim: Claim) -> None:
        self.__dict__.update(vars(ledger))  # the turn's ledger as it is: ids, provider, records
        self._claim, self._until = claim, claim.turn.lease_expires_at or timezone.now()

    def __call__(self, record: CallRecord) -> None:
        super().__call__(record)
        now, lease = timezone.now(), claims.lease_length()
        if self._until - now > lease * 2 / 3:
            return
        pk, token = self._claim.turn.pk, self._claim.token
        mine = Turn.objects.filter(pk=pk, lease_token=token, status=TurnStatus.RUNNING)
        if mine.update(lease_expires_at=now + lease):  # a database error: the client logs it
            self._until = now + lease
        else:
            log.warning("turn lease lost while deciding", extra={"turn_id": str(pk)})


def _decide_and_finish(
    ctx: TurnContext,
    claim: Claim,
    decide: Callable[[TurnContext], str],
    *,
    after: Callable[[], None] | None = None,
) -> Turn | None:
    """Step 2 with no transaction open (the lease renewed by ``_LeaseKeeper``), then step 3.
    An attempt that fails unexpectedly gives its lease back: its next delivery takes over."""
    ctx.ledger = _LeaseKeeper(ctx.ledger, claim)
    try:
        with budget_gate(ctx) as stopped:  # analytics budgets: offline model or handoff
            outcome = stopped or decide(ctx)
        return _finish(ctx, claim, outcome, after=after)
    except LeaseLost:
        log.warning("turn lost its claim: its outcome is dropped", extra=ctx.ids)
        return None
    except BaseException:
        claims.release(claim)
        raise


def _finish(
    ctx: TurnContext,
    claim: Claim,
    outcome: str,
    *,
    after: Callable[[], None] | None = None,
    status: str = TurnStatus.DONE,
) -> Turn:
    """Step 3: the outcome under the claim, then the turn's effects — one transaction."""
    retrying = ctx.retry_at is not None
    agent = ctx.agent
    with transaction.atomic():
        turn = claims.finish(
            claim,
            outcome=outcome,
            trace=ctx.finished_trace(),
            agent_version_id=agent.version_id if agent else None,
            error_code=ctx.turn.error_code,
            status=TurnStatus.RETRY if retrying else status,
            retry_at=ctx.retry_at,
        )
        ctx.apply_effects()
        ctx.ledger.flush()
        if ctx.messages:
            ctx.conversation.save(update_fields=["last_message_at"])
        if after is not None and not retrying:
            after()
    return turn
