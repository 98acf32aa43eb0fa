"""The inbox's own rows: labels, internal notes, canned replies and per-member read markers.

Assignment and resolution live on ``conversation.Conversation`` itself (``assigned_to``,
``resolved_at``, ``resolved_by``): every list reads them, so they are columns, not rows here.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.models import Membership
from conversation.models import Contact, Conversation
from conversation.models.base import TenantModel, choice_check


class LabelColor(models.TextChoices):
    # A closed palette: the CSP forbids ``style=``, so each colour is a CSS class.
    GRAY = "gray", _("Cinza")
    RED = "red", _("Vermelho")
    ORANGE = "orange", _("Laranja")
    YELLOW = "yellow", _("Amarelo")
    GREEN = "green", _("Verde")
    BLUE = "blue", _("Azul")
    PURPLE = "purple", _("Roxo")


class Label(TenantModel):
    name = models.CharField(_("nome"), max_length=40)
    color = models.CharField(
        _("cor"), max_length=12, choices=LabelColor.choices, default=LabelColor.BLUE
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "name"], name="uniq_label_name"),
            choice_check("color", LabelColor, "label_color_valid"),
        ]
        verbose_name = _("etiqueta")
        verbose_name_plural = _("etiquetas")

    def __str__(self) -> str:
        return self.name


class ConversationLabel(TenantModel):
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="label_links"
    )
    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="links")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "label"], name="uniq_conversation_label"
            )
        ]
        verbose_name = _("etiqueta da conversa")
        verbose_name_plural = _("etiquetas das conversas")

    def __str__(self) -> str:
        return f"{self.label_id} @ {self.conversation_id}"


class InternalNote(TenantModel):
    """A note for the team: never sent to the customer. On a conversation (shown beside its
    timeline) or on the contact alone (``conversation`` empty, the contact profile)."""

    contact = models.ForeignKey(Contact, on_delete=models.CASCADE, related_name="notes")
    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.CASCADE, related_name="notes"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    body = models.TextField(_("nota"))

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["contact", "created_at"], name="note_contact_created")]
        verbose_name = _("nota interna")
        verbose_name_plural = _("notas internas")

    def __str__(self) -> str:
        return f"note {self.id}"


class CannedReply(TenantModel):
    """A ready answer, picked with ``/atalho`` in the reply box; ``{{nome}}``-style
    variables are filled per conversation (``inbox.canned``)."""

    shortcut = models.SlugField(_("atalho"), max_length=40)
    title = models.CharField(_("título"), max_length=80)
    body = models.TextField(_("texto"))

    class Meta:
        ordering = ["shortcut"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "shortcut"], name="uniq_canned_shortcut"
            )
        ]
        verbose_name = _("resposta pronta")
        verbose_name_plural = _("respostas prontas")

    def __str__(self) -> str:
        return f"/{self.shortcut}"


class ReadMarker(TenantModel):
    """Up to when one member has read one conversation: customer lines after ``read_at``
    are unread for that member only."""

    membership = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="read_markers"
    )
    read_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["membership", "conversation"], name="uniq_read_marker")
        ]
        verbose_name = _("marcador de leitura")
        verbose_name_plural = _("marcadores de leitura")

    def __str__(self) -> str:
        return f"{self.membership_id} read {self.conversation_id}"
