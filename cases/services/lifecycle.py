"""A case's life (§3): opened, answered by the team, brought back by the customer's answer,
cancelled. Each function is one transaction that locks the case row it changes."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.services import audit_log_write
from cases.guardrail import GuardContext, run_guard_chain
from cases.models import (
    OPEN_STATUSES,
    ActorKind,
    AttentionReason,
    Case,
    CaseEvent,
    CaseEventKind,
    CaseSource,
    CaseStatus,
    HumanAction,
)
from cases.selectors import build_context_snapshot, has_open_case_in_conversation, is_group
from conversation.dispatch import enqueue
from conversation.handoff import perform_human_handoff
from conversation.models import Conversation, HandoffReason, Message, SenderKind, Turn
from conversation.outbox import outbound_enqueue

from ._records import _audit_system, _event, _notify_team
from .follow_up_schedule import _arm_follow_up, _cancel_follow_ups
from .reminders import _arm_reminders, _cancel_reminders
from .state_machine import InvalidCaseInput, next_status
from .texts import escalated_customer_notice, escalation_briefing

log = logging.getLogger(__name__)


# --- opening -----------------------------------------------------------------------------


def case_open(
    *,
    conversation: Conversation,
    title: str,
    summary: str,
    blocker: str,
    source: str = CaseSource.AGENT,
    agent_id: uuid.UUID | None = None,
    turn_id: uuid.UUID | None = None,
) -> Case:
    """Open a case for the conversation's lead (status ``awaiting_human``). The
    conversation with the lead goes on: nothing here silences the AI."""
    CaseSource(source)
    title, summary, blocker = title.strip(), summary.strip(), blocker.strip()
    if not (title and summary and blocker):
        raise InvalidCaseInput("Título, resumo e bloqueio são obrigatórios.")
    now = timezone.now()
    with transaction.atomic():
        case = Case.objects.create(
            organization_id=conversation.organization_id,
            conversation=conversation,
            lead_id=conversation.contact_id,
            agent_id=agent_id,
            status=CaseStatus.AWAITING_HUMAN,
            title=title[:200],
            summary=summary,
            blocker=blocker,
            context_snapshot=build_context_snapshot(conversation, turn_id=turn_id),
            source=source,
            waiting_since=now,
            opened_at=now,
        )
        event = _event(
            case,
            CaseEventKind.OPENED,
            actor_kind=ActorKind.AGENT if source == CaseSource.AGENT else ActorKind.SYSTEM,
            metadata={"source": source, "turn_id": str(turn_id) if turn_id else None},
        )
        _arm_reminders(case, now)
        _audit_system(
            case, "case.open", {"source": source, "conversation_id": str(conversation.pk)}
        )
        _notify_team(event)
    log.info("case opened", extra={"case_id": str(case.pk), "source": source})
    return case


# --- the team answers --------------------------------------------------------------------


def case_answer(*, case: Case, actor: Any, action: str, text: str) -> CaseEvent:
    """A person answers the case with one of the three actions and a text.

    ``resolved`` and ``need_lead_info`` enqueue a ``case_reply_turn`` keyed by the
    ``human_replied`` event (the AI relays to the customer); ``escalate`` runs no AI turn:
    it tells the customer a person takes over (a fixed pt-BR line through the outbox, sent
    while the case is still open: the handoff backs it) and hands the conversation to a
    human through the canonical handoff (§7). Any answer clears the case's ``attention``.
    Locks the case row."""
    if action not in HumanAction.values:
        raise InvalidCaseInput("Escolha uma das três ações.")
    text = (text or "").strip()
    if not text:
        raise InvalidCaseInput("Escreva o texto da resposta para a IA.")
    if len(text) > 4000:
        raise InvalidCaseInput("A resposta passa de 4000 caracteres.")
    with transaction.atomic():
        locked = (
            Case.objects.select_for_update(of=("self",))
            .select_related("conversation", "conversation__contact", "organization")
            .get(pk=case.pk)
        )
        previous = locked.status
        target = next_status(previous, action, lead_unresponsive=locked.lead_unresponsive)
        now = timezone.now()
        user = actor if getattr(actor, "is_authenticated", False) else None
        event = _event(
            locked,
            CaseEventKind.HUMAN_REPLIED,
            actor_kind=ActorKind.HUMAN,
            actor_user=user,
            human_action=action,
            body=text,
            metadata={"from_status": previous},
        )
        _cancel_follow_ups(locked, f"human_{action}")
        _cancel_reminders(locked)
        # Told while the case is still open: the promise gate accepts the line because
        # this open case (and the handoff that follows) backs it.
        told = _tell_customer_escalated(locked) if action == HumanAction.ESCALATE else None
        locked.status = target
        locked.attention = AttentionReason.NONE
        fields = ["status", "attention", "updated_at"]
        if action == HumanAction.NEED_LEAD_INFO:
            locked.lead_request = text
            locked.waiting_since = now
            locked.followup_attempts = 0
            locked.lead_unresponsive = False
            fields += ["lead_request", "waiting_since", "followup_attempts", "lead_unresponsive"]
            _arm_follow_up(locked, now)
        else:
            locked.closed_at = now
            fields.append("closed_at")
        locked.save(update_fields=fields)
        if action == HumanAction.RESOLVED:
            _event(locked, CaseEventKind.RESOLVED, actor_kind=ActorKind.HUMAN, actor_user=user)
        if action == HumanAction.ESCALATE:
            _event(
                locked,
                CaseEventKind.ESCALATED,
                actor_kind=ActorKind.HUMAN,
                actor_user=user,
                body=told.body if told else "",
                metadata={"customer_notice_id": str(told.pk) if told else None},
            )
            perform_human_handoff(
                conversation=locked.conversation,
                reason_code=HandoffReason.CASE_ESCALATED,
                reason=text,
                briefing_extra=escalation_briefing(locked, text),
                actor=actor,
            )
        audit_log_write(
            actor=actor,
            action="case.answer",
            resource=locked,
            diff={"action": action, "from": previous, "to": target, "event_id": str(event.pk)},
        )
        if action != HumanAction.ESCALATE:
            enqueue("cases.run_case_reply_turn", str(event.pk))
    log.info("case answered", extra={"case_id": str(case.pk), "action": action})
    case.refresh_from_db()
    return event


def _tell_customer_escalated(case: Case) -> Message | None:
    """The customer is told a person takes over (issue 16 item 11), through the outbox like
    the case's other system lines. Not to an opted-out contact. The line promises a
    person's action, so it passes the promise gate's chain like any AI text: called while
    the case is still open, the gate accepts it (and the handoff that follows backs it)."""
    conversation = case.conversation
    if conversation.contact.opted_out_at is not None:
        return None
    body = escalated_customer_notice(case)
    verdict = run_guard_chain(
        GuardContext(
            body=body,
            has_open_case_for_lead=has_open_case_in_conversation(conversation),
            case_opened_this_turn=False,
            prior_vetoes_this_turn=0,
            cases_enabled=True,
        )
    )
    if not verdict.sends:  # cannot happen while the case is open; never send it unbacked
        log.error("escalation notice vetoed", extra={"case_id": str(case.pk)})
        return None
    return outbound_enqueue(conversation=conversation, body=body, sender_kind=SenderKind.SYSTEM)


def case_record_relay(
    *, case: Case, event: CaseEvent, sent: Sequence[Message], turn: Turn
) -> CaseEvent | None:
    """After a relay turn: a ``need_lead_info`` relay is the AI asking the lead."""
    if event.human_action != HumanAction.NEED_LEAD_INFO:
        return None
    with transaction.atomic():
        asked = _event(
            case,
            CaseEventKind.LEAD_ASKED,
            actor_kind=ActorKind.AGENT,
            body="\n".join(m.body for m in sent),
            metadata={
                "turn_id": str(turn.pk),
                "sent": bool(sent),
                "reply_event_id": str(event.pk),
            },
        )
        _audit_system(case, "case.lead_asked", {"event_id": str(asked.pk), "sent": bool(sent)})
    return asked


# --- the AI brings the customer's answer ------------------------------------------------


def case_provide_update(
    *, case: Case, conversation: Conversation, info: str, turn_id: uuid.UUID | None = None
) -> CaseEvent:
    """``provide_case_update``: only from ``awaiting_lead``, only for the lead of the
    turn's own conversation. The case goes back to the team, the follow-up is cancelled
    and the per-wait clock restarts. Locks the case row.

    An answer that arrives outside the conversation the question was asked in (another
    conversation of the same lead), or in a group, is recorded with
    ``metadata.fora_da_fronteira`` and sends no notice to the team (§9)."""
    info = (info or "").strip()
    if not info:
        raise InvalidCaseInput("Informe o que o cliente respondeu.")
    with transaction.atomic():
        locked = Case.objects.select_for_update(of=("self",)).filter(pk=case.pk).first()
        if (
            locked is None
            or locked.organization_id != conversation.organization_id
            or locked.lead_id != conversation.contact_id
        ):
            raise InvalidCaseInput("Caso não encontrado para este cliente.")
        if locked.status == CaseStatus.AWAITING_HUMAN and locked.attention in BACK_WITHOUT_ANSWER:
            # The watcher brought it back to the team before the AI relayed the answer:
            # record it; the case stays with the team.
            target: str = CaseStatus.AWAITING_HUMAN
        else:
            target = next_status(locked.status, "lead_provided")
        now = timezone.now()
        outside = locked.conversation_id != conversation.pk or is_group(conversation)
        event = _event(
            locked,
            CaseEventKind.LEAD_PROVIDED,
            actor_kind=ActorKind.LEAD,
            body=info,
            metadata={
                "turn_id": str(turn_id) if turn_id else None,
                "conversation_id": str(conversation.pk),
                "fora_da_fronteira": outside,
            },
        )
        _cancel_follow_ups(locked, "lead_provided")
        locked.status = target
        locked.waiting_since = now
        locked.lead_unresponsive = False
        locked.attention = AttentionReason.NONE
        locked.followup_attempts = 0
        _cancel_reminders(locked)
        locked.save(
            update_fields=[
                "status",
                "waiting_since",
                "lead_unresponsive",
                "attention",
                "followup_attempts",
                "updated_at",
            ]
        )
        _arm_reminders(locked, now)
        _audit_system(
            locked, "case.lead_provided", {"event_id": str(event.pk), "fora_da_fronteira": outside}
        )
        if not outside:
            _notify_team(event)
    return event


# --- back to the team (the watcher, the spent follow-ups) -----------------------------------

# Reasons a case came back to the team before the customer's answer reached it.
BACK_WITHOUT_ANSWER = (AttentionReason.LEAD_ANSWERED, AttentionReason.LEAD_UNRESPONSIVE)


def _back_to_team(
    locked: Case,
    *,
    trigger: str,
    reason: AttentionReason,
    kind: CaseEventKind,
    body: str = "",
    metadata: dict[str, Any] | None = None,
) -> CaseEvent:
    """Move a case waiting on the customer's side to the team's queue ("Esperando você"):
    a new wait (its reminders armed), the reason shown on the page, an event, the team's
    notice and the system's audit row. The caller holds the case row's lock."""
    previous = locked.status
    target = next_status(previous, trigger)
    now = timezone.now()
    _cancel_follow_ups(locked, trigger)
    locked.status = target
    locked.attention = reason
    locked.waiting_since = now
    fields = ["status", "attention", "waiting_since", "updated_at"]
    if reason == AttentionReason.LEAD_UNRESPONSIVE:
        locked.lead_unresponsive = True
        fields.append("lead_unresponsive")
    locked.save(update_fields=fields)
    event = _event(
        locked,
        kind,
        actor_kind=ActorKind.SYSTEM,
        body=body,
        metadata={**(metadata or {}), "reason": reason.value, "from_status": previous},
    )
    _arm_reminders(locked, now)
    _audit_system(
        locked,
        "case.back_to_team",
        {"reason": reason.value, "from": previous, "to": target, "event_id": str(event.pk)},
    )
    _notify_team(event)
    log.info("case back to the team", extra={"case_id": str(locked.pk), "reason": reason.value})
    return event


# --- cancelling --------------------------------------------------------------------------


def case_cancel(*, case: Case, reason: str) -> bool:
    """Cancel an open case (opt-out, conversation closed). Returns False when the case
    was not open any more. Locks the case row."""
    with transaction.atomic():
        locked = Case.objects.select_for_update(of=("self",)).filter(pk=case.pk).first()
        if locked is None or locked.status not in OPEN_STATUSES:
            return False
        next_status(locked.status, "cancel")
        locked.status = CaseStatus.CANCELLED
        locked.closed_at = timezone.now()
        locked.save(update_fields=["status", "closed_at", "updated_at"])
        _cancel_follow_ups(locked, reason)
        _cancel_reminders(locked)
        _event(
            locked,
            CaseEventKind.CANCELLED,
            actor_kind=ActorKind.SYSTEM,
            metadata={"reason": reason},
        )
        _audit_system(locked, "case.cancel", {"reason": reason})
    return True
