"""Telling the team outside the screen (human-cases §9): the WhatsApp notice, on by default
once the organization has a team number and a channel that sends it.

One notice per case event (``CaseNotice.event`` is unique): when a case opens, each time
the customer answers what the team asked, and when a case comes back to the team's queue
(the customer stopped answering; the AI did not bring an answer back). Every notice says
how to answer from WhatsApp (``cases.staff_replies``). Every delivery attempt is logged
(``CaseNoticeAttempt``). The notice goes out of business hours on purpose — the window
protects the customer; the team is internal.

What does NOT exist (§9): no notice for an answer that arrived outside the conversation
the question was asked in (``metadata.fora_da_fronteira``) nor for a group's case; the
answer is recorded, the case goes back to the team and the stale-case watcher keeps
reminding in the cases inbox. There is no realtime push either (§4.1): the inbox polls.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from accounts.services import audit_log_write
from cases.models import (
    CaseEvent,
    CaseEventKind,
    CaseNotice,
    CaseNoticeAttempt,
    CaseNotificationSettings,
    NoticeKind,
    NoticeStatus,
)
from cases.selectors import notification_settings_for
from cases.services import reminders_reschedule
from conversation.channels import get_adapter
from conversation.channels.base import SendError
from conversation.outbox import channel_config

log = logging.getLogger(__name__)

MAX_NOTICE_ATTEMPTS = 3
NOTICE_BACKOFF_S = 30
NOTICE_TEMPLATE_PURPOSE = "case_notice"
KIND_OF_EVENT = {
    CaseEventKind.OPENED: NoticeKind.CASE_OPENED,
    CaseEventKind.LEAD_PROVIDED: NoticeKind.LEAD_PROVIDED,
    # The case came back to the team's queue (issue 12: no case waits unseen).
    CaseEventKind.LEAD_UNRESPONSIVE: NoticeKind.BACK_TO_TEAM,
    CaseEventKind.STALLED: NoticeKind.BACK_TO_TEAM,
}
# How to answer from WhatsApp (``cases.staff_replies``), at the end of every notice.
ANSWER_HOWTO = (
    "Para responder daqui (do seu número cadastrado): #{ref} 1 texto = concluí · "
    "#{ref} 2 texto = preciso de info do cliente · #{ref} 3 texto = escalar."
)
BACK_TO_TEAM_WHY = {
    "lead_unresponsive": "o cliente não respondeu aos lembretes",
    "lead_answered": "o cliente respondeu, mas a IA não devolveu a resposta ao caso",
    "relay_not_delivered": "a pergunta da equipe não chegou ao cliente",
}


@dataclass(frozen=True)
class NoticeOutcome:
    status: str  # "" (no notice: off or not an eligible event) | a NoticeStatus
    retry_in: int = 0


def notice_text(event: CaseEvent) -> str:
    case = event.case
    contact = case.lead
    who = (contact.name or contact.phone) if contact else "cliente"
    howto = ANSWER_HOWTO.format(ref=case.short_id)
    if event.kind == CaseEventKind.OPENED:
        head = f"Novo caso #{case.short_id} ({who}): {case.title}."
    elif event.kind == CaseEventKind.LEAD_PROVIDED:
        head = (
            f"O cliente respondeu no caso #{case.short_id} ({case.title}): "
            f"{' '.join(event.body.split())[:300]}"
        )
    else:
        why = BACK_TO_TEAM_WHY.get(str(event.metadata.get("reason", "")), "ele está parado")
        head = f"O caso #{case.short_id} ({who}: {case.title}) voltou para a equipe: {why}."
    return f"{head} Responda em Retaguarda › Casos. {howto}"


def notice_deliver(event_id: str, *, now: Any = None) -> NoticeOutcome:
    """Deliver (or retry) the notice of one case event. Idempotent: a sent or skipped
    notice is never sent again."""
    event = (
        CaseEvent.objects.select_related("case", "case__lead", "case__conversation__contact")
        .filter(pk=event_id)
        .first()
    )
    if event is None or event.kind not in KIND_OF_EVENT:
        return NoticeOutcome("")
    if event.metadata.get("fora_da_fronteira"):
        return NoticeOutcome("")
    config = notification_settings_for(event.organization_id)
    if not (config.whatsapp_enabled and config.whatsapp_phone and config.whatsapp_channel_id):
        # On by default, but only once the team's number and channel are set.
        return NoticeOutcome("")
    notice = _notice_for(event, config)
    now = now or timezone.now()
    # Claim the attempt, send with no transaction open, then record it (DESIGN §5: no
    # database lock is held across the network). The claim is the attempt counter moving
    # on: a concurrent delivery that finds it moved sends nothing.
    if notice.status != NoticeStatus.PENDING:
        return NoticeOutcome(notice.status)
    claimed = CaseNotice.objects.filter(
        pk=notice.pk, status=NoticeStatus.PENDING, attempts=notice.attempts
    ).update(attempts=F("attempts") + 1)
    if not claimed:
        return NoticeOutcome(NoticeStatus.PENDING)  # another delivery has this attempt
    notice.attempts += 1
    attempted, error, provider_id, retryable = _attempt(notice, event, now)
    outcome, retry_in = attempted, 0
    if outcome == NoticeStatus.FAILED and retryable and notice.attempts < MAX_NOTICE_ATTEMPTS:
        outcome, retry_in = NoticeStatus.PENDING, NOTICE_BACKOFF_S * notice.attempts
    with transaction.atomic():
        CaseNoticeAttempt.objects.create(
            organization_id=notice.organization_id,
            notice=notice,
            number=notice.attempts,
            outcome=attempted,
            error_code=error[:64],
        )
        notice.status, notice.last_error = outcome, error[:64]
        if outcome == NoticeStatus.SENT:
            notice.sent_at, notice.provider_message_id = now, provider_id
        notice.save(update_fields=["status", "last_error", "sent_at", "provider_message_id"])
    log.info(
        "case notice attempt",
        extra={"notice_id": str(notice.pk), "status": notice.status, "error": error},
    )
    return NoticeOutcome(notice.status, retry_in)


def _notice_for(event: CaseEvent, config: CaseNotificationSettings) -> CaseNotice:
    existing = CaseNotice.objects.select_related("channel").filter(event=event).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return CaseNotice.objects.create(
                organization_id=event.organization_id,
                case_id=event.case_id,
                event=event,
                kind=KIND_OF_EVENT[CaseEventKind(event.kind)],
                phone=config.whatsapp_phone,
                channel_id=config.whatsapp_channel_id,
            )
    except IntegrityError:  # a concurrent delivery created it first
        return CaseNotice.objects.get(event=event)


def _attempt(notice: CaseNotice, event: CaseEvent, now: Any) -> tuple[str, str, str, bool]:
    """(outcome, error code, provider message id, retryable)."""
    channel = notice.channel
    if channel is None or not notice.phone:
        return NoticeStatus.SKIPPED, "not_configured", "", False
    adapter = get_adapter(channel.provider)
    config = channel_config(channel)
    template = channel.template_for(NOTICE_TEMPLATE_PURPOSE)
    try:
        if template:
            result = adapter.send_template(
                config,
                to=notice.phone,
                template_name=template,
                language="pt_BR",
                parameters=[notice_text(event)],
            )
        else:
            # The staff number never wrote to us: providers that enforce the 24-hour
            # window refuse free text (configure a ``case_notice`` template for them).
            result = adapter.send_text(
                config, to=notice.phone, body=notice_text(event), last_inbound_at=None, now=now
            )
    except SendError as exc:
        return NoticeStatus.FAILED, exc.code, "", exc.retryable
    return NoticeStatus.SENT, "", result.provider_message_id, False


# What an admin sets on the notifications page (and the Django admin, through the same
# service): one list, so the page, the admin form and the service agree.
SETTINGS_FIELDS = (
    "reminders_enabled",
    "reminder_after_hours",
    "reminder_count",
    "whatsapp_enabled",
    "whatsapp_phone",
    "whatsapp_channel",
)


def notification_settings_save(
    *, organization_id: uuid.UUID, actor: Any, **fields: Any
) -> CaseNotificationSettings:
    """An admin changes how the team is told; pending reminders follow the new cadence."""
    unknown = set(fields) - set(SETTINGS_FIELDS)
    if unknown:
        raise ValueError(f"unknown notification settings: {sorted(unknown)}")
    with transaction.atomic():
        row = notification_settings_for(organization_id)
        before = {f: getattr(row, f) for f in fields}
        for key, value in fields.items():
            setattr(row, key, value)
        row.updated_by = actor if getattr(actor, "is_authenticated", False) else None
        row.save()
        cadence = {"reminders_enabled", "reminder_after_hours", "reminder_count"}
        rescheduled = 0
        if any(before[f] != fields[f] for f in cadence & set(fields)):
            rescheduled = reminders_reschedule(organization_id=organization_id)
        audit_log_write(
            actor=actor,
            action="case_notifications.update",
            resource=row,
            diff={
                "changed": sorted(f for f in fields if before[f] != fields[f]),
                "reminders_rescheduled": rescheduled,
            },
        )
    return row
