"""Writes of the analytics app: prices, budgets and the budget's switches. Each is one
transaction with its AuditLog row. (The rollups are derived data, recomputed by the beat
from the source rows: ``rollups``, not an action anybody takes.)"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import Organization
from accounts.services import audit_log_write
from analytics import budgets
from analytics.models import BudgetSwitch, ModelPrice, SwitchLevel
from analytics.rollups import local_today
from conversation.dispatch import enqueue

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PriceInput:
    model: str
    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cache_write_per_mtok: Decimal
    cache_read_per_mtok: Decimal
    effective_date: dt.date
    source_date: dt.date
    source: str = ""


def model_price_save(
    *, organization: Organization, actor: Any, values: PriceInput, price: ModelPrice | None = None
) -> ModelPrice:
    """Create (``price`` None) or change a price row. Prices are global; the audit row goes
    to the organization of the admin who changed it."""
    with transaction.atomic():
        before = _price_dict(price) if price is not None else {}
        row = price or ModelPrice()
        for name, value in values.__dict__.items():
            setattr(row, name, value)
        row.save()
        audit_log_write(
            organization=organization,
            actor=actor,
            action="analytics.price_saved" if before else "analytics.price_created",
            resource=row,
            diff={"before": before, "after": _price_dict(row)},
        )
    return row


def model_price_delete(*, organization: Organization, actor: Any, price: ModelPrice) -> None:
    with transaction.atomic():
        audit_log_write(
            organization=organization,
            actor=actor,
            action="analytics.price_deleted",
            resource=price,
            diff={"before": _price_dict(price)},
        )
        price.delete()


def _price_dict(price: ModelPrice) -> dict[str, Any]:
    return {
        "model": price.model,
        "input_per_mtok": str(price.input_per_mtok),
        "output_per_mtok": str(price.output_per_mtok),
        "cache_write_per_mtok": str(price.cache_write_per_mtok),
        "cache_read_per_mtok": str(price.cache_read_per_mtok),
        "effective_date": str(price.effective_date),
        "source_date": str(price.source_date),
    }


def budget_set(
    *, organization: Organization, actor: Any, config: budgets.BudgetConfig | None
) -> budgets.BudgetConfig:
    """Set (or, with None, remove) the organization's budget. Raising the limit above this
    month's spend reopens the model at once (the next turn checks the new limit); that
    switch is recorded too. Locks the organization row: its settings are one JSON value."""
    config = config or budgets.BudgetConfig()
    with transaction.atomic():
        org = Organization.objects.select_for_update().get(pk=organization.pk)
        before = budgets.BudgetConfig.of(org)
        state = budgets.switch_state(org)
        if state.get("month") != budgets.month_key(local_today()):
            state = {}  # a past month's switch: this month's spend starts from nothing
        data = dict(org.settings or {})
        data["budget"] = {**config.as_settings(), "state": state}
        org.settings = data
        org.save(update_fields=["settings"])
        organization.settings = data
        audit_log_write(
            actor=actor,
            action="analytics.budget_set",
            resource=org,
            diff={"before": before.as_settings(), "after": config.as_settings()},
        )
        limit = config.monthly_limit_usd
        if state.get("level") and limit != before.monthly_limit_usd:
            # A new limit: the switch state holds only while the spend is still past it.
            spend = budgets.month_spend(org.pk).total_usd
            if state["level"] == "stopped" and (limit is None or spend < limit):
                budget_switch_record(
                    organization=organization,
                    level=SwitchLevel.REOPENED,
                    limit_usd=limit or Decimal(0),
                    spend_usd=spend,
                )
            elif limit is None or spend < limit * budgets.ALERT_SHARE:
                data["budget"]["state"] = {}
                org.save(update_fields=["settings"])
    return config


def budget_switch_record(
    *, organization: Organization, level: str, limit_usd: Decimal, spend_usd: Decimal
) -> BudgetSwitch | None:
    """Record that this month's spend crossed ``level`` under ``limit_usd`` — once per month,
    level and limit (None when already recorded): the switch row, its audit row, the
    state the page banner reads, and a notice to the organization's managers. No query
    when the organization's settings already show the switch."""
    month = budgets.month_key(local_today())
    state = budgets.switch_state(organization)
    if (
        level != SwitchLevel.REOPENED
        and state.get("month") == month
        and state.get("limit_usd") == str(limit_usd)
        and (state.get("level") == level or state.get("level") == "stopped")
    ):
        return None
    try:
        with transaction.atomic():
            switch = BudgetSwitch.objects.create(
                organization_id=organization.pk,
                month=month,
                level=level,
                limit_usd=limit_usd,
                spend_usd=spend_usd,
            )
            _switch_state_write(organization, month=month, level=level, limit=limit_usd)
            audit_log_write(
                actor=None,
                actor_kind="system",
                action=f"analytics.budget_{level}",
                resource=switch,
                diff={"month": month, "limit_usd": str(limit_usd), "spend_usd": str(spend_usd)},
            )
            # The staff e-mail goes from a task once the switch commits (``notices``): the
            # turn that crossed the line never waits on a mail server.
            enqueue("analytics.send_budget_notice", str(switch.pk))
    except IntegrityError:
        # Recorded (and noticed) before this month under this limit: another turn just now,
        # or a limit lowered back to one already crossed, a second reopening. Noticed once,
        # but the banner still follows the switch.
        with transaction.atomic():
            _switch_state_write(organization, month=month, level=level, limit=limit_usd)
        return None
    log.warning(
        "budget switch",
        extra={"organization_id": str(organization.pk), "level": level, "month": month},
    )
    return switch


def _switch_state_write(
    organization: Organization, *, month: str, level: str, limit: Decimal
) -> Organization:
    """The switch state the page banner reads (``budgets.banner_state``), in the
    organization's settings. Locks the organization row: its settings are one JSON value."""
    org = Organization.objects.select_for_update().get(pk=organization.pk)
    data = dict(org.settings or {})
    budget = dict(data.get("budget") or {})
    budget["state"] = (
        {}
        if level == SwitchLevel.REOPENED
        else {"month": month, "level": level, "limit_usd": str(limit)}
    )
    data["budget"] = budget
    org.settings = data
    org.save(update_fields=["settings"])
    organization.settings = data
    return org
