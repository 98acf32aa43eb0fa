"""The sweeper: re-drive committed work that no task is carrying (DESIGN §5).

The database is the source of truth for work; the broker only wakes workers. A webhook
whose task publish failed (broker down), a queue the broker lost, a worker killed while it
held or ran a turn: each leaves rows behind, and this finds them —

- **customer lines no turn took**: inbound messages without a turn, older than the burst
  window plus ``TURN_SWEEP_GRACE_S`` (their task should have run by then); one task per
  conversation, for its oldest such line — the turn's claim answers the conversation's
  oldest closed burst first. However old: a line left past ``TURN_SWEEP_MAX_AGE_S`` (past
  WhatsApp's 24-hour window a late answer is refused anyway) is not answered by the AI,
  but its turn hands the conversation to the team (``turns.guards``,
  ``past_service_window_guard``) — a customer line never vanishes unseen;
- **turns claimed but never finished**: active turns past ``lease_expires_at`` (the worker
  died mid-turn, or the turn waits to retry the model and its time has come);
- **the outbox**: ``conversation.outbox.sweep_due`` (queued rows with no delivery in
  flight, and replies failed while their channel was down, once it answers again).

Re-driving only schedules the tasks by name; every one of them is idempotent by its
trigger key and its claim, so a sweep that finds work a slow task is about to do (or two
sweeps in a row) costs a no-op task, never a second reply. Celery beat runs it every
``SWEEP_INTERVAL_S`` in the outbox queue; without a broker, the in-process runner does
(``conversation.dispatch``). Tests and fault drills call ``sweep_due_work(now)``.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Min
from django.utils import timezone

from accounts import rls
from conversation import outbox
from conversation.dispatch import enqueue
from conversation.models import ACTIVE_TURN_STATUSES, Direction, Message, TriggerKind, Turn

log = logging.getLogger(__name__)

INBOUND_TASK = "conversation.run_inbound_turn"
CASE_REPLY_TASK = "cases.run_case_reply_turn"
FOLLOW_UP_TASK = "cases.run_follow_up_turn"
# Per organization and sweep: a bigger backlog is taken over the next sweeps.
SWEEP_BATCH = 500


@dataclass(frozen=True)
class SweepResult:
    stranded_lines: int = 0  # conversations whose untaken lines were re-driven
    past_window: int = 0  # ... of which the oldest line is past TURN_SWEEP_MAX_AGE_S (to the team)
    expired_turns: int = 0  # turns re-driven past their lease
    outbox: int = 0  # conversations whose delivery chain was re-driven

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def sweep_due_work(now: datetime | None = None) -> SweepResult:
    """One sweep over every organization, each under its own tenant wall."""
    now = now or timezone.now()
    lines = late = turns = 0
    for organization_id in rls.organization_ids():
        with rls.tenant_context(organization_id):
            found_lines, found_late = _redrive_stranded_lines(organization_id, now)
            found_turns = _redrive_expired_turns(organization_id, now)
        if found_lines or found_turns:
            log.info(
                "sweeper re-drove turns",
                extra={
                    "organization_id": str(organization_id),
                    "stranded_lines": found_lines,
                    "past_window": found_late,
                    "expired_turns": found_turns,
                },
            )
        lines += found_lines
        late += found_late
        turns += found_turns
    return SweepResult(
        stranded_lines=lines, past_window=late, expired_turns=turns, outbox=outbox.sweep_due(now)
    )


def _redrive_stranded_lines(organization_id: uuid.UUID, now: datetime) -> tuple[int, int]:
    """The organization's conversations with a customer line no turn took: how many were
    re-driven, and of those how many wait since before ``TURN_SWEEP_MAX_AGE_S`` (their turn
    gives them to the team). (Filtered by organization too: SQLite has no walls, only the
    ORM's scoping.)"""
    late = timedelta(seconds=settings.TURN_BURST_WINDOW_S + settings.TURN_SWEEP_GRACE_S)
    stranded = Message.objects.filter(
        organization_id=organization_id,
        direction=Direction.INBOUND,
        turn__isnull=True,
        created_at__lte=now - late,
    )
    # The batch counts conversations, not lines: a backlog of lines in one conversation (a
    # flood, a bot) must not fill it and leave every other customer waiting behind it. Two
    # queries: each conversation's first stranded time, then the lines written at those times.
    firsts = dict(
        stranded.values("conversation_id")
        .annotate(since=Min("created_at"))
        .order_by("since")
        .values_list("conversation_id", "since")[:SWEEP_BATCH]
    )
    lines = stranded.filter(conversation_id__in=firsts, created_at__in=set(firsts.values()))
    first_line: dict[object, str] = {}
    for conversation_id, created_at, pk in lines.order_by("created_at", "pk").values_list(
        "conversation_id", "created_at", "pk"
    ):
        if created_at == firsts[conversation_id]:
            first_line.setdefault(conversation_id, str(pk))
    oldest = [first_line[c] for c in firsts if c in first_line]
    for message_id in oldest:
        enqueue(INBOUND_TASK, message_id)
    window = now - timedelta(seconds=settings.TURN_SWEEP_MAX_AGE_S)
    past = sum(1 for c, since in firsts.items() if c in first_line and since < window)
    return len(oldest), past


def _redrive_expired_turns(organization_id: uuid.UUID, now: datetime) -> int:
    """The organization's active turns whose lease ran out."""
    rows = list(
        Turn.objects.filter(
            organization_id=organization_id,
            status__in=ACTIVE_TURN_STATUSES,
            lease_expires_at__lte=now,
        )
        .order_by("lease_expires_at")
        .values_list("trigger_kind", "trigger_key")[:SWEEP_BATCH]
    )
    for kind, key in rows:
        if kind == TriggerKind.INBOUND:
            enqueue(INBOUND_TASK, key)
        elif kind == TriggerKind.CASE_REPLY:
            enqueue(CASE_REPLY_TASK, key)
        else:
            enqueue(FOLLOW_UP_TASK, key)
    return len(rows)
