"""Human cases (specs/human-cases.md §8): the case, its append-only timeline, the
follow-ups with the customer and the reminders to the team (rows that can be
cancelled, never fire-and-forget timers), and how the team is told (§9).

Cases and events are written only by the engine (``cases.services`` and the tasks),
never by a logged-in user's form or API payload: pages and the API call services.
Every table carries ``organization``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from conversation.models import (
    Agent,
    ChannelSession,
    Contact,
    Conversation,
    TenantModel,
    TimestampedTenantModel,
    choice_check,
)


class CaseStatus(models.TextChoices):
    AWAITING_HUMAN = "awaiting_human", _("esperando você")
    AWAITING_LEAD = "awaiting_lead", _("esperando cliente")
    RESOLVED = "resolved", _("resolvido")
    ESCALATED = "escalated", _("escalado")
    CANCELLED = "cancelled", _("cancelado")


OPEN_STATUSES = (CaseStatus.AWAITING_HUMAN, CaseStatus.AWAITING_LEAD)
CLOSED_STATUSES = (CaseStatus.RESOLVED, CaseStatus.ESCALATED, CaseStatus.CANCELLED)


class CaseSource(models.TextChoices):
    AGENT = "agent", _("Aberto pela IA")
    GUARDRAIL_AUTOFALLBACK = "guardrail_autofallback", _("Aberto pela trava de promessa")


class CaseEventKind(models.TextChoices):
    OPENED = "opened", _("Caso aberto")
    HUMAN_REPLIED = "human_replied", _("A equipe respondeu")
    LEAD_ASKED = "lead_asked", _("Cliente foi perguntado")
    LEAD_PROVIDED = "lead_provided", _("Cliente respondeu")
    LEAD_UNRESPONSIVE = "lead_unresponsive", _("Cliente sem resposta")
    # The watcher brought the case back to the team (``metadata.reason``: an AttentionReason).
    STALLED = "stalled", _("Voltou para a equipe")
    ASSIGNED = "assigned", _("Responsável alterado")
    RESOLVED = "resolved", _("Resolvido")
    ESCALATED = "escalated", _("Escalado")
    CANCELLED = "cancelled", _("Cancelado")


class ActorKind(models.TextChoices):
    AGENT = "agent", _("IA")
    HUMAN = "human", _("Equipe")
    SYSTEM = "system", _("Sistema")
    LEAD = "lead", _("Cliente")


class HumanAction(models.TextChoices):
    RESOLVED = "resolved", _("Concluí ✓")
    NEED_LEAD_INFO = "need_lead_info", _("Preciso de info do cliente")
    ESCALATE = "escalate", _("Não consigo → escalar")


class AttentionReason(models.TextChoices):
    """Why a case is back in the team's queue outside the normal path (the stale-case watcher
    and the follow-ups set it; the next answer of the team clears it)."""

    NONE = "", _("—")
    LEAD_UNRESPONSIVE = "lead_unresponsive", _("o cliente não respondeu aos follow-ups")
    LEAD_ANSWERED = "lead_answered", _("o cliente respondeu, mas a IA não devolveu a resposta")
    RELAY_NOT_DELIVERED = "relay_not_delivered", _("o cliente não recebeu a resposta da equipe")


class Case(TimestampedTenantModel):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="cases")
    # The lead is the conversation's contact; kept when the conversation is replaced.
    lead = models.ForeignKey(
        Contact, null=True, blank=True, on_delete=models.SET_NULL, related_name="cases"
    )
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="cases"
    )
    status = models.CharField(
        _("estado"), max_length=16, choices=CaseStatus.choices, default=CaseStatus.AWAITING_HUMAN
    )
    title = models.CharField(_("título"), max_length=200)
    summary = models.TextField(_("resumo"))
    blocker = models.TextField(_("bloqueio"))
    # Built by the runtime from the real conversation, never from the model's input.
    context_snapshot = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=24, choices=CaseSource.choices, default=CaseSource.AGENT)
    followup_attempts = models.PositiveSmallIntegerField(default=0)
    lead_unresponsive = models.BooleanField(_("cliente sem resposta"), default=False)
    attention = models.CharField(
        _("atenção"), max_length=24, choices=AttentionReason.choices, blank=True, default=""
    )
    # A member of the case's organization, or nobody (the team); set by ``case_assign``.
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assigned_cases",
        verbose_name=_("responsável"),
    )
    # What the team last asked the customer (need_lead_info), for follow-ups and the model.
    lead_request = models.TextField(blank=True)
    # The per-wait clock: when the current wait (for the team or the customer) began.
    waiting_since = models.DateTimeField()
    # 1 while the case is open, else 0; computed by the database from ``status``. One
    # equality the inbox's ordered index can serve (``status IN (...)`` spans two ranges and
    # forces a sort of every open case). An integer, not a boolean, so the filter is
    # ``open_flag = 1`` (SQLite cannot seek an index on a bare boolean column).
    open_flag = models.GeneratedField(
        expression=models.Case(
            models.When(status__in=[s.value for s in OPEN_STATUSES], then=models.Value(1)),
            default=models.Value(0),
        ),
        output_field=models.SmallIntegerField(),
        db_persist=True,
    )
    opened_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["waiting_since"]
        constraints = [
            choice_check("status", CaseStatus, "case_status_valid"),
            choice_check("source", CaseSource, "case_source_valid"),
            choice_check("attention", AttentionReason, "case_attention_valid"),
            # closed_at is set exactly when the case reaches a terminal state.
            models.CheckConstraint(
                condition=(
                    Q(status__in=[s.value for s in OPEN_STATUSES], closed_at__isnull=True)
                    | Q(status__in=[s.value for s in CLOSED_STATUSES], closed_at__isnull=False)
                ),
                name="case_closed_at_matches_status",
            ),
        ]
        indexes = [
            # The inbox: open cases of an organization, oldest wait first (§8.1 open_idx).
            models.Index(
                fields=["organization", "open_flag", "waiting_since", "id"], name="case_open_idx"
            ),
            models.Index(
                fields=["organization", "status", "waiting_since", "id"],
                name="case_org_status_wait",
            ),
            models.Index(
                fields=["organization", "status", "-closed_at", "id"], name="case_org_status_closed"
            ),
            models.Index(fields=["organization", "lead"], name="case_lead_idx"),
            models.Index(fields=["organization", "assigned_to"], name="case_assignee_idx"),
            models.Index(fields=["conversation", "status"], name="case_conv_status"),
        ]
        verbose_name = _("caso")
        verbose_name_plural = _("casos")

    def __str__(self) -> str:
        return self.title

    @property
    def short_id(self) -> str:
        return str(self.pk)[:8]


class AppendOnlyQuerySet(models.QuerySet["CaseEvent"]):
    """The timeline is append-only: bulk updates and deletes are refused (cascades from
    the case or the organization still work: they do not go through this queryset)."""

    def update(self, **kwargs: Any) -> int:
        raise TypeError("case events are append-only")

    def erase(self, **blanked: Any) -> int:
        """The one rewrite allowed: an LGPD erasure blanking the holder's text
        (``cases.privacy``; the database allows it only inside ``rls.erasure``)."""
        return super().update(**blanked)

    def delete(self) -> tuple[int, dict[str, int]]:
        raise TypeError("case events are append-only")


class CaseEvent(TenantModel):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=20, choices=CaseEventKind.choices)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    human_action = models.CharField(
        max_length=16, choices=HumanAction.choices, blank=True, default=""
    )
    body = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["created_at"]
        constraints = [
            choice_check("kind", CaseEventKind, "case_event_kind_valid"),
            choice_check("actor_kind", ActorKind, "case_event_actor_valid"),
            models.CheckConstraint(
                condition=Q(human_action="") | Q(human_action__in=HumanAction.values),
                name="case_event_human_action_valid",
            ),
            # A human action is recorded only on a human's event.
            models.CheckConstraint(
                condition=Q(human_action="") | Q(actor_kind="human"),
                name="case_event_human_action_only_for_humans",
            ),
        ]
        indexes = [models.Index(fields=["case", "created_at"], name="case_event_case_idx")]
        verbose_name = _("evento de caso")
        verbose_name_plural = _("eventos de caso")

    def __str__(self) -> str:
        return f"{self.kind} {self.case_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise TypeError("case events are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise TypeError("case events are append-only")


class ScheduledCheck(TenantModel):
    """A check on a case due at ``due_at``: a row a sweep fires once (``fired_at``) or that
    is cancelled, never a fire-and-forget timer; sweeps read ``pending_due_index``."""

    due_at = models.DateTimeField()
    fired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["due_at"]


def pending_due_index(name: str) -> models.Index:
    return models.Index(fields=["due_at"], name=name, condition=Q(status="pending"))


class FollowUpStatus(models.TextChoices):
    PENDING = "pending", _("Agendado")
    SENT = "sent", _("Enviado")
    NOT_SENT = "not_sent", _("Não enviado (janela de 24 h fechada)")
    ANSWERED = "answered", _("Cliente respondeu; reagendado")
    FLAGGED = "flagged", _("Cliente sem resposta")
    CANCELLED = "cancelled", _("Cancelado")


class CaseFollowUp(ScheduledCheck):
    """A check on a case waiting for the customer, due at ``due_at``: nudge the customer,
    or flag ``lead_unresponsive`` once the attempts are spent (services decide)."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="follow_ups")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=10, choices=FollowUpStatus.choices, default=FollowUpStatus.PENDING
    )
    template_name = models.CharField(max_length=120, blank=True)
    cancel_reason = models.CharField(max_length=40, blank=True)

    class Meta(ScheduledCheck.Meta):
        constraints = [
            choice_check("status", FollowUpStatus, "case_follow_up_status_valid"),
            # One armed check per case at a time.
            models.UniqueConstraint(
                fields=["case"], condition=Q(status="pending"), name="uniq_pending_follow_up"
            ),
        ]
        indexes = [pending_due_index("follow_up_due")]
        verbose_name = _("follow-up de caso")
        verbose_name_plural = _("follow-ups de caso")

    def __str__(self) -> str:
        return f"follow-up {self.case_id} @ {self.due_at:%Y-%m-%d %H:%M}"


class ReminderStatus(models.TextChoices):
    PENDING = "pending", _("Agendado")
    FIRED = "fired", _("Cobrado")
    CANCELLED = "cancelled", _("Cancelado")


class CaseReminder(ScheduledCheck):
    """The stale-case watcher's reminder to the team, per wait: ``sequence`` counts
    within the wait that began at ``wait_started_at`` (the clock restarts each time
    the case comes back from the customer)."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="reminders")
    wait_started_at = models.DateTimeField()
    sequence = models.PositiveSmallIntegerField()
    status = models.CharField(
        max_length=10, choices=ReminderStatus.choices, default=ReminderStatus.PENDING
    )

    class Meta(ScheduledCheck.Meta):
        constraints = [
            choice_check("status", ReminderStatus, "case_reminder_status_valid"),
            models.UniqueConstraint(
                fields=["case", "wait_started_at", "sequence"], name="uniq_case_reminder"
            ),
        ]
        indexes = [pending_due_index("reminder_due")]
        verbose_name = _("lembrete de caso")
        verbose_name_plural = _("lembretes de caso")

    def __str__(self) -> str:
        return f"reminder {self.case_id} #{self.sequence}"


class CaseNotificationSettings(TimestampedTenantModel):
    """How the organization's team is told about cases (one row per organization;
    a missing row means the defaults)."""

    reminders_enabled = models.BooleanField(_("cobrar casos parados"), default=True)
    reminder_after_hours = models.PositiveSmallIntegerField(
        _("cobrar depois de (horas)"), default=24
    )
    reminder_count = models.PositiveSmallIntegerField(_("quantidade de cobranças"), default=3)
    # On by default: the notice goes out as soon as the team's number and channel are set.
    whatsapp_enabled = models.BooleanField(_("avisar no WhatsApp da equipe"), default=True)
    whatsapp_phone = models.CharField(_("número da equipe"), max_length=32, blank=True)
    whatsapp_channel = models.ForeignKey(
        ChannelSession,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("canal que envia o aviso"),
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization"], name="uniq_case_notify_org"),
            models.CheckConstraint(
                condition=Q(reminder_after_hours__gte=1, reminder_after_hours__lte=720),
                name="case_notify_hours_range",
            ),
            models.CheckConstraint(
                condition=Q(reminder_count__gte=1, reminder_count__lte=10),
                name="case_notify_count_range",
            ),
        ]
        verbose_name = _("avisos de casos")
        verbose_name_plural = _("avisos de casos")

    def __str__(self) -> str:
        return f"case notifications {self.organization_id}"


class NoticeKind(models.TextChoices):
    CASE_OPENED = "case_opened", _("Caso aberto")
    LEAD_PROVIDED = "lead_provided", _("Cliente respondeu")
    BACK_TO_TEAM = "back_to_team", _("Voltou para a equipe")


class NoticeStatus(models.TextChoices):
    PENDING = "pending", _("Pendente")
    SENT = "sent", _("Enviado")
    FAILED = "failed", _("Falhou")
    SKIPPED = "skipped", _("Não enviado")


class CaseNotice(TenantModel):
    """One WhatsApp notice to the team per case event (unique ``event``)."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="notices")
    event = models.OneToOneField(CaseEvent, on_delete=models.CASCADE, related_name="notice")
    kind = models.CharField(max_length=16, choices=NoticeKind.choices)
    phone = models.CharField(max_length=32, blank=True)
    channel = models.ForeignKey(
        ChannelSession, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(
        max_length=10, choices=NoticeStatus.choices, default=NoticeStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.CharField(max_length=64, blank=True)
    provider_message_id = models.CharField(max_length=200, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            choice_check("kind", NoticeKind, "case_notice_kind_valid"),
            choice_check("status", NoticeStatus, "case_notice_status_valid"),
        ]
        verbose_name = _("aviso de caso")
        verbose_name_plural = _("avisos de caso enviados")

    def __str__(self) -> str:
        return f"{self.kind} {self.case_id}"


class CaseNoticeAttempt(TenantModel):
    """Every delivery attempt of a notice, successful or not."""

    notice = models.ForeignKey(CaseNotice, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveSmallIntegerField()
    outcome = models.CharField(max_length=10, choices=NoticeStatus.choices)
    error_code = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            choice_check("outcome", NoticeStatus, "case_notice_attempt_outcome_valid"),
            models.UniqueConstraint(fields=["notice", "number"], name="uniq_notice_attempt"),
        ]
        verbose_name = _("tentativa de aviso")
        verbose_name_plural = _("tentativas de aviso")

    def __str__(self) -> str:
        return f"{self.notice_id} #{self.number} {self.outcome}"


class StaffNumber(TenantModel):
    """A member's own WhatsApp number: a message from it answers cases (§9, "responder pelo
    WhatsApp") as that member, with the member's role. Never a customer's conversation."""

    membership = models.OneToOneField(
        "accounts.Membership", on_delete=models.CASCADE, related_name="staff_number"
    )
    phone = models.CharField(_("número no WhatsApp"), max_length=32)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "phone"], name="uniq_staff_phone_org"),
        ]
        verbose_name = _("número da equipe")
        verbose_name_plural = _("números da equipe")

    def __str__(self) -> str:
        return f"{self.phone} ({self.membership_id})"
