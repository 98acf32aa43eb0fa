"""Agents and their immutable versions (prompt, model, runtime profile)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from .base import TenantModel, choice_check


class Agent(TenantModel):
    name = models.CharField(_("nome"), max_length=120)
    published_version = models.ForeignKey(
        "AgentVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["name"]
        verbose_name = _("agente")
        verbose_name_plural = _("agentes")

    def __str__(self) -> str:
        return self.name


class RuntimeProfile(models.TextChoices):
    NONE = "", _("Nenhum (só o orquestrador)")
    INVOICE_SUPPORT = "invoice_support", _("Atendimento de fatura")


class RuntimeMode(models.TextChoices):
    OFF = "off", _("Desligado")
    SHADOW = "shadow", _("Sombra (decide e registra; o orquestrador responde)")
    ON = "on", _("Ligado")


class LlmUnavailableAction(models.TextChoices):
    """What a turn does when the model stays down after the SDK's retries (DESIGN §10.4)."""

    HANDOFF = "handoff", _("Avisar o cliente e passar a conversa para a equipe")
    RETRY = "retry", _("Avisar o cliente e tentar de novo mais tarde (depois, a equipe)")


class ModelProvider(models.TextChoices):
    ANTHROPIC = "anthropic", "Anthropic"
    OFFLINE = "offline", _("Offline (determinístico)")


class AgentVersion(TenantModel):
    """Immutable once saved: editing an agent creates a new version (services enforce it)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    prompt = models.TextField(_("instruções"))
    provider = models.CharField(max_length=16, choices=ModelProvider.choices, default="anthropic")
    model = models.CharField(_("modelo"), max_length=80, default="claude-haiku-4-5")
    max_steps = models.PositiveSmallIntegerField(_("máximo de passos"), default=4)
    history_window = models.PositiveSmallIntegerField(_("janela de histórico"), default=20)
    handoff_keywords = models.JSONField(_("palavras de transbordo"), default=list, blank=True)
    handoff_tool_enabled = models.BooleanField(_("ferramenta de transbordo"), default=True)
    # On for new agents (DESIGN §10.3): with cases off the promise guarantee still holds,
    # but a promise of human action costs a handoff instead of a case.
    cases_enabled = models.BooleanField(_("casos humanos"), default=True)
    runtime_profile = models.CharField(
        max_length=32, choices=RuntimeProfile.choices, default="", blank=True
    )
    runtime_mode = models.CharField(max_length=8, choices=RuntimeMode.choices, default="off")
    llm_unavailable_action = models.CharField(
        _("se o modelo estiver indisponível"),
        max_length=8,
        choices=LlmUnavailableAction.choices,
        default=LlmUnavailableAction.HANDOFF,
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    class Meta:
        ordering = ["agent", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "number"], name="uniq_agent_version_number"),
            choice_check("provider", ModelProvider, "agent_version_provider_valid"),
            choice_check("runtime_profile", RuntimeProfile, "agent_version_profile_valid"),
            choice_check("runtime_mode", RuntimeMode, "agent_version_mode_valid"),
            choice_check(
                "llm_unavailable_action",
                LlmUnavailableAction,
                "agent_version_llm_unavailable_valid",
            ),
            models.CheckConstraint(condition=Q(max_steps__gte=1), name="agent_version_steps_min"),
        ]
        verbose_name = _("versão de agente")
        verbose_name_plural = _("versões de agente")

    def __str__(self) -> str:
        return f"{self.agent_id} v{self.number}"
