"""Handoffs of a conversation to the team."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from .base import TenantModel, choice_check
from .conversations import Conversation


class HandoffReason(models.TextChoices):
    REQUESTED_HUMAN = "requested_human", _("Cliente pediu atendente")
    CRITICAL_STAGE = "critical_stage", _("Etapa exige a equipe")
    LOW_CONFIDENCE = "low_confidence", _("A IA não resolveu sozinha")
    CASE_ESCALATED = "caso_escalado", _("Caso escalado")
    MANUAL = "manual", _("Assumido pela equipe")
    # The model stayed down (DESIGN §10.4): the customer is not left in silence.
    LLM_UNAVAILABLE = "llm_unavailable", _("Modelo indisponível")
    # The AI promised human action and its agent has no cases (DESIGN §10.3): the promise
    # is not sent; the conversation goes to the team instead.
    UNBACKED_PROMISE = "unbacked_promise", _("Promessa de ação humana sem caso")


class HandoffStatus(models.TextChoices):
    OPEN = "open", _("Aberto")
    RETURNED = "returned", _("Devolvido à IA")


class Handoff(TenantModel):
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="handoffs"
    )
    reason_code = models.CharField(max_length=20, choices=HandoffReason.choices)
    reason = models.TextField(blank=True)
    briefing = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=HandoffStatus.choices, default="open")
    # Set when the customer writes while a human owns the conversation ("inserted or appended").
    last_activity_at = models.DateTimeField(null=True, blank=True)
    returned_at = models.DateTimeField(null=True, blank=True)
    returned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            choice_check("reason_code", HandoffReason, "handoff_reason_valid"),
            choice_check("status", HandoffStatus, "handoff_status_valid"),
            models.UniqueConstraint(
                fields=["conversation"], condition=Q(status="open"), name="uniq_open_handoff"
            ),
        ]
        verbose_name = _("transbordo")
        verbose_name_plural = _("transbordos")

    def __str__(self) -> str:
        return f"{self.reason_code} {self.conversation_id}"
