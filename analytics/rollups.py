"""Daily rollups: the heavy tables (turns, model calls) counted once per local day.

**Beat, not on write.** A turn already commits three times and its ledger in one INSERT;
counting on write would add an ``UPDATE … SET n = n + 1`` on one hot row per organization
and day to every turn (lock contention exactly when an organization is busiest) and hooks
into cases, handoffs and follow-ups that other modules own. Instead the beat task
``analytics.roll_up`` (every 5 minutes) recomputes whole days from the source rows, today
up to the moment it runs — idempotent (delete and insert the days in one transaction),
self-healing (a late row is counted by the next run), and nothing in the turn path changes.
Readers never wait for it: the rows created after ``RollupState.rolled_at`` (minutes of
them) are counted live with the same ``aggregate``, served by the ``(organization,
created_at)`` indexes, so the figures include every row up to the moment of reading.

A day is *final* once it was rolled after its end plus ``FINAL_GRACE`` (late commits of
the day's last turns). Each run re-rolls from ``REROLL_DAYS`` before the last final day.

**Conversations are read live, never rolled.** A conversation is counted on the day it
started, but how it ended (a handoff, a case, closed, idle) is settled any time later: one
conversation per contact and channel, reopened when the customer writes again, may be
handed off weeks after it began. A rolled counter would freeze its outcome once the day
left the re-roll window (and disagree with the live read), so ``period`` counts the period's
conversations with one grouped query, served by the ``(organization, created_at)`` index.

**One roll-up at a time per organization.** ``roll_up`` locks the organization's
``RollupState`` row before it reads: two runs (a beat run slower than the beat's period, a
redelivered task) never both delete-and-insert the same days — on PostgreSQL the second
one's DELETE would not see the first one's new rows and every row would count twice.
**Readers see one roll-up:** ``period`` reads the state again after the rollup rows and
starts over when a roll-up committed in between (its rows and the live tail would both
count the rows of the minutes between the two roll-ups).
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery, Sum, UUIDField
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from analytics.models import DailyOutcome, DailyUsage, RollupState
from analytics.prices import Tokens
from cases.models import Case, CaseEvent, CaseFollowUp
from conversation.models import Conversation, Handoff, LlmCall, Turn

log = logging.getLogger(__name__)

FINAL_GRACE = dt.timedelta(minutes=5)
REROLL_DAYS = 2
BACKFILL_MAX_DAYS = 400
# A conversation with no message for this long is settled: "resolved by the AI alone" when
# it had no handoff and no case, like a closed one.
IDLE_AFTER = dt.timedelta(hours=24)
# Route outcomes that are not a classifier's confident choice.
ROUTE_FALLBACK_OUTCOMES = frozenset({"fallback", "no_match", "classifier_failed"})
# Counted live by ``period`` (``conversation_outcomes``); rollup rows written before that
# change still carry them, and the readers skip them.
CONVERSATION_COUNTERS = frozenset(
    {"conversations", "conversations_handed_off", "conversations_ai_alone"}
)
# A reader that keeps meeting a new roll-up between its reads gives up on the rollups and
# counts the period live (correct, only slower).
READ_ATTEMPTS = 3

Key = tuple[dt.date, uuid.UUID | None, uuid.UUID | None]  # day, channel, agent


@dataclass
class Aggregate:
    """Counters by (day, channel, agent), and model usage by (day, channel, agent, model)."""

    counts: dict[Key, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    usage: dict[tuple[dt.date, uuid.UUID | None, uuid.UUID | None, str], list[int]] = field(
        default_factory=dict
    )

    def add(self, key: Key, name: str, n: int) -> None:
        if n:
            bag = self.counts[key]
            bag[name] = bag.get(name, 0) + n


def local_day_start(day: dt.date) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min))


def local_today(now: dt.datetime | None = None) -> dt.date:
    return timezone.localdate(now or timezone.now())


def _day(field_name: str) -> TruncDate:
    return TruncDate(field_name, tzinfo=timezone.get_current_timezone())


def _truthy(value: object) -> bool:
    return value in (True, 1, "true", "1", "True")


def aggregate(
    organization_id: uuid.UUID, start: dt.datetime, end: dt.datetime, *, usage_only: bool = False
) -> Aggregate:
    """Every rolled counter of ``[start, end)`` — five grouped queries whatever the volume
    (one with ``usage_only``: the model calls). Conversations: ``conversation_outcomes``."""
    agg = Aggregate()
    if not usage_only:
        _outcomes(agg, organization_id, start, end)
    _usage(agg, organization_id, start, end)
    return agg


def _answering_agent(conversation: str, *, until: str | None = None) -> Subquery:
    """The agent of the conversation's latest turn that had one (at or before the outer
    row's ``until`` field, when given). The router's pointer (``active_agent``) cannot say
    who answered: "Handoff/fechamento limpa a atribuição" (intent-router spec) clears it on
    a handoff and on a resolve, which would hand a routed conversation to the channel's own
    agent. A correlated subquery, so each count stays one grouped query."""
    turns = Turn.objects.filter(conversation_id=OuterRef(conversation), agent_version__isnull=False)
    if until is not None:
        turns = turns.filter(created_at__lte=OuterRef(until))
    return Subquery(turns.order_by("-created_at").values("agent_version__agent_id")[:1])


def _outcomes(
    agg: Aggregate, organization_id: uuid.UUID, start: dt.datetime, end: dt.datetime
) -> None:
    # 1 · turns: the routing mix, the runtime's fallbacks and the budget stops from the trace.
    turns = Turn.objects.filter(
        organization_id=organization_id, created_at__gte=start, created_at__lt=end
    ).values(
        "trigger_kind",
        d=_day("created_at"),
        ch=F("conversation__channel_id"),
        ag=F("agent_version__agent_id"),
        r_source=KT("trace__route__source"),
        r_outcome=KT("trace__route__outcome"),
        r_stage=KT("trace__route__stage"),
        rt_mode=KT("trace__runtime__mode"),
        rt_handled=KT("trace__runtime__handled"),
        rt_skipped=KT("trace__runtime__skipped"),
        budget=KT("trace__budget__stop"),
    )
    for row in turns.annotate(n=Count("id")).order_by():
        key: Key = (row["d"], row["ch"], row["ag"])
        n = row["n"]
        agg.add(key, "turns", n)
        if row["trigger_kind"] == "inbound_message":
            agg.add(key, "turns_inbound", n)
        if row["r_source"] == "router":
            outcome = row["r_outcome"] or ""
            agg.add(key, "routed", n)
            agg.add(key, f"route:{outcome}", n)
            if outcome in ROUTE_FALLBACK_OUTCOMES:
                agg.add(key, "route_fallback", n)
            if row["r_stage"] == "local":
                agg.add(key, "route_local", n)
        if row["rt_mode"] == "on" and not row["rt_skipped"] and row["rt_handled"] is not None:
            agg.add(key, "runtime_live", n)
            if not _truthy(row["rt_handled"]):
                agg.add(key, "runtime_fallback", n)
        if row["budget"]:
            agg.add(key, "budget_stopped", n)

    # 2 · handoffs by reason code, for the agent that was answering when it happened.
    handoff_agent = Coalesce(
        _answering_agent("conversation_id", until="created_at"),
        "conversation__active_agent_id",
        "conversation__channel__agent_id",
        output_field=UUIDField(),
    )
    handoffs = (
        Handoff.objects.filter(
            organization_id=organization_id, created_at__gte=start, created_at__lt=end
        )
        .values(
            "reason_code", d=_day("created_at"), ch=F("conversation__channel_id"), ag=handoff_agent
        )
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in handoffs:
        key = (row["d"], row["ch"], row["ag"])
        agg.add(key, "handoffs", row["n"])
        agg.add(key, f"handoff:{row['reason_code']}", row["n"])

    # 3 · follow-ups sent to customers.
    follow_ups = (
        CaseFollowUp.objects.filter(
            organization_id=organization_id,
            status="sent",
            fired_at__gte=start,
            fired_at__lt=end,
        )
        .values(d=_day("fired_at"), ch=F("conversation__channel_id"), ag=F("case__agent_id"))
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in follow_ups:
        agg.add((row["d"], row["ch"], row["ag"]), "follow_ups_sent", row["n"])

    # 4 · customers who stopped answering (a case flagged "cliente sem resposta").
    unresponsive = (
        CaseEvent.objects.filter(
            organization_id=organization_id,
            kind="lead_unresponsive",
            created_at__gte=start,
            created_at__lt=end,
        )
        .values(
            d=_day("created_at"),
            ch=F("case__conversation__channel_id"),
            ag=F("case__agent_id"),
        )
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in unresponsive:
        agg.add((row["d"], row["ch"], row["ag"]), "unresponsive", row["n"])


def conversation_outcomes(
    agg: Aggregate, organization_id: uuid.UUID, start: dt.datetime, end: dt.datetime
) -> None:
    """The conversations started in ``[start, end)`` and how each ended as of now (one
    grouped query): handed off, or resolved by the AI alone — no handoff, no case, and
    closed or idle for ``IDLE_AFTER``."""
    now = timezone.now()
    conv_agent = Coalesce(
        _answering_agent("pk"), "active_agent_id", "channel__agent_id", output_field=UUIDField()
    )
    handed = Exists(Handoff.objects.filter(conversation_id=OuterRef("pk")))
    cased = Exists(Case.objects.filter(conversation_id=OuterRef("pk")))
    settled = Q(status="closed") | Q(last_message_at__lt=now - IDLE_AFTER)
    conversations = (
        Conversation.objects.filter(
            organization_id=organization_id, created_at__gte=start, created_at__lt=end
        )
        .annotate(handed=handed, cased=cased)
        .values(d=_day("created_at"), ch=F("channel_id"), ag=conv_agent)
        .annotate(
            n=Count("id"),
            handed_n=Count("id", filter=Q(handed=True)),
            ai_alone=Count("id", filter=Q(handed=False, cased=False) & settled),
        )
        .order_by()
    )
    for row in conversations:
        key = (row["d"], row["ch"], row["ag"])
        agg.add(key, "conversations", row["n"])
        agg.add(key, "conversations_handed_off", row["handed_n"])
        agg.add(key, "conversations_ai_alone", row["ai_alone"])


def _usage(
    agg: Aggregate, organization_id: uuid.UUID, start: dt.datetime, end: dt.datetime
) -> None:
    # 5 · model calls: tokens per model (priced when read, so a price edit needs no re-roll).
    calls = (
        LlmCall.objects.filter(
            organization_id=organization_id, created_at__gte=start, created_at__lt=end
        )
        .values(
            "model",
            d=_day("created_at"),
            ch=F("conversation__channel_id"),
            ag=F("turn__agent_version__agent_id"),
        )
        .annotate(
            n=Count("id"),
            errors=Count("id", filter=~Q(error_code="")),
            tin=Sum("input_tokens"),
            tout=Sum("output_tokens"),
            tcr=Sum("cache_read_tokens"),
            tcw=Sum("cache_creation_tokens"),
        )
        .order_by()
    )
    for row in calls:
        agg.usage[(row["d"], row["ch"], row["ag"], row["model"])] = [
            row["n"],
            row["errors"],
            row["tin"] or 0,
            row["tout"] or 0,
            row["tcr"] or 0,
            row["tcw"] or 0,
        ]


def usage_tokens(values: Sequence[int]) -> Tokens:
    """The token counts of one ``Aggregate.usage`` row (calls, errors, in, out, cr, cw)."""
    return Tokens(input=values[2], output=values[3], cache_read=values[4], cache_write=values[5])


def add_usage(
    agg: Aggregate,
    key: tuple[dt.date, uuid.UUID | None, uuid.UUID | None, str],
    values: Iterable[int],
) -> None:
    current = agg.usage.setdefault(key, [0, 0, 0, 0, 0, 0])
    for i, v in enumerate(values):
        current[i] += v


# --- the beat's work -----------------------------------------------------------------------


def roll_up(organization_id: uuid.UUID, *, now: dt.datetime | None = None) -> int:
    """Recompute the organization's days from the last final ones (re-rolling the last
    ``REROLL_DAYS`` of them) up to ``now`` — today included, up to ``now`` — in one
    transaction; returns how many days were written (0 when another run had already
    counted up to ``now``). Idempotent. Locks the organization's ``RollupState`` row for
    the transaction (no network inside): a second run waits, then re-reads what the first
    one wrote."""
    now = now or timezone.now()
    today = local_today(now)
    final_before = local_today(now - FINAL_GRACE)
    try:
        with transaction.atomic():
            state = (
                RollupState.objects.select_for_update()
                .filter(organization_id=organization_id)
                .first()
            )
            if state is None:
                since = _first_day(organization_id) or today
                since = max(since, today - dt.timedelta(days=BACKFILL_MAX_DAYS))
                # Taken now, so that a racing first run waits on its unique key, then fails.
                state = RollupState.objects.create(
                    organization_id=organization_id, final_before=final_before, rolled_at=now
                )
            elif state.rolled_at >= now:
                return 0  # a run that started later already counted every row before now
            else:
                since = min(state.final_before, final_before) - dt.timedelta(days=REROLL_DAYS)
            _write(organization_id, since, aggregate(organization_id, local_day_start(since), now))
            state.final_before, state.rolled_at = final_before, now
            state.save(update_fields=["final_before", "rolled_at"])
    except IntegrityError:
        return 0  # the organization's first roll-up, run twice at once: the other one wrote
    days = (today - since).days + 1
    log.info("analytics rolled up", extra={"organization_id": str(organization_id), "days": days})
    return days


def _write(organization_id: uuid.UUID, since: dt.date, agg: Aggregate) -> None:
    DailyOutcome.objects.filter(organization_id=organization_id, day__gte=since).delete()
    DailyUsage.objects.filter(organization_id=organization_id, day__gte=since).delete()
    DailyOutcome.objects.bulk_create(
        [
            DailyOutcome(
                organization_id=organization_id, day=d, channel_id=ch, agent_id=ag, counts=c
            )
            for (d, ch, ag), c in agg.counts.items()
        ],
        batch_size=1000,
    )
    DailyUsage.objects.bulk_create(
        [
            DailyUsage(
                organization_id=organization_id,
                day=d,
                channel_id=ch,
                agent_id=ag,
                model=model,
                calls=v[0],
                errors=v[1],
                input_tokens=v[2],
                output_tokens=v[3],
                cache_read_tokens=v[4],
                cache_creation_tokens=v[5],
            )
            for (d, ch, ag, model), v in agg.usage.items()
        ],
        batch_size=1000,
    )


def _first_day(organization_id: uuid.UUID) -> dt.date | None:
    firsts = [
        m.objects.filter(organization_id=organization_id)
        .order_by("created_at")
        .values_list("created_at", flat=True)
        .first()
        for m in (Turn, LlmCall)
    ]
    found = [f for f in firsts if f is not None]
    return local_today(min(found)) if found else None


# --- readers -------------------------------------------------------------------------------


def period(
    organization_id: uuid.UUID,
    first_day: dt.date,
    last_day: dt.date,
    *,
    usage_only: bool = False,
) -> tuple[Aggregate, RollupState | None]:
    """The counters of the local days ``first_day..last_day``: what the last roll-up
    counted (every row created before ``RollupState.rolled_at``) from the rollups, the rows
    since then live — minutes of rows, whatever the period — and the period's conversations
    live (``conversation_outcomes``). Constant queries: the state, the two rollup tables (one
    with ``usage_only``), the state again, ``aggregate`` for the live tail and the
    conversations."""
    start = local_day_start(first_day)
    end = local_day_start(last_day + dt.timedelta(days=1))
    for _attempt in range(READ_ATTEMPTS):
        state = RollupState.objects.filter(organization_id=organization_id).first()
        through = min(max(state.rolled_at, start), end) if state is not None else start
        agg = Aggregate()
        if state is None or through <= start:
            break
        _read_rolled(agg, organization_id, first_day, last_day, usage_only=usage_only)
        again = RollupState.objects.filter(organization_id=organization_id)
        if again.values_list("rolled_at", flat=True).first() == state.rolled_at:
            break
    else:  # a roll-up committed between the reads every time: count it all live
        agg, through = Aggregate(), start
    if through < end:
        live = aggregate(organization_id, through, end, usage_only=usage_only)
        for key, bag in live.counts.items():
            for name, n in bag.items():
                agg.add(key, name, n)
        for ukey, values in live.usage.items():
            add_usage(agg, ukey, values)
    if not usage_only:
        conversation_outcomes(agg, organization_id, start, end)
    return agg, state


def _read_rolled(
    agg: Aggregate,
    organization_id: uuid.UUID,
    first_day: dt.date,
    last_day: dt.date,
    *,
    usage_only: bool,
) -> None:
    if not usage_only:
        for o in DailyOutcome.objects.filter(
            organization_id=organization_id, day__gte=first_day, day__lte=last_day
        ).values_list("day", "channel_id", "agent_id", "counts"):
            for name, n in o[3].items():
                if name not in CONVERSATION_COUNTERS:
                    agg.add((o[0], o[1], o[2]), name, n)
    for u in DailyUsage.objects.filter(
        organization_id=organization_id, day__gte=first_day, day__lte=last_day
    ).values_list(
        "day",
        "channel_id",
        "agent_id",
        "model",
        "calls",
        "errors",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
    ):
        add_usage(agg, (u[0], u[1], u[2], u[3]), u[4:])
