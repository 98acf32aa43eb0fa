"""The knowledge base the orchestrator searches."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from .base import TimestampedTenantModel


class KnowledgeDocument(TimestampedTenantModel):
    title = models.CharField(_("título"), max_length=200)
    body = models.TextField(_("conteúdo"))
    is_active = models.BooleanField(_("ativo"), default=True)

    class Meta:
        ordering = ["title"]
        verbose_name = _("documento")
        verbose_name_plural = _("base de conhecimento")

    def __str__(self) -> str:
        return self.title
