"""Analytics pages: outcomes (with CSV), prices, the budget, and the conversation's cost
fragment. Managers read; admins edit prices and budgets. Thin: parse, authorize, call
one selector or service, render."""

from __future__ import annotations

import csv
import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from accounts.access import access, role_required
from analytics import budgets, selectors, services
from analytics.forms import BudgetForm, PeriodForm
from analytics.models import BudgetSwitch, ModelPrice
from analytics.templatetags.analytics_format import usd
from conversation.models import Agent, ChannelSession, Conversation
from conversation.views._common import PageRequest
from conversation.views.trace_words import label_calls
from routers.charts import Chart, stacked_bars


@dataclass(frozen=True)
class ChartView:
    """A chart with each bar's tooltip text made here: hundreds of bars, one date filter
    each in the template, were a third of the page's time."""

    chart: Chart
    bars: tuple[tuple[float, float, float, float, str, str], ...]

    @classmethod
    def of(cls, chart: Chart, titles: dict[dt.date, str] | None = None) -> ChartView:
        """``titles``: a day's tooltip text instead of the bar's count (the money)."""
        bars = tuple(
            (
                b.x,
                b.y,
                b.width,
                b.height,
                b.color,
                f"{b.day:%d/%m} · {b.label}: {(titles or {}).get(b.day, b.count)}",
            )
            for b in chart.bars
        )
        return cls(chart=chart, bars=bars)


def cost_chart(
    days: Sequence[dt.date], cost_by_day: dict[dt.date, Decimal]
) -> tuple[ChartView, str]:
    """The cost per day as bars (and the unit the axis counts in). Bars count whole units,
    so the unit follows the period's costs — dollars, cents or tenths of a cent (a month of
    haiku calls costs fractions of a cent a day: in cents they all rounded to nothing and
    the chart said there was no cost) — and a day with any cost gets a bar; each bar's
    tooltip says its exact cost."""
    top = max(cost_by_day.values(), default=Decimal(0))
    units = (
        (Decimal("1"), _("dólares")),
        (Decimal("0.01"), _("centavos de dólar")),
        (Decimal("0.001"), _("décimos de centavo de dólar")),
    )
    unit, unit_name = next(((u, n) for u, n in units if top >= 10 * u), units[-1])
    values = []
    for d in days:
        cost = cost_by_day.get(d, Decimal(0))
        n = int((cost / unit).to_integral_value(rounding=ROUND_HALF_UP))
        values.append(max(n, 1) if cost > 0 else 0)
    label = _("Custo (em %(unit)s)") % {"unit": unit_name}
    chart = stacked_bars(days, {label: values})
    titles = {d: usd(c) for d, c in cost_by_day.items()}
    return ChartView.of(chart, titles), unit_name


def _filters(request: PageRequest) -> tuple[PeriodForm, selectors.Period, dict[str, Any]]:
    org = request.membership.organization
    channels = [
        (str(pk), name)
        for pk, name in ChannelSession.objects.filter(organization=org).values_list("id", "name")
    ]
    agents = [
        (str(pk), name)
        for pk, name in Agent.objects.filter(organization=org).values_list("id", "name")
    ]
    form = PeriodForm(request.GET or None, channels=channels, agents=agents)
    first, last = form.period()
    ids = {
        "channel_id": uuid.UUID(c) if (c := form.choice("canal")) else None,
        "agent_id": uuid.UUID(a) if (a := form.choice("agente")) else None,
    }
    return form, selectors.Period(first, last), ids


def _admin_only(request: PageRequest) -> None:
    """Managers read prices and budgets; only admins change them."""
    if not request.membership.has_role("admin"):
        raise PermissionDenied


@role_required("manager")
@require_GET
def outcomes(request: PageRequest) -> HttpResponse:
    form, period, ids = _filters(request)
    data = selectors.outcomes(request.membership.organization, period, **ids)
    labels = {
        "ai_alone": _("Resolvidas pela IA"),
        "handed_off": _("Transferidas"),
        "other": _("Outras"),
    }
    days = period.days
    chart, cost_unit = cost_chart(days, data.cost_by_day)
    context = {
        "form": form,
        "data": data,
        "query": request.GET.urlencode(),
        "conversation_chart": ChartView.of(
            stacked_bars(days, {labels[k]: v for k, v in data.daily.items()})
        ),
        "cost_chart": chart,
        "cost_unit": cost_unit,
    }
    return render(request, "analytics/outcomes.html", context)


@role_required("manager")
@require_GET
def outcomes_csv(request: PageRequest) -> HttpResponse:
    _form, period, ids = _filters(request)
    data = selectors.outcomes(request.membership.organization, period, **ids)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="resultados-{period.first_day}-{period.last_day}.csv"'
    )
    writer = csv.writer(response)
    writer.writerow(["secao", "chave", "rotulo", "valor"])
    for row in csv_rows(data):
        writer.writerow([_cell(value) for value in row])
    return response


def _cell(value: str) -> str:
    """A text cell a spreadsheet would run as a formula ("=HYPERLINK(…)" as an agent's or a
    channel's name) is kept as text with a leading apostrophe (OWASP's CSV injection)."""
    if value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        try:
            Decimal(value)
        except ArithmeticError:
            return "'" + value
    return value


def csv_rows(data: selectors.Outcomes) -> list[list[str]]:
    """The page's figures as long rows: section, key, label, value."""

    def num(value: object) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:.4f}"
        if isinstance(value, Decimal):
            return f"{value:f}"  # 0.0000003, never 3E-7 (a spreadsheet reads it as text)
        return str(value)

    rows: list[list[str]] = [
        ["periodo", "de", "", str(data.period.first_day)],
        ["periodo", "ate", "", str(data.period.last_day)],
    ]
    for name in sorted(data.totals):
        rows.append(["totais", name, "", str(data.totals[name])])
    rows += [
        ["taxas", "ai_alone_share", "", num(data.ai_alone_share)],
        ["taxas", "handoff_rate", "", num(data.handoff_rate)],
        ["taxas", "route_fallback_share", "", num(data.fallback_share)],
        ["taxas", "route_local_share", "", num(data.local_share)],
        ["taxas", "runtime_fallback_rate", "", num(data.runtime_fallback_rate)],
        ["custo", "total_usd", "", num(data.cost_usd)],
        ["custo", "unpriced_calls", "", str(data.unpriced_calls)],
    ]
    for s in data.handoff_reasons:
        rows.append(["transbordo_motivo", s.key, s.label, str(s.n)])
    for s in data.routing:
        rows.append(["roteamento", s.key, s.label, str(s.n)])
    for section, dim_rows in (("canal", data.by_channel), ("agente", data.by_agent)):
        for r in dim_rows:
            for name in ("conversations", "turns", "ai_alone", "handed_off", "handoffs"):
                rows.append([section, f"{r.key}:{name}", r.label, str(getattr(r, name))])
            rows.append([section, f"{r.key}:cost_usd", r.label, num(r.cost_usd)])
    cases = data.cases
    rows += [
        ["casos", "opened", "", str(cases.opened)],
        ["casos", "resolved", "", str(cases.resolved)],
        ["casos", "escalated", "", str(cases.escalated)],
    ]
    for key, durations in (("first_answer", cases.first_answer), ("resolution", cases.resolution)):
        rows += [
            ["casos", f"{key}:n", "", str(durations.n)],
            ["casos", f"{key}:median_s", "", num(durations.median_s)],
            ["casos", f"{key}:p90_s", "", num(durations.p90_s)],
        ]
    for key, label, durations in cases.waits:
        rows += [
            ["espera", f"{key}:n", label, str(durations.n)],
            ["espera", f"{key}:median_s", label, num(durations.median_s)],
            ["espera", f"{key}:p90_s", label, num(durations.p90_s)],
        ]
    for day in sorted(data.cost_by_day):
        rows.append(["custo_dia", str(day), "", num(data.cost_by_day[day])])
    for model, calls, cost in data.cost_by_model:
        rows.append(["custo_modelo", model, str(calls), num(cost)])
    return rows


@role_required("manager")
@require_GET
def prices(request: PageRequest) -> HttpResponse:
    """The model price list, read-only: it is one list for every organization (the cost and
    the monthly budget of each are computed from it), so no tenant may change it. The
    platform's staff keep it in the Django admin (``analytics.admin``), audited."""
    return render(request, "analytics/prices.html", {"prices": ModelPrice.objects.all()})


@role_required("manager")
@require_http_methods(["GET", "POST"])
def budget(request: PageRequest) -> HttpResponse:
    org = request.membership.organization
    config = budgets.BudgetConfig.of(org)
    initial = {
        "monthly_limit_usd": config.monthly_limit_usd,
        "contact_turns_per_minute": config.contact_turns_per_minute,
        "on_limit": config.on_limit,
    }
    form = BudgetForm(request.POST or None, initial=initial)
    if request.method == "POST":
        _admin_only(request)
        if form.is_valid():
            services.budget_set(organization=org, actor=request.user, config=form.config())
            messages.success(request, _("Orçamento salvo."))
            return redirect("analytics:budget")
    spend = budgets.month_spend(org.pk)
    limit = config.monthly_limit_usd
    context = {
        "form": form,
        "config": config,
        "spend": spend,
        "share": (spend.total_usd / limit) if limit else None,
        "switches": BudgetSwitch.objects.filter(organization=org)[:12],
        "can_edit": request.membership.has_role("admin"),
    }
    return render(request, "analytics/budget.html", context)


@role_required("viewer")
@require_GET
def conversation_cost(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    conversation: Conversation = access(
        Conversation.objects.all(), request.membership, pk=conversation_id
    )
    cost = selectors.conversation_cost(conversation)
    label_calls(c.call for c in cost.calls)  # "resposta ao cliente", not "orchestrator"
    context = {"conversation": conversation, "cost": cost, "today": timezone.localdate()}
    return render(request, "analytics/_conversation_cost.html", context)
