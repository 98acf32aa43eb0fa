"""The outcomes page's figures, read from the rollups plus the live tail (``rollups.period``)
and, for the cases' waiting times (percentiles do not add up across days), from the cases
of the period themselves. Definitions (tests/analytics computes each by hand):

- *conversations*: started in the period; *resolved by the AI alone*: no handoff, no case,
  and closed or idle for ``IDLE_AFTER``; *handoff rate*: of those conversations, the share
  with a handoff. *Handoffs by reason*: the handoffs made in the period.
- *routing mix*: routed turns by decision outcome; *fallback share*: fallback, no match or
  classifier failure; *local-decided share*: decided by the local stage.
- *runtime fallback rate*: of the turns the live runtime ran, those it handed to the LLM.
- *cases*: opened, resolved and escalated in the period. *Time to the team's first
  answer*: opening → first ``human_replied``. *Waits per reason*: every finished wait of
  the cases opened in the period, by what it waited for (a new case, a customer's answer,
  a customer gone quiet → the team; the team asked → the customer). *Time to resolution*:
  opening → closing of the cases resolved in the period. Median (the mean of the middle
  two for an even count) and p90 (nearest rank).
- *cost*: each model's tokens at the price in effect on the call's day (``prices``).
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import FloatField, Func, Q
from django.utils.translation import gettext_lazy as _

from accounts.models import Organization
from analytics import rollups
from analytics.models import RollupState
from analytics.prices import ZERO, PriceBook, Tokens
from cases.models import Case, CaseEvent
from conversation.models import Agent, ChannelSession, Conversation, HandoffReason, LlmCall

ROUTE_LABELS: dict[str, Any] = {
    "classified": _("Classificada"),
    "sticky": _("Manteve o agente"),
    "reclassified": _("Mudou de assunto"),
    "fallback": _("Agente de reserva"),
    "no_match": _("Sem intenção"),
    "classifier_failed": _("Falha do classificador"),
}
WAIT_REASONS: dict[str, Any] = {
    "new_case": _("Caso novo → equipe"),
    "customer_answered": _("Cliente respondeu → equipe"),
    "customer_unresponsive": _("Cliente sem resposta → equipe"),
    "awaiting_customer": _("Equipe perguntou → cliente"),
}
NONE_LABEL = "—"


@dataclass(frozen=True)
class Period:
    first_day: dt.date
    last_day: dt.date

    @property
    def days(self) -> list[dt.date]:
        n = (self.last_day - self.first_day).days + 1
        return [self.first_day + dt.timedelta(days=i) for i in range(n)]


@dataclass(frozen=True)
class Durations:
    n: int
    median_s: float | None
    p90_s: float | None

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Durations:
        if not seconds:
            return cls(0, None, None)
        ordered = sorted(seconds)
        p90 = ordered[max(math.ceil(0.9 * len(ordered)) - 1, 0)]
        return cls(len(ordered), float(statistics.median(ordered)), float(p90))


@dataclass(frozen=True)
class Share:
    key: str
    label: str
    n: int
    share: float | None


@dataclass(frozen=True)
class DimensionRow:
    """One channel or agent: its headline figures."""

    key: str
    label: str
    conversations: int
    turns: int
    ai_alone: int
    handed_off: int
    handoffs: int
    cost_usd: Decimal

    @property
    def ai_alone_share(self) -> float | None:
        return ratio(self.ai_alone, self.conversations)

    @property
    def handoff_rate(self) -> float | None:
        return ratio(self.handed_off, self.conversations)


@dataclass(frozen=True)
class CaseFigures:
    opened: int
    resolved: int
    escalated: int
    first_answer: Durations
    resolution: Durations
    waits: tuple[tuple[str, str, Durations], ...]


@dataclass(frozen=True)
class Outcomes:
    period: Period
    totals: dict[str, int]
    by_channel: tuple[DimensionRow, ...]
    by_agent: tuple[DimensionRow, ...]
    handoff_reasons: tuple[Share, ...]
    routing: tuple[Share, ...]
    cases: CaseFigures
    cost_usd: Decimal
    cost_by_day: dict[dt.date, Decimal]
    cost_by_model: tuple[tuple[str, int, Decimal | None], ...]  # model, calls, US$ (None: unpriced)
    unpriced_calls: int
    daily: dict[str, list[int]] = field(default_factory=dict)  # chart series by day
    state: RollupState | None = None

    def total(self, name: str) -> int:
        return self.totals.get(name, 0)

    @property
    def ai_alone_share(self) -> float | None:
        return ratio(self.total("conversations_ai_alone"), self.total("conversations"))

    @property
    def handoff_rate(self) -> float | None:
        return ratio(self.total("conversations_handed_off"), self.total("conversations"))

    @property
    def fallback_share(self) -> float | None:
        return ratio(self.total("route_fallback"), self.total("routed"))

    @property
    def local_share(self) -> float | None:
        return ratio(self.total("route_local"), self.total("routed"))

    @property
    def runtime_fallback_rate(self) -> float | None:
        return ratio(self.total("runtime_fallback"), self.total("runtime_live"))


def ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def outcomes(
    organization: Organization,
    period: Period,
    *,
    channel_id: uuid.UUID | None = None,
    agent_id: uuid.UUID | None = None,
) -> Outcomes:
    """Every figure of the page. Constant queries: the rollups and the live tail
    (``rollups.period``: 10), prices (1), channel and agent names (2), cases (2)."""
    agg, state = rollups.period(organization.pk, period.first_day, period.last_day)
    book = PriceBook.load()

    def keep(ch: uuid.UUID | None, ag: uuid.UUID | None) -> bool:
        return (channel_id is None or ch == channel_id) and (agent_id is None or ag == agent_id)

    totals: dict[str, int] = defaultdict(int)
    per_channel: dict[uuid.UUID | None, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    per_agent: dict[uuid.UUID | None, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    day_index = {d: i for i, d in enumerate(period.days)}
    daily = {
        "ai_alone": [0] * len(day_index),
        "handed_off": [0] * len(day_index),
        "other": [0] * len(day_index),
    }
    for (day, ch, ag), bag in agg.counts.items():
        if not keep(ch, ag):
            continue
        for name, n in bag.items():
            totals[name] += n
            per_channel[ch][name] += n
            per_agent[ag][name] += n
        if day in day_index:
            i = day_index[day]
            alone = bag.get("conversations_ai_alone", 0)
            handed = bag.get("conversations_handed_off", 0)
            daily["ai_alone"][i] += alone
            daily["handed_off"][i] += handed
            daily["other"][i] += max(bag.get("conversations", 0) - alone - handed, 0)

    cost = ZERO
    cost_by_day: dict[dt.date, Decimal] = defaultdict(lambda: ZERO)
    cost_channel: dict[uuid.UUID | None, Decimal] = defaultdict(lambda: ZERO)
    cost_agent: dict[uuid.UUID | None, Decimal] = defaultdict(lambda: ZERO)
    model_calls: dict[str, int] = defaultdict(int)
    model_cost: dict[str, Decimal] = {}
    unpriced = 0
    for (day, ch, ag, model), v in agg.usage.items():
        if not keep(ch, ag):
            continue
        model_calls[model] += v[0]
        c = book.cost(model, day, rollups.usage_tokens(v))
        if c is None:
            unpriced += v[0]
            continue
        model_cost[model] = model_cost.get(model, ZERO) + c
        if not c:
            continue  # the offline model: free, no day or row of cost of its own
        cost += c
        cost_by_day[day] += c
        cost_channel[ch] += c
        cost_agent[ag] += c
    names = _names(organization)
    return Outcomes(
        period=period,
        totals=dict(totals),
        by_channel=_rows(per_channel, cost_channel, names),
        by_agent=_rows(per_agent, cost_agent, names),
        handoff_reasons=_shares(
            totals, "handoff:", {k: str(v) for k, v in HandoffReason.choices}, "handoffs"
        ),
        routing=_shares(totals, "route:", ROUTE_LABELS, "routed"),
        cases=case_figures(organization, period, channel_id=channel_id, agent_id=agent_id),
        cost_usd=cost,
        cost_by_day=dict(cost_by_day),
        cost_by_model=tuple((m, n, model_cost.get(m)) for m, n in sorted(model_calls.items())),
        unpriced_calls=unpriced,
        daily=daily,
        state=state,
    )


def _names(organization: Organization) -> dict[uuid.UUID | None, str]:
    names: dict[uuid.UUID | None, str] = {None: NONE_LABEL}
    names.update(ChannelSession.objects.filter(organization=organization).values_list("id", "name"))
    names.update(Agent.objects.filter(organization=organization).values_list("id", "name"))
    return names


def _rows(
    per: dict[uuid.UUID | None, dict[str, int]],
    costs: dict[uuid.UUID | None, Decimal],
    names: dict[uuid.UUID | None, str],
) -> tuple[DimensionRow, ...]:
    keys = set(per) | set(costs)
    rows = [
        DimensionRow(
            key=str(k) if k else "",
            label=names.get(k, NONE_LABEL),
            conversations=per.get(k, {}).get("conversations", 0),
            turns=per.get(k, {}).get("turns", 0),
            ai_alone=per.get(k, {}).get("conversations_ai_alone", 0),
            handed_off=per.get(k, {}).get("conversations_handed_off", 0),
            handoffs=per.get(k, {}).get("handoffs", 0),
            cost_usd=costs.get(k, ZERO),
        )
        for k in keys
    ]
    return tuple(sorted(rows, key=lambda r: (-r.turns, r.label)))


def _shares(
    totals: dict[str, int], prefix: str, labels: dict[str, Any], whole_key: str
) -> tuple[Share, ...]:
    whole = totals.get(whole_key, 0)
    found = [
        Share(
            key=name[len(prefix) :],
            label=str(labels.get(name[len(prefix) :], name[len(prefix) :] or NONE_LABEL)),
            n=n,
            share=ratio(n, whole),
        )
        for name, n in totals.items()
        if name.startswith(prefix)
    ]
    return tuple(sorted(found, key=lambda s: (-s.n, s.key)))


# --- cases ---------------------------------------------------------------------------------


class Epoch(Func):
    """Seconds since 1970 as a float, computed by the database: thousands of timestamps
    load much faster as numbers than as datetimes (a wait is a difference of two)."""

    output_field = FloatField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler, connection, template="EXTRACT(EPOCH FROM %(expressions)s)::float8", **extra
        )

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        template = "((julianday(%(expressions)s) - 2440587.5) * 86400.0)"
        return self.as_sql(compiler, connection, template=template, **extra)


def _seconds(start: float, end: float) -> float:
    return round(end - start, 3)  # SQLite's julianday carries float noise below a millisecond


def case_figures(
    organization: Organization,
    period: Period,
    *,
    channel_id: uuid.UUID | None = None,
    agent_id: uuid.UUID | None = None,
) -> CaseFigures:
    """Two queries: the events of the cases opened in the period (in order), and the
    cases closed in it."""
    start = rollups.local_day_start(period.first_day)
    end = rollups.local_day_start(period.last_day + dt.timedelta(days=1))
    scope = Q(organization=organization)
    if channel_id is not None:
        scope &= Q(conversation__channel_id=channel_id)
    if agent_id is not None:
        scope &= Q(agent_id=agent_id)
    opened = Case.objects.filter(scope, opened_at__gte=start, opened_at__lt=end)
    events = (
        CaseEvent.objects.filter(case__in=opened.values("pk"))
        .order_by("case_id", "created_at", "id")
        .values_list("case_id", "kind", "human_action", Epoch("created_at"))
    )
    waits, first_answers, opened_n = _waits(events)
    closed = Case.objects.filter(
        scope, closed_at__gte=start, closed_at__lt=end, status__in=["resolved", "escalated"]
    ).values_list("status", Epoch("opened_at"), Epoch("closed_at"))
    resolved = escalated = 0
    resolution: list[float] = []
    for status, opened_at, closed_at in closed:
        if status == "resolved":
            resolved += 1
            resolution.append(_seconds(opened_at, closed_at))
        else:
            escalated += 1
    return CaseFigures(
        opened=opened_n,
        resolved=resolved,
        escalated=escalated,
        first_answer=Durations.of(first_answers),
        resolution=Durations.of(resolution),
        waits=tuple(
            (key, str(label), Durations.of(waits.get(key, [])))
            for key, label in WAIT_REASONS.items()
        ),
    )


_TEAM_WAIT_STARTS = {
    "opened": "new_case",
    "lead_provided": "customer_answered",
    "lead_unresponsive": "customer_unresponsive",
}


def _waits(
    events: Iterable[tuple[uuid.UUID, str, str, float]],
) -> tuple[dict[str, list[float]], list[float], int]:
    """Walk each case's events in order: a team wait starts at opening, a customer's answer
    or a customer gone quiet, and ends at the team's next answer; a customer wait starts
    when the team asks for the customer's information and ends at the customer's answer
    (or the case flagging them unresponsive). Open waits are not counted."""
    waits: dict[str, list[float]] = defaultdict(list)
    first_answers: list[float] = []
    cases = 0
    current: uuid.UUID | None = None
    wait: tuple[str, float] | None = None
    answered = False
    opened_at: float | None = None
    for case_id, kind, human_action, at in events:
        if case_id != current:
            current, wait, answered, opened_at = case_id, None, False, at
            cases += 1
        if kind in _TEAM_WAIT_STARTS:
            if wait is not None and wait[0] == "awaiting_customer" and kind != "opened":
                waits["awaiting_customer"].append(_seconds(wait[1], at))
            wait = (_TEAM_WAIT_STARTS[kind], at)
        elif kind == "human_replied":
            if wait is not None and wait[0] != "awaiting_customer":
                waits[wait[0]].append(_seconds(wait[1], at))
            if not answered and opened_at is not None:
                answered = True
                first_answers.append(_seconds(opened_at, at))
            wait = ("awaiting_customer", at) if human_action == "need_lead_info" else None
    return waits, first_answers, cases


# --- cost of one conversation --------------------------------------------------------------


@dataclass(frozen=True)
class CallCost:
    call: LlmCall
    cost_usd: Decimal | None


@dataclass(frozen=True)
class ConversationCost:
    calls: tuple[CallCost, ...]
    total_usd: Decimal
    unpriced_calls: int


def conversation_cost(conversation: Conversation) -> ConversationCost:
    """Every model call of the conversation with its cost (2 queries)."""
    book = PriceBook.load()
    calls = []
    total = ZERO
    unpriced = 0
    for call in LlmCall.objects.filter(conversation=conversation).order_by("created_at"):
        cost = book.cost(
            call.model,
            rollups.local_today(call.created_at),
            Tokens(
                input=call.input_tokens,
                output=call.output_tokens,
                cache_read=call.cache_read_tokens,
                cache_write=call.cache_creation_tokens,
            ),
        )
        if cost is None:
            unpriced += 1
        else:
            total += cost
        calls.append(CallCost(call=call, cost_usd=cost))
    return ConversationCost(calls=tuple(calls), total_usd=total, unpriced_calls=unpriced)
