from __future__ import annotations

from django.apps import AppConfig


class InboxConfig(AppConfig):
    name = "inbox"
    verbose_name = "Caixa de entrada"
