"""Forms of the analytics pages: they only turn input into values for a service."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from analytics.budgets import BudgetConfig

MAX_PERIOD_DAYS = 366
_EARLIEST = dt.date(2000, 1, 1)
_LATEST = dt.date(9998, 12, 31)


class PeriodForm(forms.Form):
    """The outcomes page's filters (GET). Missing or invalid: the last 30 days."""

    de = forms.DateField(
        label=_("De"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    ate = forms.DateField(
        label=_("Até"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    canal = forms.ChoiceField(label=_("Canal"), required=False)
    agente = forms.ChoiceField(label=_("Agente"), required=False)

    def __init__(
        self,
        data: object,
        *,
        channels: list[tuple[str, str]],
        agents: list[tuple[str, str]],
    ) -> None:
        super().__init__(data)  # type: ignore[arg-type]
        every = [("", _("Todos"))]
        self.fields["canal"].choices = every + channels  # type: ignore[attr-defined]
        self.fields["agente"].choices = every + agents  # type: ignore[attr-defined]

    def period(self) -> tuple[dt.date, dt.date]:
        today = timezone.localdate()
        first, last = today - dt.timedelta(days=29), today
        # The dates as typed even when another filter is not valid (a channel since removed,
        # in a saved link): the page shows the period its header and its form say.
        if self.is_bound:
            self.is_valid()
            first = self.cleaned_data.get("de") or first
            last = self.cleaned_data.get("ate") or last
        if first > last:
            first, last = last, first
        # Inside the years a period can span either way ("0001-01-01", "9999-12-31" or a
        # half-typed year would overflow the date arithmetic below and in the rollups).
        first, last = max(first, _EARLIEST), min(last, _LATEST)
        last = max(last, first)
        first = max(first, last - dt.timedelta(days=MAX_PERIOD_DAYS - 1))
        return first, last

    def choice(self, name: str) -> str:
        return str(self.cleaned_data.get(name) or "") if self.is_valid() else ""


class BudgetForm(forms.Form):
    monthly_limit_usd = forms.DecimalField(
        label=_("Limite mensal (US$)"),
        required=False,
        min_value=Decimal("0.01"),
        max_digits=12,
        decimal_places=2,
        help_text=_("Vazio: sem limite."),
    )
    contact_turns_per_minute = forms.IntegerField(
        label=_("Turnos por minuto por contato"),
        required=False,
        min_value=1,
        max_value=1000,
        help_text=_("Acima disso, as mensagens do contato não chamam o modelo. Vazio: sem limite."),
    )
    on_limit = forms.ChoiceField(
        label=_("No limite"),
        choices=[
            ("offline", _("Responder com o modelo offline (determinístico)")),
            ("handoff", _("Transferir para a equipe")),
        ],
    )

    def config(self) -> BudgetConfig:
        data = self.cleaned_data
        return BudgetConfig(
            monthly_limit_usd=data.get("monthly_limit_usd"),
            contact_turns_per_minute=data.get("contact_turns_per_minute"),
            on_limit=data["on_limit"],
        )
