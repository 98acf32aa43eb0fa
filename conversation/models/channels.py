"""WhatsApp numbers connected through a provider."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.encryption import EncryptedTextField

from .base import TenantModel, choice_check


class Provider(models.TextChoices):
    WAHA = "waha", "WAHA"
    META = "meta", "Meta Cloud API"
    SIMULATOR = "simulator", _("Simulador")


class BreakerState(models.TextChoices):
    """The channel's delivery circuit breaker (conversation.outbox.breaker)."""

    CLOSED = "closed", _("Normal")
    OPEN = "open", _("Pausado (provedor falhando)")
    HALF_OPEN = "half_open", _("Testando o provedor")


class ChannelSession(TenantModel):
    """A WhatsApp number connected through a provider."""

    name = models.CharField(_("nome"), max_length=120)
    provider = models.CharField(_("provedor"), max_length=16, choices=Provider.choices)
    external_id = models.CharField(
        _("identificador no provedor"),
        max_length=120,
        blank=True,
        help_text=_("Meta: phone_number_id. WAHA: nome da sessão."),
    )
    phone_number = models.CharField(_("número"), max_length=32, blank=True)
    # Meta: the WhatsApp Business Account the number belongs to (templates live there).
    business_account_id = models.CharField(
        _("ID da conta do WhatsApp Business"), max_length=64, blank=True
    )
    api_base_url = models.URLField(_("URL da API"), blank=True)
    # Secrets, encrypted at rest (accounts.encryption); no page renders them back.
    # WAHA: the X-Api-Key. Meta: the system user's access token.
    api_token = EncryptedTextField(_("token da API"), blank=True)
    # WAHA: the HMAC key of the session webhook (generated here). Meta: the app secret.
    webhook_secret = EncryptedTextField(_("segredo do webhook"), blank=True)
    # Meta's GET subscription handshake answers only to this token (distinct from the app
    # secret that signs the POSTs).
    webhook_verify_token = EncryptedTextField(_("token de verificação do webhook"), blank=True)
    # Approved WhatsApp templates: [{"name", "language", "purpose"}] (purpose: follow_up, ...).
    templates = models.JSONField(default=list, blank=True)
    agent = models.ForeignKey(
        "Agent",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="channels",
        verbose_name=_("agente do canal"),
    )
    is_active = models.BooleanField(_("ativo"), default=True)
    # The delivery circuit breaker, shared by every worker through this row: consecutive
    # retryable provider failures, and until when it stays open (open: the cool-down's end;
    # half-open: the probe's lease).
    breaker_state = models.CharField(
        max_length=16, choices=BreakerState.choices, default=BreakerState.CLOSED
    )
    breaker_failures = models.PositiveIntegerField(default=0)
    breaker_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            choice_check("provider", Provider, "channel_provider_valid"),
            choice_check("breaker_state", BreakerState, "channel_breaker_state_valid"),
        ]
        verbose_name = _("canal")
        verbose_name_plural = _("canais")

    def __str__(self) -> str:
        return self.name

    def template_for(self, purpose: str) -> str:
        """The name of the first approved template for ``purpose`` (``"follow_up"``,
        ``"case_notice"``, ...), or "" when the channel has none. The one lookup of
        ``templates``: malformed entries and blank names are skipped."""
        for entry in self.templates or []:
            if isinstance(entry, dict) and entry.get("purpose") == purpose:
                name = str(entry.get("name") or "").strip()
                if name:
                    return name
        return ""
