"""Prices, daily rollups and budget switches.

- ``ModelPrice`` is global (list prices are the same for every organization): one row per
  model and effective date; the price of a call is the newest row of its model in effect on
  the call's day.
- ``DailyOutcome`` / ``DailyUsage`` are rollups of one local day per (channel, agent), kept
  by the beat task ``analytics.roll_up`` (``rollups``); ``RollupState`` says up to when
  they counted, so readers add the rows since then live.
- ``BudgetSwitch`` records each switch of an organization's budget (alert at 80 %, stop at
  100 %, reopened) once per month and limit.
"""

from __future__ import annotations

import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.models import Organization
from conversation.models import Agent, ChannelSession
from conversation.models.base import choice_check


class ModelPrice(models.Model):
    """US$ per million tokens of one model from ``effective_date`` on."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # A model name, or a prefix of one: "claude-haiku-4-5" prices "claude-haiku-4-5-20251001".
    model = models.CharField(_("modelo"), max_length=80)
    input_per_mtok = models.DecimalField(_("entrada"), max_digits=10, decimal_places=4)
    output_per_mtok = models.DecimalField(_("saída"), max_digits=10, decimal_places=4)
    cache_write_per_mtok = models.DecimalField(
        _("escrita em cache"), max_digits=10, decimal_places=4
    )
    cache_read_per_mtok = models.DecimalField(
        _("leitura de cache"), max_digits=10, decimal_places=4
    )
    effective_date = models.DateField(_("vale a partir de"))
    # When the price was read from the provider's list, and where.
    source_date = models.DateField(_("data da fonte"))
    source = models.CharField(_("fonte"), max_length=200, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["model", "-effective_date"]
        constraints = [
            models.UniqueConstraint(fields=["model", "effective_date"], name="uniq_price_model_day")
        ]
        verbose_name = _("preço de modelo")
        verbose_name_plural = _("preços de modelos")

    def __str__(self) -> str:
        return f"{self.model} ({self.effective_date})"


class DailySlice(models.Model):
    """One local day of one organization, channel and agent: what a rollup row counts."""

    id = models.BigAutoField(primary_key=True)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE)
    day = models.DateField()
    channel = models.ForeignKey(
        ChannelSession, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta:
        abstract = True


class DailyOutcome(DailySlice):
    """Counters of one local day, one channel and one agent (``counts``: name → int)."""

    counts = models.JSONField(default=dict)

    class Meta:
        indexes = [models.Index(fields=["organization", "day"], name="dailyoutcome_org_day")]
        verbose_name = _("resultado diário")
        verbose_name_plural = _("resultados diários")

    def __str__(self) -> str:
        return f"{self.day} {self.channel_id} {self.agent_id}"


class DailyUsage(DailySlice):
    """Model calls of one local day, channel, agent and model: the cost ledger rolled up."""

    model = models.CharField(max_length=80)
    calls = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_creation_tokens = models.BigIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["organization", "day"], name="dailyusage_org_day")]
        verbose_name = _("uso diário de modelo")
        verbose_name_plural = _("uso diário de modelos")

    def __str__(self) -> str:
        return f"{self.day} {self.model}"


class RollupState(models.Model):
    """How far an organization's rollups go: they count every row created before
    ``rolled_at`` (readers count the rows since live); the days before ``final_before``
    had ended when they were rolled."""

    id = models.BigAutoField(primary_key=True)
    organization = models.OneToOneField(Organization, on_delete=models.CASCADE)
    final_before = models.DateField()
    rolled_at = models.DateTimeField()

    class Meta:
        verbose_name = _("estado dos consolidados")
        verbose_name_plural = _("estados dos consolidados")

    def __str__(self) -> str:
        return f"{self.organization_id} < {self.final_before}"


class SwitchLevel(models.TextChoices):
    ALERT = "alert", _("Alerta: 80% do limite")
    STOPPED = "stopped", _("Limite atingido: modelo parado")
    REOPENED = "reopened", _("Limite elevado: modelo liberado")


class BudgetSwitch(models.Model):
    """One switch of the monthly budget; unique per month, level and limit, so a switch is
    recorded (and audited, and noticed) once however many turns cross it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE)
    month = models.CharField(max_length=7)  # "2026-12", local time
    level = models.CharField(max_length=10, choices=SwitchLevel.choices)
    limit_usd = models.DecimalField(max_digits=12, decimal_places=2)
    spend_usd = models.DecimalField(max_digits=14, decimal_places=6)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            choice_check("level", SwitchLevel, "budget_switch_level_valid"),
            models.UniqueConstraint(
                fields=["organization", "month", "level", "limit_usd"], name="uniq_budget_switch"
            ),
        ]
        verbose_name = _("mudança de orçamento")
        verbose_name_plural = _("mudanças de orçamento")

    def __str__(self) -> str:
        return f"{self.month} {self.level}"
