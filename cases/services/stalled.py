"""No case waits unseen (issue 12 item 6): the watcher's sweep of the cases stuck on the
customer's side.

* **The customer answered, no ``provide_case_update`` followed** — a case ``awaiting_lead``
  whose conversation got a customer line after the team's question, and ``LEAD_ANSWER_GRACE``
  later the AI has still not brought the answer back: the case goes to the team's queue
  (``attention = lead_answered``) with the customer's lines in the event, so the team reads
  what was said.
* **The team's question never reached the customer** — the relay turn ended without an
  AI message, or its message failed in the outbox: back to the team
  (``attention = relay_not_delivered``).
* **A relay whose task never ran** (the broker lost it) — re-enqueued by name; the turn is
  keyed by the team's event, so a late original task never relays twice. (The turn
  sweeper re-drives turns that started; this covers the ones that never did.)
* **A team notice whose task never ran** (or whose scheduled retry was lost) — re-enqueued
  by name while its case still waits for the team in the wait the event began (DESIGN §5:
  the database is the source of truth for work); a notice is sent once per event.

The customer who stopped answering (the follow-ups spent) is the follow-up turn's decision
(``follow_ups``); it lands in the same queue the same way.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q

from cases.models import (
    AttentionReason,
    Case,
    CaseEvent,
    CaseEventKind,
    CaseNoticeAttempt,
    CaseStatus,
    HumanAction,
    NoticeStatus,
)
from cases.selectors import (
    RelayState,
    customer_answers,
    customer_lines_since,
    notification_settings_for,
    relay_status,
)
from conversation.dispatch import enqueue
from conversation.models import TriggerKind, Turn

from ._records import _audit_sweep
from .lifecycle import _back_to_team

log = logging.getLogger(__name__)

CASE_REPLY_TASK = "cases.run_case_reply_turn"
NOTICE_TASK = "cases.deliver_case_notice"
# The events that tell the team (``cases.notifications.KIND_OF_EVENT``; a test keeps both).
NOTICE_EVENT_KINDS = (
    CaseEventKind.OPENED,
    CaseEventKind.LEAD_PROVIDED,
    CaseEventKind.LEAD_UNRESPONSIVE,
    CaseEventKind.STALLED,
)
BATCH = 200


def _lead_answer_grace() -> timedelta:
    """How long the AI has to bring the customer's answer back before the team is called."""
    return timedelta(minutes=float(getattr(settings, "CASES_LEAD_ANSWER_GRACE_MIN", 15)))


def _relay_grace() -> timedelta:
    """How long a relay task may take to start before the watcher schedules it again."""
    return timedelta(minutes=float(getattr(settings, "CASES_RELAY_GRACE_MIN", 5)))


def stalled_cases_sweep(*, organization_id: uuid.UUID, now: datetime) -> dict[str, int]:
    """One sweep of the organization (the caller sets its tenant context). Idempotent: a
    case already moved is not moved again; a relay turn that exists is not re-enqueued."""
    counts = {
        "lead_answered": _lead_answered(organization_id, now),
        "relay_not_delivered": _relay_not_delivered(organization_id, now),
        "relays_redriven": _redrive_lost_relays(organization_id, now),
        "notices_redriven": _redrive_lost_notices(organization_id, now),
    }
    if counts["relays_redriven"]:
        _audit_sweep(organization_id, "case.relays_redriven", {"count": counts["relays_redriven"]})
    if counts["notices_redriven"]:
        _audit_sweep(
            organization_id, "case.notices_redriven", {"count": counts["notices_redriven"]}
        )
    return counts


def _lead_answered(organization_id: uuid.UUID, now: datetime) -> int:
    # The grace runs from the customer's first line of this wait, not the last: a customer
    # who keeps writing after answering must not hold the case away from the team.
    # A reaction (👍 on our question) is no answer: it neither starts the grace nor counts.
    answered_before_grace = customer_answers(OuterRef("conversation_id")).filter(
        created_at__gt=OuterRef("waiting_since"),
        created_at__lte=now - _lead_answer_grace(),
    )
    candidates = list(
        Case.objects.filter(
            organization_id=organization_id,
            status=CaseStatus.AWAITING_LEAD,
            conversation__last_inbound_at__gt=F("waiting_since"),
        )
        .filter(Exists(answered_before_grace))
        .values_list("pk", flat=True)[:BATCH]
    )
    moved = 0
    for pk in candidates:
        with transaction.atomic():
            locked = Case.objects.select_for_update(of=("self",)).filter(pk=pk).first()
            if locked is None or locked.status != CaseStatus.AWAITING_LEAD:
                continue
            lines = customer_lines_since(locked.conversation_id, locked.waiting_since)
            if not lines:
                continue
            _back_to_team(
                locked,
                trigger="stalled",
                reason=AttentionReason.LEAD_ANSWERED,
                kind=CaseEventKind.STALLED,
                body="\n".join(lines),
            )
            moved += 1
    return moved


def _latest_question(case_id: uuid.UUID) -> CaseEvent | None:
    return (
        CaseEvent.objects.filter(
            case_id=case_id,
            kind=CaseEventKind.HUMAN_REPLIED,
            human_action=HumanAction.NEED_LEAD_INFO,
        )
        .order_by("-created_at")
        .first()
    )


def _relay_not_delivered(organization_id: uuid.UUID, now: datetime) -> int:
    candidates = list(
        Case.objects.filter(
            organization_id=organization_id,
            status=CaseStatus.AWAITING_LEAD,
            waiting_since__lte=now - _relay_grace(),
        ).values_list("pk", flat=True)[:BATCH]
    )
    moved = 0
    for pk in candidates:
        question = _latest_question(pk)
        if question is None or relay_status(question).state != RelayState.NOT_DELIVERED:
            continue
        with transaction.atomic():
            locked = Case.objects.select_for_update(of=("self",)).filter(pk=pk).first()
            if locked is None or locked.status != CaseStatus.AWAITING_LEAD:
                continue
            _back_to_team(
                locked,
                trigger="stalled",
                reason=AttentionReason.RELAY_NOT_DELIVERED,
                kind=CaseEventKind.STALLED,
                metadata={"reply_event_id": str(question.pk)},
            )
            moved += 1
    return moved


def _redrive_lost_relays(organization_id: uuid.UUID, now: datetime) -> int:
    """Relayed answers of the last day older than the grace whose turn never started."""
    recent = CaseEvent.objects.filter(
        organization_id=organization_id,
        kind=CaseEventKind.HUMAN_REPLIED,
        human_action__in=[HumanAction.RESOLVED, HumanAction.NEED_LEAD_INFO],
        created_at__lte=now - _relay_grace(),
        created_at__gte=now - timedelta(days=1),
    ).values_list("pk", flat=True)[:BATCH]
    keys = [str(pk) for pk in recent]
    started = set(
        Turn.objects.filter(
            organization_id=organization_id,
            trigger_kind=TriggerKind.CASE_REPLY,
            trigger_key__in=keys,
        ).values_list("trigger_key", flat=True)
    )
    lost = [key for key in keys if key not in started]
    for key in lost:
        enqueue(CASE_REPLY_TASK, key)
    if lost:
        log.warning("case relays re-driven", extra={"count": len(lost)})
    return len(lost)


def _redrive_lost_notices(organization_id: uuid.UUID, now: datetime) -> int:
    """Events of the last day, older than the grace, that tell the team about a case still
    waiting for it in the same wait, whose notice was never created or is still pending
    with no attempt within the grace (its task or its scheduled retry was lost)."""
    config = notification_settings_for(organization_id)
    if not (config.whatsapp_enabled and config.whatsapp_phone and config.whatsapp_channel_id):
        return 0
    quiet_since = now - _relay_grace()
    recent_attempt = CaseNoticeAttempt.objects.filter(
        notice_id=OuterRef("notice"), created_at__gt=quiet_since
    )
    lost = list(
        CaseEvent.objects.filter(
            organization_id=organization_id,
            kind__in=NOTICE_EVENT_KINDS,
            created_at__lte=quiet_since,
            created_at__gte=now - timedelta(days=1),
            case__status=CaseStatus.AWAITING_HUMAN,
        )
        .filter(created_at__gte=F("case__waiting_since"))  # the wait it told about goes on
        .filter(  # no notice for an answer outside the asking conversation (§9)
            Q(metadata__fora_da_fronteira__isnull=True) | Q(metadata__fora_da_fronteira=False)
        )
        .filter(
            Q(notice__isnull=True)
            | Q(notice__status=NoticeStatus.PENDING, notice__created_at__lte=quiet_since)
        )
        .exclude(Exists(recent_attempt))
        .values_list("pk", flat=True)[:BATCH]
    )
    for pk in lost:
        enqueue(NOTICE_TASK, str(pk))
    if lost:
        log.warning("case notices re-driven", extra={"count": len(lost)})
    return len(lost)
