"""The follow-up turn: a case waiting for the customer is due a nudge (human-cases §3).

No network and no model: claim, the case services' decision and the finish are one short
transaction. Otherwise it is a turn like the others (``pipeline``): keyed by the follow-up
row, it ends quietly when its claim was taken over (``LeaseLost``), an attempt that fails
after its claim still counts (``claim.count_failed_claim``), and once ``TURN_MAX_ATTEMPTS``
are spent the conversation goes to the team (``guards.to_the_team``) instead of the beat
firing a follow-up that fails every minute with nobody told.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from cases import services as case_services
from conversation.models import TriggerKind, Turn, TurnOutcome, TurnStatus

from . import claim as claims
from .claim import Claim, LeaseLost
from .guards import GAVE_UP_REASON, to_the_team

log = logging.getLogger(__name__)


def run_follow_up_turn(follow_up_id: str) -> Turn | None:
    """A case waiting for the customer is due a follow-up: nudge them (inside WhatsApp's
    24-hour window, or with the channel's template), or flag the case once the attempts are
    spent. Keyed by the follow-up row. No network: one short transaction."""
    now, kind = timezone.now(), TriggerKind.FOLLOW_UP
    claim: Claim | None = None
    try:
        with transaction.atomic():
            conversation_id = case_services.follow_up_conversation_id(follow_up_id)
            if conversation_id is None:
                return None  # cancelled, already fired, or vanished
            claim = claims.claim_trigger(kind, follow_up_id, now, pk=conversation_id)
            if claim is None:
                return None
            if claim.exhausted:
                return _give_up(claim)
            conversation = claim.conversation
            result = case_services.follow_up_fire(
                follow_up_id=follow_up_id, conversation=conversation, turn=claim.turn
            )
            if result.sent:
                conversation.save(update_fields=["last_message_at"])
            outcome = TurnOutcome.REPLIED if result.sent else TurnOutcome.NO_REPLY
            return claims.finish(claim, outcome=outcome, trace=result.trace)
    except claims.ClaimRefused as refused:
        refused.follow_up()
        return None
    except LeaseLost:
        # Taken over meanwhile: the other attempt owns the follow-up; nothing of this one
        # was written (the finish raised inside the transaction).
        turn_id = str(claim.turn.pk) if claim is not None else ""
        log.warning("turn lost its claim: its outcome is dropped", extra={"turn_id": turn_id})
        return None
    except Exception as error:
        claims.count_failed_trigger_claim(error, claim, kind, follow_up_id, now)  # as inbound
        raise


def _give_up(claim: Claim) -> Turn:
    """Every attempt failed: the turn ends ``failed`` and the conversation goes to the team
    (its handoff cancels the case's pending follow-ups, so the beat stops firing this one).
    No notice to the customer: they asked nothing."""
    attempts = claim.turn.attempts
    ids = {"turn_id": str(claim.turn.pk), "conversation_id": str(claim.conversation.pk)}
    log.error("follow-up turn gave up after its attempts", extra={**ids, "attempts": attempts})
    turn = claims.finish(
        claim,
        outcome=TurnOutcome.HANDOFF,
        trace={"gave_up": {"attempts": attempts}, "handoff": "attempts_exhausted"},
        error_code="attempts_exhausted",
        status=TurnStatus.FAILED,
    )
    to_the_team(claim.conversation, GAVE_UP_REASON)
    return turn
