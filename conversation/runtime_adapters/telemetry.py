"""Outcome telemetry of the conversation runtime, read from the turns' own traces.

The spec's governance table asks for the ``fallback_to_orchestrator`` rate ("não zero:
zero indica overfitting"); issue 11 asks for it aggregated per agent and organization over
a period, and for outcome figures per conversation. Both come from the same place: the
``runtime`` entry that ``conversation.turns.runtime_step`` writes on every turn whose agent
has a runtime (ids and codes only — never message text).

One classification of a turn's runtime entry, stated once here and used twice (as SQL by
``runtime_outcomes``, in Python by ``conversation_runtime_outcomes``; a test holds them
equal):

- **skipped** — the kill switch was off: the runtime did not run at all;
- **handled** — live mode (``on``), the runtime answered the customer;
- **fallback** — live mode, the runtime ran and the orchestrator answered: a policy
  fallback (its ``fallback_reason``), the invoice unavailable, or a runtime error
  (``error``, counted apart as well);
- **shadow** — shadow mode: the runtime decided without answering (``shadow_handled``:
  it would have answered).

``fallback_rate = fallbacks / (handled + fallbacks)``: how often, when the runtime ran for
real, the LLM orchestrator answered instead. Kill-switch and shadow turns are outside it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db.models import Count, Q
from django.db.models.fields.json import KT

from conversation.models import RuntimeAction, RuntimeMode, Turn

ACTING_TOOLS = ("cancelar_vas_single", "vas_strategic", "pro_rata")
# An action counts as executed when the backend did it (wholly or in part).
DONE_OUTCOMES = ("success", "partial")
RUNTIME_ERROR = "runtime_error"
# A fallback whose trace carries no reason (older traces, an error): named here.
NO_REASON = "runtime_error"


@dataclass(frozen=True)
class OutcomeCounts:
    """How the runtime's turns went (see the module doc for each category)."""

    turns: int = 0
    handled: int = 0
    fallbacks: int = 0
    errors: int = 0
    skipped: int = 0
    shadow: int = 0
    shadow_handled: int = 0
    actions: int = 0  # backend actions done (cancellations, strategic, pro rata)
    # Fallback reasons (codes), most frequent first; label them with ``fallback_reason_label``.
    reasons: tuple[tuple[str, int], ...] = ()

    @property
    def ran(self) -> int:
        """Live turns the runtime ran (the fallback rate's denominator)."""
        return self.handled + self.fallbacks

    @property
    def fallback_rate(self) -> float | None:
        """Share of live runtime turns the orchestrator answered; None with none."""
        return self.fallbacks / self.ran if self.ran else None

    @property
    def fallback_percent(self) -> int | None:
        rate = self.fallback_rate
        return None if rate is None else round(rate * 100)

    @property
    def shadow_fallback_rate(self) -> float | None:
        """Shadow mode: the share of turns the runtime would have left to the orchestrator."""
        return (self.shadow - self.shadow_handled) / self.shadow if self.shadow else None


@dataclass(frozen=True)
class AgentOutcomes:
    agent_id: UUID | None  # None: turns whose agent version is gone
    agent_name: str
    counts: OutcomeCounts


@dataclass(frozen=True)
class RuntimeOutcomeReport:
    """``runtime_outcomes``' answer: the organization's totals and one row per agent."""

    organization_id: UUID | str
    since: datetime
    until: datetime
    total: OutcomeCounts
    by_agent: tuple[AgentOutcomes, ...] = field(default=())


# --- one turn's entry, in Python ------------------------------------------------------------


def turn_category(runtime: Any) -> str | None:
    """``skipped | handled | fallback | shadow`` for one trace's ``runtime`` entry (None:
    not a runtime turn, or a shadow turn that never decided)."""
    if not isinstance(runtime, Mapping):
        return None
    if runtime.get("skipped"):
        return "skipped"
    handled = runtime.get("handled")
    if not isinstance(handled, bool):
        return None
    if runtime.get("mode") == RuntimeMode.SHADOW:
        return "shadow"
    return "handled" if handled else "fallback"


def fallback_reason(runtime: Mapping[str, Any]) -> str:
    reason = runtime.get("fallback_reason") or runtime.get("error")
    return str(reason) if reason else NO_REASON


def outcomes_of_traces(traces: Iterable[Any]) -> OutcomeCounts:
    """The counts over turns' traces (each the whole ``Turn.trace``), in Python."""
    seen: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    errors = shadow_handled = actions = 0
    for trace in traces:
        runtime = trace.get("runtime") if isinstance(trace, Mapping) else None
        category = turn_category(runtime)
        if category is None:
            continue
        assert isinstance(runtime, Mapping)
        seen[category] += 1
        if category == "fallback":
            reasons[fallback_reason(runtime)] += 1
            errors += runtime.get("error") == RUNTIME_ERROR
        elif category == "shadow":
            shadow_handled += runtime.get("handled") is True
        if category in ("handled", "fallback"):
            actions += sum(
                1
                for a in runtime.get("actions") or ()
                if isinstance(a, Mapping)
                and a.get("tool") in ACTING_TOOLS
                and a.get("outcome") in DONE_OUTCOMES
            )
    return OutcomeCounts(
        turns=sum(seen.values()),
        handled=seen["handled"],
        fallbacks=seen["fallback"],
        errors=errors,
        skipped=seen["skipped"],
        shadow=seen["shadow"],
        shadow_handled=shadow_handled,
        actions=actions,
        reasons=_ordered(reasons),
    )


def conversation_runtime_outcomes(turns: Iterable[Turn]) -> OutcomeCounts | None:
    """One conversation's figures from its already-loaded turns (no query); None when no
    turn of it went near the runtime (the page then shows nothing)."""
    counts = outcomes_of_traces(t.trace for t in turns)
    return counts if counts.turns else None


# --- a period, in SQL -----------------------------------------------------------------------

_RT = "trace__runtime__"
_SKIPPED = Q(**{f"{_RT}skipped__isnull": False})
_LIVE = Q(**{f"{_RT}mode": RuntimeMode.ON})
_SHADOW = Q(**{f"{_RT}mode": RuntimeMode.SHADOW})
_HANDLED = Q(**{f"{_RT}handled": True})
_NOT_HANDLED = Q(**{f"{_RT}handled": False})
_FALLBACK = _LIVE & _NOT_HANDLED & ~_SKIPPED


def runtime_outcomes(
    organization_id: UUID | str,
    since: datetime,
    until: datetime,
    *,
    agent_id: UUID | str | None = None,
) -> RuntimeOutcomeReport:
    """The runtime's outcomes for turns created in ``[since, until)``: the organization's
    totals and one row per agent (busiest first). Three queries, whatever the number of
    turns; the caller's tenant context must be the organization's (pages have it).

    This is the governance metric "taxa de fallback_to_orchestrator" of the spec; the
    analytics page and ``bench/runtime.py`` read it from here."""
    turns = Turn.objects.filter(
        organization_id=organization_id,
        created_at__gte=since,
        created_at__lt=until,
        trace__has_key="runtime",
    )
    if agent_id is not None:
        turns = turns.filter(agent_version__agent_id=agent_id)
    agent = "agent_version__agent_id"
    rows = list(
        turns.values(agent, "agent_version__agent__name")
        .annotate(
            handled=Count("pk", filter=_LIVE & _HANDLED & ~_SKIPPED),
            fallbacks=Count("pk", filter=_FALLBACK),
            errors=Count("pk", filter=_FALLBACK & Q(**{f"{_RT}error": RUNTIME_ERROR})),
            skipped=Count("pk", filter=_SKIPPED),
            shadow=Count("pk", filter=_SHADOW & (_HANDLED | _NOT_HANDLED) & ~_SKIPPED),
            shadow_handled=Count("pk", filter=_SHADOW & _HANDLED & ~_SKIPPED),
        )
        .order_by(agent)
    )
    reason_rows = (
        turns.filter(_FALLBACK)
        .annotate(
            reason=KT("trace__runtime__fallback_reason"),
            error=KT("trace__runtime__error"),
        )
        .values(agent, "reason", "error")
        .annotate(n=Count("pk"))
        .order_by()
    )
    reasons: dict[Any, Counter[str]] = {}
    for r in reason_rows:
        code = r["reason"] or r["error"] or NO_REASON
        reasons.setdefault(r[agent], Counter())[str(code)] += r["n"]
    actions = _actions_by_agent(organization_id, since, until, agent_id)

    by_agent = []
    for row in rows:
        key = row[agent]
        counts = OutcomeCounts(
            turns=row["handled"] + row["fallbacks"] + row["skipped"] + row["shadow"],
            handled=row["handled"],
            fallbacks=row["fallbacks"],
            errors=row["errors"],
            skipped=row["skipped"],
            shadow=row["shadow"],
            shadow_handled=row["shadow_handled"],
            actions=actions.get(key, 0),
            reasons=_ordered(reasons.get(key, Counter())),
        )
        if counts.turns:
            name = row["agent_version__agent__name"] or ""
            by_agent.append(AgentOutcomes(agent_id=key, agent_name=name, counts=counts))
    by_agent.sort(key=lambda a: (-a.counts.turns, a.agent_name))
    return RuntimeOutcomeReport(
        organization_id=organization_id,
        since=since,
        until=until,
        total=_sum(a.counts for a in by_agent),
        by_agent=tuple(by_agent),
    )


def _actions_by_agent(
    organization_id: UUID | str,
    since: datetime,
    until: datetime,
    agent_id: UUID | str | None,
) -> dict[Any, int]:
    """Backend actions the runtime executed, per agent, from its action log."""
    rows = RuntimeAction.objects.filter(
        organization_id=organization_id,
        turn__created_at__gte=since,
        turn__created_at__lt=until,
        tool__in=ACTING_TOOLS,
        outcome__in=DONE_OUTCOMES,
    )
    if agent_id is not None:
        rows = rows.filter(turn__agent_version__agent_id=agent_id)
    key = "turn__agent_version__agent_id"
    return {r[key]: r["n"] for r in rows.values(key).annotate(n=Count("pk")).order_by()}


def _ordered(counter: Counter[str]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


# The counters a sum adds up: every field but the reasons, so a new counter is summed too.
_COUNTS = tuple(f.name for f in fields(OutcomeCounts) if f.name != "reasons")


def _sum(parts: Iterable[OutcomeCounts]) -> OutcomeCounts:
    total: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for c in parts:
        total.update({name: getattr(c, name) for name in _COUNTS})
        reasons.update(dict(c.reasons))
    return OutcomeCounts(**total, reasons=_ordered(reasons))
