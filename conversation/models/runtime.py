"""The conversation runtime's adapters (``conversation/runtime_adapters``): the demo
billing system's invoices and the audit log of the actions the runtime executed."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from .base import TenantModel, TimestampedTenantModel, choice_check
from .conversations import Contact, Conversation
from .turns import Turn


class DemoInvoice(TimestampedTenantModel):
    """An invoice of the demo billing system, per contact; the row without a contact is the
    organization's default (any customer without an invoice of their own gets it)."""

    contact = models.ForeignKey(
        Contact, null=True, blank=True, on_delete=models.CASCADE, related_name="demo_invoices"
    )
    # invoice_detail as the runtime reads it: {"Fatura Resumo": {...}, "<msisdn>": {...}}.
    detail = models.JSONField(_("fatura"))

    class Meta:
        ordering = ["organization", "contact"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "contact"],
                condition=Q(contact__isnull=False),
                name="uniq_demo_invoice_contact",
            ),
            models.UniqueConstraint(
                fields=["organization"],
                condition=Q(contact__isnull=True),
                name="uniq_demo_invoice_default",
            ),
        ]
        verbose_name = _("fatura de demonstração")
        verbose_name_plural = _("faturas de demonstração")

    def __str__(self) -> str:
        return f"{self.contact_id or 'padrão'} @ {self.organization_id}"


class RuntimeActionTool(models.TextChoices):
    CANCEL_SINGLE = "cancelar_vas_single", _("Cancelamento avulso")
    STRATEGIC = "vas_strategic", _("Parceiro estratégico")
    PRO_RATA = "pro_rata", _("Pro rata")
    RESUME = "resume_workflow", _("Retomada de fluxo")


class RuntimeActionOutcome(models.TextChoices):
    SUCCESS = "success", _("Sucesso")
    NO_MATCH = "no_match", _("Não encontrado")
    FAILURE = "failure", _("Falha")
    PARTIAL = "partial", _("Parcial")


class RuntimeAction(TenantModel):
    """One backend action the runtime executed (the audit log of the action queue)."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="runtime_actions"
    )
    turn = models.ForeignKey(
        Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="runtime_actions"
    )
    backend = models.CharField(max_length=16)  # demo | http
    tool = models.CharField(max_length=32, choices=RuntimeActionTool.choices)
    items = models.JSONField(default=list, blank=True)  # canonical invoice item names
    msisdns = models.JSONField(default=list, blank=True)
    outcome = models.CharField(max_length=16, choices=RuntimeActionOutcome.choices)
    execution_id = models.CharField(max_length=120, blank=True)
    answer = models.CharField(max_length=40, blank=True)  # resume_workflow: sim | nao | ...
    error_code = models.CharField(max_length=64, blank=True)
    # Order within the turn (rows of one turn are written together).
    sequence = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["created_at", "sequence"]
        constraints = [
            choice_check("tool", RuntimeActionTool, "runtime_action_tool_valid"),
            choice_check("outcome", RuntimeActionOutcome, "runtime_action_outcome_valid"),
        ]
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="runtime_action_conv_created")
        ]
        verbose_name = _("ação do runtime")
        verbose_name_plural = _("ações do runtime")

    def __str__(self) -> str:
        return f"{self.tool} {self.outcome}"
