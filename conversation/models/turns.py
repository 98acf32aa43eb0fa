"""Turns (one run of the pipeline) and the LLM cost ledger."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from .agents import AgentVersion
from .base import TenantModel, choice_check
from .conversations import Conversation


class TriggerKind(models.TextChoices):
    INBOUND = "inbound_message", _("Mensagem do cliente")
    CASE_REPLY = "case_reply", _("Resposta do caso")
    FOLLOW_UP = "follow_up", _("Follow-up")


class TurnStatus(models.TextChoices):
    RUNNING = "running", _("Em andamento")
    # The model was down and the agent retries later: the turn keeps its lines and its
    # place in the conversation; the sweeper re-drives it once ``lease_expires_at`` passes.
    RETRY = "retry", _("Nova tentativa agendada")
    DONE = "done", _("Concluído")
    FAILED = "failed", _("Falhou")


# A turn in one of these holds its conversation: no other turn of it is claimed meanwhile.
ACTIVE_TURN_STATUSES = (TurnStatus.RUNNING, TurnStatus.RETRY)


class TurnOutcome(models.TextChoices):
    PENDING = "", _("Pendente")
    REPLIED = "replied", _("Respondeu")
    NO_REPLY = "no_reply", _("Sem resposta")
    MERGED = "merged", _("Agrupada na próxima")
    OPTED_OUT = "opted_out", _("Descadastro")
    HUMAN_OWNED = "human_owned", _("Com humano")
    HANDOFF = "handoff", _("Transbordo")
    RUNTIME = "runtime", _("Runtime")
    # The model stayed down after the SDK's retries (and the agent's own, if it retries):
    # the customer got the short notice and the conversation went to the team.
    LLM_UNAVAILABLE = "llm_unavailable", _("Modelo indisponível")
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
    # The claim (conversation.turns.pipeline): the attempt that owns the turn now. The
    # finish commits only while ``lease_token`` is still its own; past ``lease_expires_at``
    # the attempt is presumed dead and the sweeper re-drives the turn (a new token).
    claimed_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    lease_token = models.UUIDField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["created_at"]
        indexes = [
            # The sweeper's "claimed but not finished past its lease" (a tiny partial index).
            models.Index(
                fields=["lease_expires_at"],
                condition=models.Q(status__in=[s.value for s in ACTIVE_TURN_STATUSES]),
                name="turn_active_lease",
            )
        ]
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
