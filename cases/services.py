"""The case state machine (specs/human-cases.md §3): every transition and its effects.

=================  ===================================  ===============  ==========================
from               trigger                              to               effects
=================  ===================================  ===============  ==========================
—                  ``open_human_case`` / fail-safe      awaiting_human   event ``opened``; team
                                                                         reminders armed; notice
awaiting_human     human ``resolved`` + text            resolved         ``human_replied`` +
                                                                         ``resolved``; relay turn
awaiting_human     human ``need_lead_info`` + text      awaiting_lead    ``human_replied``; relay
                                                                         turn; follow-up armed
awaiting_lead      ``provide_case_update`` (AI)         awaiting_human   ``lead_provided``; follow-
                                                                         up cancelled; new wait;
                                                                         team told
awaiting_lead      follow-up: N unanswered attempts     awaiting_lead    ``lead_unresponsive``
                                                                         flag + event
awaiting_human     human ``escalate`` + text            escalated        ``human_replied`` +
                                                                         ``escalated``; canonical
                                                                         handoff (§7)
any open           opt-out / conversation closed        cancelled        ``cancelled``; follow-ups
                                                                         cancelled
=================  ===================================  ===============  ==========================

"O humano decide" (§3) on a flagged case: an ``awaiting_lead`` case with the
``lead_unresponsive`` flag accepts the three human actions too. Anything else raises
``IllegalTransition`` and changes nothing.

Every function here is one transaction; it locks the case row it changes (so two people
answering at once get one success and one clear error), writes the events and the
AuditLog row, and schedules side effects (relay turn, notices) after commit.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import Organization
from accounts.services import audit_log_write
from cases.models import (
    OPEN_STATUSES,
    ActorKind,
    Case,
    CaseEvent,
    CaseEventKind,
    CaseFollowUp,
    CaseReminder,
    CaseSource,
    CaseStatus,
    FollowUpStatus,
    HumanAction,
    ReminderStatus,
)
from cases.selectors import notification_settings_for
from conversation.channels.base import service_window_open
from conversation.dispatch import enqueue
from conversation.handoff import perform_human_handoff
from conversation.models import (
    Conversation,
    ConversationStatus,
    HandoffReason,
    Message,
    SenderKind,
    Turn,
)
from conversation.outbox import outbound_enqueue

log = logging.getLogger(__name__)

SNAPSHOT_MESSAGES = 10
FOLLOW_UP_TEMPLATE_PURPOSE = "follow_up"


class CaseError(Exception):
    """A case action that cannot happen; ``message`` is pt-BR and safe to show."""

    code = "case_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class IllegalTransition(CaseError):
    code = "illegal_transition"


class InvalidCaseInput(CaseError):
    code = "invalid_input"


# (from status, trigger) → to status. Triggers: human actions, "lead_provided",
# "lead_unresponsive" and "cancel".
TRANSITIONS: dict[tuple[str, str], str] = {
    (CaseStatus.AWAITING_HUMAN, HumanAction.RESOLVED): CaseStatus.RESOLVED,
    (CaseStatus.AWAITING_HUMAN, HumanAction.NEED_LEAD_INFO): CaseStatus.AWAITING_LEAD,
    (CaseStatus.AWAITING_HUMAN, HumanAction.ESCALATE): CaseStatus.ESCALATED,
    (CaseStatus.AWAITING_LEAD, "lead_provided"): CaseStatus.AWAITING_HUMAN,
    (CaseStatus.AWAITING_LEAD, "lead_unresponsive"): CaseStatus.AWAITING_LEAD,
    (CaseStatus.AWAITING_HUMAN, "cancel"): CaseStatus.CANCELLED,
    (CaseStatus.AWAITING_LEAD, "cancel"): CaseStatus.CANCELLED,
}
# The team decides what happens to a case whose customer stopped answering.
FLAGGED_TRANSITIONS: dict[tuple[str, str], str] = {
    (CaseStatus.AWAITING_LEAD, HumanAction.RESOLVED): CaseStatus.RESOLVED,
    (CaseStatus.AWAITING_LEAD, HumanAction.NEED_LEAD_INFO): CaseStatus.AWAITING_LEAD,
    (CaseStatus.AWAITING_LEAD, HumanAction.ESCALATE): CaseStatus.ESCALATED,
}
TRIGGER_LABELS = {
    "lead_provided": "devolver a informação do cliente",
    "lead_unresponsive": "marcar o cliente como sem resposta",
    "cancel": "cancelar",
}


def next_status(current: str, trigger: str, *, lead_unresponsive: bool = False) -> str:
    """The status ``trigger`` leads to from ``current``, or ``IllegalTransition``."""
    target = TRANSITIONS.get((current, trigger))
    if target is None and lead_unresponsive:
        target = FLAGGED_TRANSITIONS.get((current, trigger))
    if target is None:
        label = (
            str(HumanAction(trigger).label)
            if trigger in HumanAction.values
            else TRIGGER_LABELS.get(trigger, trigger)
        )
        state = str(CaseStatus(current).label)
        raise IllegalTransition(f"Não é possível “{label}” num caso que está {state}.")
    return target


# --- opening -----------------------------------------------------------------------------


def build_context_snapshot(conversation: Conversation, *, turn_id: Any = None) -> dict[str, Any]:
    """What the team sees of the conversation when the case opened: from the real rows,
    never from the model's input."""
    rows = list(
        Message.objects.filter(conversation=conversation)
        .order_by("-created_at")
        .only("sender_kind", "body", "created_at")[:SNAPSHOT_MESSAGES]
    )
    contact = conversation.contact
    return {
        "conversation_id": str(conversation.pk),
        "channel_id": str(conversation.channel_id),
        "contact": {"id": str(contact.pk), "name": contact.name, "phone": contact.phone},
        "turn_id": str(turn_id) if turn_id else None,
        "messages": [
            {"from": m.sender_kind, "body": m.body[:1000], "at": m.created_at.isoformat()}
            for m in reversed(rows)
        ],
    }


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
        audit_log_write(
            organization=case.organization_id,
            actor=None,
            action="case.open",
            resource=case,
            diff={"source": source, "conversation_id": str(conversation.pk)},
            actor_kind="system",
        )
        _notify_team(event)
    log.info("case opened", extra={"case_id": str(case.pk), "source": source})
    return case


def has_open_case_for_lead(conversation: Conversation) -> bool:
    """Whether the conversation's lead has a case waiting (for the team or for them)."""
    return Case.objects.filter(
        organization_id=conversation.organization_id,
        lead_id=conversation.contact_id,
        status__in=OPEN_STATUSES,
    ).exists()


# --- the team answers --------------------------------------------------------------------


def case_answer(*, case: Case, actor: Any, action: str, text: str) -> CaseEvent:
    """A person answers the case with one of the three actions and a text.

    ``resolved`` and ``need_lead_info`` enqueue a ``case_reply_turn`` keyed by the
    ``human_replied`` event (the AI relays to the customer); ``escalate`` runs no AI turn:
    it hands the conversation to a human through the canonical handoff (§7). Locks the
    case row."""
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
        locked.status = target
        fields = ["status", "updated_at"]
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
            _event(locked, CaseEventKind.ESCALATED, actor_kind=ActorKind.HUMAN, actor_user=user)
            perform_human_handoff(
                conversation=locked.conversation,
                reason_code=HandoffReason.CASE_ESCALATED,
                reason=text,
                briefing_extra=escalation_briefing(locked, text),
                actor=actor,
            )
        audit_log_write(
            organization=locked.organization_id,
            actor=actor,
            action="case.answer",
            resource=locked,
            diff={"action": action, "from": previous, "to": target, "event_id": str(event.pk)},
        )
        if action != HumanAction.ESCALATE:
            from cases import tasks  # tasks import this module

            enqueue(tasks.run_case_reply_turn, str(event.pk))
    log.info("case answered", extra={"case_id": str(case.pk), "action": action})
    case.refresh_from_db()
    return event


def escalation_briefing(case: Case, text: str) -> str:
    """The case part of the handoff briefing (§7): what the AI opened and the team's
    answer. ``build_briefing`` adds the conversation's last lines after it."""
    return "\n".join(
        [
            f"Caso escalado #{case.short_id} (origem: caso_escalado, caso {case.pk})",
            f"Pedido: {case.title}",
            f"Resumo: {case.summary}",
            f"Bloqueio: {case.blocker}",
            f"Resposta da equipe: {text}",
        ]
    )


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
        locked.followup_attempts = 0
        locked.save(
            update_fields=[
                "status",
                "waiting_since",
                "lead_unresponsive",
                "followup_attempts",
                "updated_at",
            ]
        )
        _arm_reminders(locked, now)
        audit_log_write(
            organization=locked.organization_id,
            actor=None,
            action="case.lead_provided",
            resource=locked,
            diff={"event_id": str(event.pk), "fora_da_fronteira": outside},
            actor_kind="system",
        )
        if not outside:
            _notify_team(event)
    return event


def is_group(conversation: Conversation) -> bool:
    return conversation.contact.phone.endswith("@g.us")


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
        audit_log_write(
            organization=locked.organization_id,
            actor=None,
            action="case.cancel",
            resource=locked,
            diff={"reason": reason},
            actor_kind="system",
        )
    return True


# --- follow-ups with the customer (§3, §10.4) --------------------------------------------


def follow_up_delay() -> timedelta:
    return timedelta(hours=float(getattr(settings, "CASES_FOLLOW_UP_AFTER_HOURS", 4)))


def follow_up_max_attempts() -> int:
    return int(getattr(settings, "CASES_FOLLOW_UP_ATTEMPTS", 2))


def _arm_follow_up(case: Case, now: datetime) -> CaseFollowUp:
    follow_up = CaseFollowUp.objects.create(
        organization_id=case.organization_id,
        case=case,
        conversation_id=case.conversation_id,
        due_at=now + follow_up_delay(),
    )
    if settings.TASKS_IN_PROCESS:
        # No beat in the embedded default: the in-process runner fires it when due.
        from cases import tasks

        enqueue(
            tasks.run_follow_up_turn,
            str(follow_up.pk),
            countdown=follow_up_delay().total_seconds(),
        )
    return follow_up


def _cancel_follow_ups(case: Case, reason: str) -> int:
    return CaseFollowUp.objects.filter(case=case, status=FollowUpStatus.PENDING).update(
        status=FollowUpStatus.CANCELLED, cancel_reason=reason[:40]
    )


def due_follow_up_ids(organization_id: uuid.UUID, now: datetime, limit: int = 500) -> list[str]:
    rows = CaseFollowUp.objects.filter(
        organization_id=organization_id, status=FollowUpStatus.PENDING, due_at__lte=now
    )
    return [str(pk) for pk in rows.order_by("due_at").values_list("pk", flat=True)[:limit]]


def follow_up_conversation_id(follow_up_id: str) -> uuid.UUID | None:
    """The conversation of a still pending follow-up (the turn locks it), or None."""
    return (
        CaseFollowUp.objects.filter(pk=follow_up_id, status=FollowUpStatus.PENDING)
        .values_list("conversation_id", flat=True)
        .first()
    )


@dataclass
class FollowUpResult:
    sent: list[Message] = field(default_factory=list)
    trace: dict[str, Any] = field(default_factory=dict)


def follow_up_text(case: Case) -> str:
    request = case.lead_request.strip().rstrip(".")
    return (
        f"Oi! Para continuar com “{case.title}”, ainda preciso de uma informação sua: "
        f"{request}. Pode me responder por aqui?"
    )


def follow_up_fire(
    *, follow_up_id: str, conversation: Conversation, turn: Turn, now: datetime | None = None
) -> FollowUpResult:
    """The follow-up turn's decision (called under the conversation lock).

    * the case left ``awaiting_lead`` → nothing (cancelled);
    * the lead opted out or the conversation closed → the case is cancelled;
    * a human owns the conversation → nothing (cancelled);
    * the lead wrote since the check was armed → re-armed, no attempt spent;
    * ``N`` attempts already spent → ``lead_unresponsive`` flag + event;
    * else attempt ``n``: free text inside WhatsApp's 24-hour window; outside it the
      channel's approved ``follow_up`` template; without one nothing is sent and the
      case's timeline says so. The next check is armed either way.
    """
    now = now or timezone.now()
    result = FollowUpResult(trace={"follow_up_id": follow_up_id})
    follow_up = CaseFollowUp.objects.select_for_update(of=("self",)).filter(pk=follow_up_id).first()
    if follow_up is None or follow_up.status != FollowUpStatus.PENDING:
        result.trace["follow_up"] = "not_pending"
        return result
    case = Case.objects.select_for_update(of=("self",)).get(pk=follow_up.case_id)
    result.trace["case_id"] = str(case.pk)
    contact = conversation.contact

    def close(status: str, code: str, reason: str = "") -> FollowUpResult:
        follow_up.status, follow_up.fired_at = status, now
        follow_up.cancel_reason = reason[:40]
        follow_up.save(update_fields=["status", "fired_at", "cancel_reason", "template_name"])
        result.trace["follow_up"] = code
        _audit_system(case, "case.follow_up", {"follow_up_id": follow_up_id, "outcome": code})
        return result

    if case.status != CaseStatus.AWAITING_LEAD:
        return close(FollowUpStatus.CANCELLED, "case_not_awaiting_lead", "case_moved")
    if contact.opted_out_at is not None or conversation.status == ConversationStatus.CLOSED:
        reason = "opt_out" if contact.opted_out_at is not None else "closed"
        close(FollowUpStatus.CANCELLED, reason, reason)
        case_cancel(case=case, reason=reason)
        return result
    if contact.force_human or (
        conversation.bot_silenced_until is not None and conversation.bot_silenced_until > now
    ):
        return close(FollowUpStatus.CANCELLED, "human_owned", "human_owned")
    if conversation.last_inbound_at is not None and conversation.last_inbound_at > (
        follow_up.created_at
    ):
        close(FollowUpStatus.ANSWERED, "lead_wrote")
        _arm_follow_up(case, now)
        return result
    if case.followup_attempts >= follow_up_max_attempts():
        close(FollowUpStatus.FLAGGED, "lead_unresponsive")
        next_status(case.status, "lead_unresponsive")
        case.lead_unresponsive = True
        case.save(update_fields=["lead_unresponsive", "updated_at"])
        _event(
            case,
            CaseEventKind.LEAD_UNRESPONSIVE,
            actor_kind=ActorKind.SYSTEM,
            metadata={"attempts": case.followup_attempts, "follow_up_id": follow_up_id},
        )
        return result

    attempt = case.followup_attempts + 1
    metadata: dict[str, Any] = {"follow_up_id": follow_up_id, "attempt": attempt}
    body = ""
    if service_window_open(conversation.last_inbound_at, now):
        body = follow_up_text(case)
        result.sent.append(
            outbound_enqueue(
                conversation=conversation, body=body, sender_kind=SenderKind.SYSTEM, turn=turn
            )
        )
        status, metadata["delivery"] = FollowUpStatus.SENT, "text"
    else:
        template = follow_up_template(conversation)
        if template:
            body = case.lead_request[:500]
            result.sent.append(
                outbound_enqueue(
                    conversation=conversation,
                    body=body,
                    sender_kind=SenderKind.SYSTEM,
                    turn=turn,
                    template_name=template,
                )
            )
            follow_up.template_name = template
            status, metadata["delivery"] = FollowUpStatus.SENT, "template"
            metadata["template"] = template
        else:
            status, metadata["delivery"] = FollowUpStatus.NOT_SENT, "not_sent"
            metadata["reason"] = "outside_service_window_no_template"
            body = (
                "Follow-up não enviado: a janela de 24 horas do WhatsApp está fechada e o "
                "canal não tem um modelo aprovado de follow-up."
            )
    close(status, str(metadata["delivery"]))
    case.followup_attempts = attempt
    case.save(update_fields=["followup_attempts", "updated_at"])
    _event(
        case,
        CaseEventKind.LEAD_ASKED,
        actor_kind=ActorKind.SYSTEM,
        body=body,
        metadata=metadata,
    )
    _arm_follow_up(case, now)
    result.trace["attempt"] = attempt
    return result


def follow_up_template(conversation: Conversation) -> str:
    """The channel's approved template for follow-ups (``purpose == "follow_up"``)."""
    for entry in conversation.channel.templates or []:
        if isinstance(entry, dict) and entry.get("purpose") == FOLLOW_UP_TEMPLATE_PURPOSE:
            name = str(entry.get("name") or "").strip()
            if name:
                return name
    return ""


# --- reminders to the team (the stale-case watcher, §9) ----------------------------------


def _arm_reminders(case: Case, wait_started_at: datetime) -> int:
    """Schedule the organization's reminders for the wait that begins now."""
    config = notification_settings_for(case.organization_id)
    if not config.reminders_enabled:
        return 0
    step = timedelta(hours=config.reminder_after_hours)
    CaseReminder.objects.bulk_create(
        [
            CaseReminder(
                organization_id=case.organization_id,
                case=case,
                wait_started_at=wait_started_at,
                sequence=n,
                due_at=wait_started_at + step * n,
            )
            for n in range(1, config.reminder_count + 1)
        ],
        ignore_conflicts=True,
    )
    return config.reminder_count


def _cancel_reminders(case: Case) -> int:
    return CaseReminder.objects.filter(case=case, status=ReminderStatus.PENDING).update(
        status=ReminderStatus.CANCELLED
    )


def reminders_fire_due(*, organization_id: uuid.UUID, now: datetime | None = None) -> int:
    """The watcher: reminders of cases still waiting for the team, in the same wait, are
    fired (shown in the cases inbox); stale ones are cancelled. Idempotent."""
    now = now or timezone.now()
    due = CaseReminder.objects.filter(
        organization_id=organization_id, status=ReminderStatus.PENDING, due_at__lte=now
    )
    fired = stale = 0
    for reminder in due.select_related("case").order_by("due_at")[:1000]:
        case = reminder.case
        still_waiting = (
            case.status == CaseStatus.AWAITING_HUMAN
            and case.waiting_since == reminder.wait_started_at
        )
        new = ReminderStatus.FIRED if still_waiting else ReminderStatus.CANCELLED
        claimed = CaseReminder.objects.filter(pk=reminder.pk, status=ReminderStatus.PENDING).update(
            status=new, fired_at=now if still_waiting else None
        )
        fired += claimed if still_waiting else 0
        stale += 0 if still_waiting else claimed
    if fired or stale:
        audit_log_write(
            organization=organization_id,
            actor=None,
            action="case.reminders_sweep",
            resource=Organization(pk=organization_id),
            diff={"fired": fired, "stale_cancelled": stale},
            actor_kind="system",
        )
        log.info("case reminders fired", extra={"count": fired, "stale": stale})
    return fired


def reminders_reschedule(*, organization_id: uuid.UUID) -> int:
    """After the organization changes its cadence: the pending reminders of the cases
    waiting for the team follow the new cadence (same per-wait clock; reminders already
    fired in the current wait are not repeated)."""
    config = notification_settings_for(organization_id)
    step = timedelta(hours=config.reminder_after_hours)
    with transaction.atomic():
        dropped, _ = CaseReminder.objects.filter(
            organization_id=organization_id, status=ReminderStatus.PENDING
        ).delete()
        if not config.reminders_enabled:
            audit_log_write(
                organization=organization_id,
                actor=None,
                action="case.reminders_reschedule",
                resource=Organization(pk=organization_id),
                diff={"armed": 0, "dropped": dropped},
                actor_kind="system",
            )
            return 0
        waiting = list(
            Case.objects.filter(
                organization_id=organization_id, status=CaseStatus.AWAITING_HUMAN
            ).values_list("pk", "waiting_since")
        )
        fired = set(
            CaseReminder.objects.filter(
                organization_id=organization_id, case__status=CaseStatus.AWAITING_HUMAN
            ).values_list("case_id", "wait_started_at", "sequence")
        )
        new = [
            CaseReminder(
                organization_id=organization_id,
                case_id=case_id,
                wait_started_at=since,
                sequence=n,
                due_at=since + step * n,
            )
            for case_id, since in waiting
            for n in range(1, config.reminder_count + 1)
            if (case_id, since, n) not in fired
        ]
        CaseReminder.objects.bulk_create(new, ignore_conflicts=True, batch_size=1000)
        audit_log_write(
            organization=organization_id,
            actor=None,
            action="case.reminders_reschedule",
            resource=Organization(pk=organization_id),
            diff={"armed": len(new), "cases": len(waiting)},
            actor_kind="system",
        )
    return len(new)


# --- internals ---------------------------------------------------------------------------


def _event(
    case: Case,
    kind: str,
    *,
    actor_kind: str,
    actor_user: Any = None,
    human_action: str = "",
    body: str = "",
    metadata: dict[str, Any] | None = None,
) -> CaseEvent:
    return CaseEvent.objects.create(
        organization_id=case.organization_id,
        case=case,
        kind=kind,
        actor_kind=actor_kind,
        actor_user=actor_user,
        human_action=human_action,
        body=body,
        metadata=metadata or {},
    )


def _audit_system(case: Case, action: str, diff: dict[str, Any]) -> None:
    audit_log_write(
        organization=case.organization_id,
        actor=None,
        action=action,
        resource=case,
        diff=diff,
        actor_kind="system",
    )


def _notify_team(event: CaseEvent) -> None:
    """The opt-in WhatsApp notice (one per event): decided and logged by the task."""
    from cases import tasks

    enqueue(tasks.deliver_case_notice, str(event.pk))
