"""Budgets that hold: a monthly spend limit and a per-contact turn rate, per organization.

The configuration lives in ``Organization.settings["budget"]`` (like ``settings["llm"]``):
the turn and every page already load the organization, so an organization without a
budget pays no query for it, and the page banner reads the switch state from there too::

    {"monthly_limit_usd": "50.00", "contact_turns_per_minute": 20, "on_limit": "offline",
     "state": {"month": "2026-12", "level": "alert" | "stopped"}}

``turn_stop`` is the check the turn path runs before it decides (``conversation.turns
.budget``): past 100 % of the month's limit, or past the contact's rate, the turn does not
call the model — it runs on the offline (deterministic) model or hands off, as configured.
Crossing 80 % and 100 % records a ``BudgetSwitch`` (audited, noticed to the staff) once per
month and limit. The month turning or an admin raising the limit reopens the model: the
check compares the live spend with the current limit every turn, so nothing needs resetting.
A spend back under the limit for another reason (the platform corrected a price) reopens it
too, and that turn records the switch, so the page banner never says "stopped" while the
model answers.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from django.utils import timezone

from accounts.models import Organization
from analytics import rollups
from analytics.prices import ZERO, PriceBook
from conversation.models import Conversation, TriggerKind, Turn

OnLimit = Literal["offline", "handoff"]
ON_LIMIT_CHOICES: tuple[OnLimit, ...] = ("offline", "handoff")
ALERT_SHARE = Decimal("0.8")
RATE_WINDOW = dt.timedelta(seconds=60)


@dataclass(frozen=True)
class BudgetConfig:
    monthly_limit_usd: Decimal | None = None
    contact_turns_per_minute: int | None = None
    on_limit: OnLimit = "offline"

    @property
    def configured(self) -> bool:
        return self.monthly_limit_usd is not None or self.contact_turns_per_minute is not None

    @classmethod
    def of(cls, organization: Organization) -> BudgetConfig:
        raw: dict[str, Any] = (organization.settings or {}).get("budget") or {}
        limit: Decimal | None
        try:
            limit = Decimal(str(raw["monthly_limit_usd"])) if raw.get("monthly_limit_usd") else None
        except (InvalidOperation, ValueError):
            limit = None
        rate = raw.get("contact_turns_per_minute")
        on_limit = raw.get("on_limit")
        return cls(
            monthly_limit_usd=limit,
            contact_turns_per_minute=int(rate) if rate else None,
            on_limit=on_limit if on_limit in ON_LIMIT_CHOICES else "offline",
        )

    def as_settings(self) -> dict[str, Any]:
        return {
            "monthly_limit_usd": (
                None if self.monthly_limit_usd is None else str(self.monthly_limit_usd)
            ),
            "contact_turns_per_minute": self.contact_turns_per_minute,
            "on_limit": self.on_limit,
        }


@dataclass(frozen=True)
class Spend:
    month: str
    total_usd: Decimal
    unpriced_calls: int  # calls of models with no price: neither the spend nor the limit
    unpriced_models: tuple[str, ...] = ()  # ...counts them, so the page names the models


@dataclass(frozen=True)
class Stop:
    """Why this turn does not call the model, and what it does instead."""

    reason: Literal["monthly_spend", "contact_rate"]
    path: OnLimit
    spend_usd: Decimal | None = None
    limit_usd: Decimal | None = None

    def trace(self) -> dict[str, Any]:
        data: dict[str, Any] = {"stop": self.reason, "path": self.path}
        if self.limit_usd is not None:
            data["limit_usd"] = str(self.limit_usd)
            data["spend_usd"] = str(round(self.spend_usd or ZERO, 4))
        return data


def month_key(day: dt.date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def month_spend(organization_id: uuid.UUID, *, now: dt.datetime | None = None) -> Spend:
    """The organization's spend this local month: rolled days plus the live tail (5 queries)."""
    today = rollups.local_today(now)
    agg, _ = rollups.period(organization_id, today.replace(day=1), today, usage_only=True)
    book = PriceBook.load()
    total = ZERO
    unpriced = 0
    unpriced_models: set[str] = set()
    for (day, _ch, _ag, model), v in agg.usage.items():
        cost = book.cost(model, day, rollups.usage_tokens(v))
        if cost is None:
            unpriced += v[0]
            unpriced_models.add(model)
        else:
            total += cost
    return Spend(
        month=month_key(today),
        total_usd=total,
        unpriced_calls=unpriced,
        unpriced_models=tuple(sorted(unpriced_models)),
    )


def contact_turns_last_minute(conversation: Conversation, turn: Turn, now: dt.datetime) -> int:
    """The contact's other inbound turns of the last minute (any of its conversations)."""
    return (
        Turn.objects.filter(
            organization_id=conversation.organization_id,
            conversation__contact_id=conversation.contact_id,
            trigger_kind=TriggerKind.INBOUND,
            created_at__gte=now - RATE_WINDOW,
        )
        .exclude(pk=turn.pk)
        .exclude(outcome="merged")  # lines answered by another turn: no model call of their own
        .count()
    )


@dataclass(frozen=True)
class Verdict:
    """The budget check of one turn: ``stop`` (None lets the model answer) and the level
    the month's spend has crossed (the caller records the switch: ``services``)."""

    stop: Stop | None = None
    crossed: Literal["alert", "stopped", "reopened"] | None = None
    spend_usd: Decimal | None = None
    limit_usd: Decimal | None = None


def evaluate(*, conversation: Conversation, turn: Turn, now: dt.datetime | None = None) -> Verdict:
    """No query when the organization has no budget; with one, 1 (rate) + 5 (spend)."""
    organization = conversation.organization
    config = BudgetConfig.of(organization)
    if not config.configured:
        return Verdict()
    now = now or timezone.now()
    rate = config.contact_turns_per_minute
    if (
        rate is not None
        and turn.trigger_kind == TriggerKind.INBOUND
        and contact_turns_last_minute(conversation, turn, now) >= rate
    ):
        return Verdict(stop=Stop(reason="contact_rate", path=config.on_limit))
    limit = config.monthly_limit_usd
    if limit is None:
        return Verdict()
    spend = month_spend(organization.pk, now=now).total_usd
    if spend >= limit:
        stop = Stop(reason="monthly_spend", path=config.on_limit, spend_usd=spend, limit_usd=limit)
        return Verdict(stop=stop, crossed="stopped", spend_usd=spend, limit_usd=limit)
    if banner_state(organization, rollups.local_today(now)) == "stopped":
        # Under the limit while this month's switch says stopped: the model answers again.
        return Verdict(crossed="reopened", spend_usd=spend, limit_usd=limit)
    if spend >= limit * ALERT_SHARE:
        return Verdict(crossed="alert", spend_usd=spend, limit_usd=limit)
    return Verdict(spend_usd=spend, limit_usd=limit)


def switch_state(organization: Organization) -> dict[str, Any]:
    return dict(((organization.settings or {}).get("budget") or {}).get("state") or {})


def banner_state(organization: Organization, today: dt.date) -> str | None:
    """``alert`` / ``stopped`` while this month's switch holds (no query: the settings)."""
    state = switch_state(organization)
    if state.get("month") != month_key(today):
        return None
    level = state.get("level")
    return level if level in ("alert", "stopped") else None
