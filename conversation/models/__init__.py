"""Channels, agents and versions, contacts, conversations, messages, turns, the LLM
ledger, handoffs and the knowledge base. Every table carries ``organization``."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from accounts.models import Organization

# "Silenced with no end" (human-cases §7: bot_silenced_until = infinity).
SILENCED_FOREVER = datetime(9999, 12, 31, tzinfo=UTC)


def choice_check(
    field: str, choices: type[models.TextChoices], name: str
) -> models.CheckConstraint:
    return models.CheckConstraint(condition=Q(**{f"{field}__in": choices.values}), name=name)


class TenantModel(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


class Provider(models.TextChoices):
    WAHA = "waha", "WAHA"
    META = "meta", "Meta Cloud API"
    SIMULATOR = "simulator", _("Simulador")


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
    api_base_url = models.URLField(_("URL da API"), blank=True)
    api_token = models.CharField(_("token da API"), max_length=500, blank=True)
    webhook_secret = models.CharField(_("segredo do webhook"), max_length=200, blank=True)
    # Meta's GET subscription handshake answers only to this token (distinct from the app
    # secret that signs the POSTs).
    webhook_verify_token = models.CharField(
        _("token de verificação do webhook"), max_length=200, blank=True
    )
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

    class Meta:
        ordering = ["name"]
        constraints = [choice_check("provider", Provider, "channel_provider_valid")]
        verbose_name = _("canal")
        verbose_name_plural = _("canais")

    def __str__(self) -> str:
        return self.name


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
    cases_enabled = models.BooleanField(_("casos humanos"), default=False)
    runtime_profile = models.CharField(
        max_length=32, choices=RuntimeProfile.choices, default="", blank=True
    )
    runtime_mode = models.CharField(max_length=8, choices=RuntimeMode.choices, default="off")
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
            models.CheckConstraint(condition=Q(max_steps__gte=1), name="agent_version_steps_min"),
        ]
        verbose_name = _("versão de agente")
        verbose_name_plural = _("versões de agente")

    def __str__(self) -> str:
        return f"{self.agent_id} v{self.number}"


class Contact(TenantModel):
    phone = models.CharField(_("telefone"), max_length=64)  # E.164 digits or a WhatsApp @lid id
    name = models.CharField(_("nome"), max_length=120, blank=True)
    force_human = models.BooleanField(_("só humano"), default=False)
    opted_out_at = models.DateTimeField(_("descadastrado em"), null=True, blank=True)

    class Meta:
        ordering = ["name", "phone"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "phone"], name="uniq_contact_phone")
        ]
        verbose_name = _("contato")
        verbose_name_plural = _("contatos")

    def __str__(self) -> str:
        return self.name or self.phone


class ConversationStatus(models.TextChoices):
    AI_HANDLING = "ai_handling", _("Com a IA")
    PENDING = "pending", _("Com humano")
    CLOSED = "closed", _("Encerrada")


class Conversation(TenantModel):
    channel = models.ForeignKey(ChannelSession, on_delete=models.CASCADE)
    contact = models.ForeignKey(Contact, on_delete=models.CASCADE, related_name="conversations")
    status = models.CharField(
        max_length=16, choices=ConversationStatus.choices, default=ConversationStatus.AI_HANDLING
    )
    bot_silenced_until = models.DateTimeField(null=True, blank=True)
    # Router stickiness (intent-router Task 1).
    active_agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    active_intent = models.CharField(max_length=120, blank=True)
    active_agent_set_at = models.DateTimeField(null=True, blank=True)
    # Serialized ConversationRuntime state (conversation.runtime.serialization).
    runtime_state = models.JSONField(null=True, blank=True)
    last_inbound_at = models.DateTimeField(null=True, blank=True)
    last_message_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-last_message_at"]
        constraints = [
            choice_check("status", ConversationStatus, "conversation_status_valid"),
            # One open conversation per contact and channel.
            models.UniqueConstraint(
                fields=["channel", "contact"],
                condition=~Q(status="closed"),
                name="uniq_open_conversation",
            ),
        ]
        indexes = [models.Index(fields=["organization", "-last_message_at"], name="conv_org_last")]
        verbose_name = _("conversa")
        verbose_name_plural = _("conversas")

    def __str__(self) -> str:
        return f"{self.contact_id} @ {self.channel_id}"


class Direction(models.TextChoices):
    INBOUND = "inbound", _("Recebida")
    OUTBOUND = "outbound", _("Enviada")


class SenderKind(models.TextChoices):
    CUSTOMER = "customer", _("Cliente")
    AI = "ai", _("IA")
    HUMAN = "human", _("Humano")
    SYSTEM = "system", _("Sistema")


class MessageStatus(models.TextChoices):
    RECEIVED = "received", _("Recebida")
    QUEUED = "queued", _("Na fila")
    SENDING = "sending", _("Enviando")
    SENT = "sent", _("Enviada")
    DELIVERED = "delivered", _("Entregue")
    READ = "read", _("Lida")
    FAILED = "failed", _("Falhou")
    REFUSED = "refused", _("Recusada")


class Message(TenantModel):
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    channel = models.ForeignKey(ChannelSession, on_delete=models.CASCADE, related_name="+")
    direction = models.CharField(max_length=8, choices=Direction.choices)
    sender_kind = models.CharField(max_length=8, choices=SenderKind.choices)
    body = models.TextField(blank=True)
    kind = models.CharField(max_length=16, default="text")
    provider_message_id = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=MessageStatus.choices)
    error_code = models.CharField(max_length=64, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # The turn that answered this inbound message, or that produced this outbound one.
    turn = models.ForeignKey(
        "Turn", null=True, blank=True, on_delete=models.SET_NULL, related_name="messages"
    )
    template_name = models.CharField(max_length=120, blank=True)
    # Which canonical script (and catalog version) composed this text, when one did.
    script_id = models.CharField(max_length=80, blank=True)
    script_version = models.CharField(max_length=40, blank=True)
    sent_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            choice_check("direction", Direction, "message_direction_valid"),
            choice_check("sender_kind", SenderKind, "message_sender_valid"),
            choice_check("status", MessageStatus, "message_status_valid"),
            # A redelivered webhook (same provider id on the same channel) stores nothing new.
            models.UniqueConstraint(
                fields=["channel", "provider_message_id"],
                condition=~Q(provider_message_id=""),
                name="uniq_provider_message",
            ),
        ]
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="msg_conv_created"),
            models.Index(fields=["status"], name="msg_status", condition=Q(status="queued")),
        ]
        verbose_name = _("mensagem")
        verbose_name_plural = _("mensagens")

    def __str__(self) -> str:
        return f"{self.direction} {self.id}"


class TriggerKind(models.TextChoices):
    INBOUND = "inbound_message", _("Mensagem do cliente")
    CASE_REPLY = "case_reply", _("Resposta do caso")
    FOLLOW_UP = "follow_up", _("Follow-up")


class TurnStatus(models.TextChoices):
    RUNNING = "running", _("Em andamento")
    DONE = "done", _("Concluído")
    FAILED = "failed", _("Falhou")


class TurnOutcome(models.TextChoices):
    PENDING = "", _("Pendente")
    REPLIED = "replied", _("Respondeu")
    NO_REPLY = "no_reply", _("Sem resposta")
    MERGED = "merged", _("Agrupada na próxima")
    OPTED_OUT = "opted_out", _("Descadastro")
    HUMAN_OWNED = "human_owned", _("Com humano")
    HANDOFF = "handoff", _("Transbordo")
    RUNTIME = "runtime", _("Runtime")
    ERROR = "error", _("Erro")


class Turn(TenantModel):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns")
    trigger_kind = models.CharField(max_length=20, choices=TriggerKind.choices)
    trigger_key = models.CharField(max_length=80)
    status = models.CharField(max_length=8, choices=TurnStatus.choices, default="running")
    outcome = models.CharField(max_length=16, choices=TurnOutcome.choices, default="", blank=True)
    agent_version = models.ForeignKey(
        AgentVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # The decision trace: ids, codes and steps — never the customer's text.
    trace = models.JSONField(default=dict, blank=True)
    error_code = models.CharField(max_length=64, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["trigger_kind", "trigger_key"], name="uniq_turn_trigger"
            ),
            choice_check("trigger_kind", TriggerKind, "turn_trigger_valid"),
            choice_check("status", TurnStatus, "turn_status_valid"),
            choice_check("outcome", TurnOutcome, "turn_outcome_valid"),
        ]
        verbose_name = _("turno")
        verbose_name_plural = _("turnos")

    def __str__(self) -> str:
        return f"{self.trigger_kind}:{self.trigger_key}"


class LlmCall(TenantModel):
    """The cost ledger: one row per model call, success or failure."""

    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_calls"
    )
    turn = models.ForeignKey(
        Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_calls"
    )
    purpose = models.CharField(max_length=60)
    provider = models.CharField(max_length=16)
    model = models.CharField(max_length=80)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cache_read_tokens = models.PositiveIntegerField(default=0)
    cache_creation_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    error_code = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["organization", "created_at"], name="llmcall_org_created")]
        verbose_name = _("chamada de modelo")
        verbose_name_plural = _("chamadas de modelo")

    def __str__(self) -> str:
        return f"{self.purpose} {self.model}"


class HandoffReason(models.TextChoices):
    REQUESTED_HUMAN = "requested_human", _("Cliente pediu atendente")
    CRITICAL_STAGE = "critical_stage", _("Etapa exige a equipe")
    LOW_CONFIDENCE = "low_confidence", _("A IA não resolveu sozinha")
    CASE_ESCALATED = "caso_escalado", _("Caso escalado")
    MANUAL = "manual", _("Assumido pela equipe")


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


class KnowledgeDocument(TenantModel):
    title = models.CharField(_("título"), max_length=200)
    body = models.TextField(_("conteúdo"))
    is_active = models.BooleanField(_("ativo"), default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title"]
        verbose_name = _("documento")
        verbose_name_plural = _("base de conhecimento")

    def __str__(self) -> str:
        return self.title


# --- the conversation runtime's shell (conversation/runtime_shell) -------------------------


class DemoInvoice(TenantModel):
    """An invoice of the demo billing system, per contact; the row without a contact is the
    organization's default (any customer without an invoice of their own gets it)."""

    contact = models.ForeignKey(
        Contact, null=True, blank=True, on_delete=models.CASCADE, related_name="demo_invoices"
    )
    # invoice_detail as the runtime reads it: {"Fatura Resumo": {...}, "<msisdn>": {...}}.
    detail = models.JSONField(_("fatura"))
    updated_at = models.DateTimeField(auto_now=True)

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
