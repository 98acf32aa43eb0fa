"""Contacts, conversations and their messages."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from conversation.channels import media as media_values
from conversation.channels._parsing import placeholder

from .agents import Agent
from .base import TenantModel, choice_check, unique_unless_blank
from .channels import ChannelSession


class Contact(TenantModel):
    phone = models.CharField(_("telefone"), max_length=64)  # E.164 digits or a WhatsApp @lid id
    # WhatsApp's hidden "linked id" (``123@lid``) once a payload revealed it: a message that
    # carries only the lid reaches the contact known by phone (conversation.inbound).
    whatsapp_lid = models.CharField(_("id oculto do WhatsApp"), max_length=64, blank=True)
    name = models.CharField(_("nome"), max_length=120, blank=True)
    force_human = models.BooleanField(_("só humano"), default=False)
    opted_out_at = models.DateTimeField(_("descadastrado em"), null=True, blank=True)

    class Meta:
        ordering = ["name", "phone"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "phone"], name="uniq_contact_phone"),
            unique_unless_blank("whatsapp_lid", within="organization", name="uniq_contact_lid"),
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
    # When the customer's last message ARRIVED (what "the customer answered since" means for
    # the inbox's unread mark, stalled cases and follow-ups) ...
    last_inbound_at = models.DateTimeField(null=True, blank=True)
    # ... and when they WROTE it, by the provider's clock (``channels.base.customer_wrote_at``):
    # WhatsApp's 24-hour window counts from here, so a message delivered late after a provider
    # outage does not open it from its delivery. Never moves back.
    customer_wrote_at = models.DateTimeField(null=True, blank=True)
    last_message_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # Inbox (inbox.services): who on the team answers it (null = the whole team), and who
    # resolved it last; a new customer message reopens a resolved conversation.
    assigned_to = models.ForeignKey(
        "accounts.Membership",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assigned_conversations",
        verbose_name=_("responsável"),
    )
    resolved_at = models.DateTimeField(_("resolvida em"), null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("resolvida por"),
    )

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
        indexes = [
            models.Index(fields=["organization", "-last_message_at"], name="conv_org_last"),
            models.Index(fields=["organization", "assigned_to"], name="conv_org_assignee"),
        ]
        verbose_name = _("conversa")
        verbose_name_plural = _("conversas")

    def __str__(self) -> str:
        return f"{self.contact_id} @ {self.channel_id}"

    def is_human_owned(self, now: datetime | None = None) -> bool:
        """A human owns this conversation: its contact is human-only, or the bot is silenced
        until later (a handoff silences it forever). The AI never classifies nor answers it.
        The one rule for every turn and follow-up; reads ``contact``."""
        if self.contact.force_human:
            return True
        until = self.bot_silenced_until
        return until is not None and until > (now or timezone.now())


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


# An outbound message still in the outbox's chain: waiting to go out, or going out now.
OUTBOX_IN_FLIGHT = (MessageStatus.QUEUED, MessageStatus.SENDING)


class DeliveryFailure(models.TextChoices):
    """Why an outbound message ended ``failed`` (blank while it has not)."""

    NONE = "", _("—")
    # Retryable provider failures (down, timing out, 5xx, 429) until the retry horizon:
    # re-sent automatically, in order, once the channel answers again.
    RETRY_HORIZON = "retry_horizon", _("Provedor indisponível até o limite de tentativas")
    # The provider refused this message for good (invalid number, bad request). Refusals of
    # the channel itself (its credentials, its API URL) are not: the breaker holds the channel.
    REJECTED = "rejected", _("Recusada pelo provedor")
    # The provider accepted it, then reported it failed (WAHA ack -1, Meta ``failed``).
    PROVIDER_STATUS = "provider_status", _("Provedor informou falha")


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
    # The provider id of the message this one quotes (Meta ``context.id``, WAHA ``replyTo.id``,
    # a reaction's target); null when it quotes nothing. Kept even when that message is not
    # stored here (``quoted_message`` then finds nothing).
    reply_to = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
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
    # The outbox chain (conversation.outbox). Position in the conversation's delivery order:
    # set when queued; a staff resend moves it to the tail, an automatic resend keeps it.
    queued_at = models.DateTimeField(null=True, blank=True)
    # The retry horizon of the current delivery round: retryable failures after it end
    # the message ``failed`` (``retry_horizon``).
    retry_until = models.DateTimeField(null=True, blank=True)
    # Queued: not attempted before this (backoff, or an open breaker's wake-up); null = due.
    # Sending: the delivery claim's lease; a claim past it is presumed dead and re-taken.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    failure_reason = models.CharField(
        max_length=16, choices=DeliveryFailure.choices, default="", blank=True
    )
    # Media (``kind`` says which): what the provider told us (conversation.channels.media),
    # and the file once fetched through the authenticated proxy (stored with Django's storage;
    # erased with the message's text, conversation.privacy).
    media_id = models.CharField(max_length=200, blank=True)  # Meta's media id
    media_url = models.CharField(max_length=1000, blank=True)  # WAHA's file URL; outbound: link
    media_mime = models.CharField(max_length=100, blank=True)
    media_filename = models.CharField(max_length=200, blank=True)
    media_file = models.FileField(
        upload_to="whatsapp/%Y/%m/", max_length=300, blank=True, default=""
    )
    # sha256, voice note, size, a location's latitude/longitude/label, a fetch error.
    media_meta = models.JSONField(default=dict, blank=True)
    # A template send: its own language and body parameters (``template_name`` above).
    template_language = models.CharField(max_length=16, blank=True)
    template_params = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            choice_check("direction", Direction, "message_direction_valid"),
            choice_check("sender_kind", SenderKind, "message_sender_valid"),
            choice_check("status", MessageStatus, "message_status_valid"),
            choice_check("failure_reason", DeliveryFailure, "message_failure_reason_valid"),
            # A redelivered webhook (same provider id on the same channel) stores nothing new.
            unique_unless_blank(
                "provider_message_id", within="channel", name="uniq_provider_message"
            ),
        ]
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="msg_conv_created"),
            # The turn sweeper: customer lines no turn has taken yet (conversation.sweeper).
            models.Index(
                fields=["created_at"],
                name="msg_inbound_unturned",
                condition=Q(direction="inbound", turn__isnull=True),
            ),
            models.Index(fields=["status"], name="msg_status", condition=Q(status="queued")),
            # The outbox: the head of a conversation's chain, and what waits to be re-sent.
            models.Index(
                fields=["conversation", "queued_at"],
                name="msg_outbox_chain",
                condition=Q(status__in=["queued", "sending"]),
            ),
            models.Index(
                fields=["conversation", "queued_at"],
                name="msg_outbox_resendable",
                condition=Q(status="failed", failure_reason="retry_horizon"),
            ),
        ]
        verbose_name = _("mensagem")
        verbose_name_plural = _("mensagens")

    def __str__(self) -> str:
        return f"{self.direction} {self.id}"

    @property
    def has_media_file(self) -> bool:
        """A file the media proxy can serve (inbound) or a link we sent (outbound)."""
        if self.direction == Direction.OUTBOUND:
            return bool(self.media_url or self.media_file)
        return bool(self.media_file) or media_values.has_file(
            self.kind, self.media_id, self.media_url
        )

    def quoted_message(self) -> Message | None:
        """The message of this conversation that this one quotes, when it is stored here.

        By its provider id on the same channel; a bare WhatsApp key id (WAHA's GOWS/NOWEB
        quote ``3EB0...`` where the send stored the serialized ``true_<chat>_3EB0...``) is
        also matched as that id's tail, within this conversation only."""
        if not self.reply_to:
            return None
        same = Message.objects.filter(
            organization_id=self.organization_id, channel_id=self.channel_id
        ).exclude(pk=self.pk)
        found = same.filter(provider_message_id=self.reply_to).first()
        if found is None and "_" not in self.reply_to and "@" not in self.reply_to:
            found = (
                same.filter(
                    conversation_id=self.conversation_id,
                    provider_message_id__endswith=f"_{self.reply_to}",
                )
                .order_by("-created_at")
                .first()
            )
        return found

    @property
    def kind_placeholder(self) -> str:
        """What stands for a message with no text, in pt-BR: "[documento]", "[imagem]"."""
        return placeholder(self.kind)

    @property
    def media_map_url(self) -> str:
        return media_values.map_link(self.media_meta or {}) if self.kind == "location" else ""
